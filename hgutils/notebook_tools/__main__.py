"""``python -m hgutils.notebook_tools clean | links | pair | sync | check | lab`` (see ``--help``).

Exit status: 0 when done (``check``: nothing to report), 1 when ``check`` found problems, 2 for bad
input (one ``error:`` line).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from hgutils.notebook_tools.links import published_notebooks
from hgutils.runner.notebooks import NOTEBOOK_DIR, REPO_ROOT

_PATTERN = "[0-9][0-9]_*.ipynb"


def committed_notebooks(repo_root: Path = REPO_ROOT) -> list[Path]:
    """``notebooks/NN_name.ipynb`` (the template included)."""
    return sorted((repo_root / "notebooks").glob(_PATTERN))


def _targets(paths: Sequence[str], default: list[Path]) -> list[Path]:
    if not paths:
        return default
    out = []
    for p in map(Path, paths):
        if p.suffix != ".ipynb" or not p.is_file():
            raise ValueError(f"expected existing .ipynb files; got {str(p)!r}")
        out.append(p)
    return out


def _clean(paths: Sequence[str]) -> list[Path]:
    from hgutils.runner.notebook_cleaning import clean_file

    return [p for p in _targets(paths, committed_notebooks() + published_notebooks()) if clean_file(p)]


def _pair(paths: Sequence[str]) -> list[Path]:
    from hgutils.notebook_tools.pairs import orphan_scripts, pair_path, write_pair

    orphans = orphan_scripts(NOTEBOOK_DIR)
    if orphans and not paths:
        raise ValueError(f"scripts without a notebook: {', '.join(p.name for p in orphans)}; delete them")
    return [pair_path(p) for p in _targets(paths, committed_notebooks()) if write_pair(p)]


def _links() -> list[Path]:
    from hgutils.notebook_tools.links import refresh_all

    return refresh_all()


def _check(paths: Sequence[str] = ()) -> list[str]:
    """Every problem of the given notebooks (default: the committed and published ones, and the README)."""
    from hgutils.notebook_tools.hygiene import check_file
    from hgutils.notebook_tools.links import links_block, readme_badge, readme_table
    from hgutils.notebook_tools.pairs import orphan_scripts, pair_differences, paired_metadata
    from hgutils.runner.notebook_cleaning import is_clean

    problems: list[str] = []
    if not paths:
        readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
        if readme_badge() not in readme or readme_table() not in readme:
            problems.append("README.md: Binder badge or notebook table out of date (run `make sync`)")
    import nbformat

    for nb in _targets(paths, committed_notebooks() + published_notebooks()):
        problems += [str(p) for p in check_file(nb)]
        node = nbformat.read(nb, as_version=4)
        label = nb.resolve().relative_to(REPO_ROOT) if nb.resolve().is_relative_to(REPO_ROOT) else nb
        if not is_clean(node):
            problems.append(f"{label}: not cleaned (run `make sync`)")
        if nb.resolve().parent == NOTEBOOK_DIR:
            problems += pair_differences(nb)
            if node.metadata.get("jupytext") != paired_metadata(nb):
                problems.append(f"{nb.name}: jupytext metadata differs from its script's header (run `make sync`)")
            if links_block(nb) not in node.cells[0].source:
                problems.append(f"{nb.name}: first cell lacks its current links (run `make sync`)")
    if not paths:
        problems += [f"{p.name}: script without a notebook" for p in orphan_scripts(NOTEBOOK_DIR)]
    return problems


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one ``error:`` line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="python -m hgutils.notebook_tools", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("clean", help="strip machine paths, timings and widget state from stored outputs and metadata")
    c.add_argument(
        "paths", nargs="*", help="notebooks (default: notebooks/NN_*.ipynb and results/{medium,paper}/NN_*.ipynb)"
    )
    sub.add_parser("links", help="refresh each notebook's first-cell links and the README's badge and notebook table")
    p = sub.add_parser("pair", help="regenerate the py:percent scripts notebooks/NN_name.py from the notebooks")
    p.add_argument("paths", nargs="*", help="notebooks (default: notebooks/NN_*.ipynb)")
    sub.add_parser("sync", help="clean, links and pair, in that order (what `make sync` runs)")
    k = sub.add_parser("check", help="report hygiene problems, stale links, uncleaned notebooks and stale pairs")
    k.add_argument(
        "paths", nargs="*", help="notebooks (default: notebooks/NN_*.ipynb, the published ones and the README)"
    )
    sub.add_parser(
        "lab",
        help="JupyterLab on the repository at notebooks/ with this environment's kernel; "
        "further options go to jupyter lab (e.g. --no-browser --port 8899)",
    )
    return ap


def _report(what: str, paths: list[Path]) -> None:
    for p in paths:
        print(f"{what} {p.relative_to(REPO_ROOT) if p.is_relative_to(REPO_ROOT) else p}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (see module docstring)."""
    args, rest = _parser().parse_known_args(argv)
    if rest and args.cmd != "lab":
        _parser().error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        if args.cmd == "lab":
            from hgutils.notebook_tools.lab import run_lab

            run_lab(rest)
        if args.cmd in ("clean", "sync"):
            _report("cleaned", _clean(getattr(args, "paths", [])))
        if args.cmd in ("links", "sync"):
            _report("linked", _links())
        if args.cmd in ("pair", "sync"):
            _report("paired", _pair(getattr(args, "paths", [])))
        if args.cmd == "check":
            problems = _check(args.paths)
            for line in problems:
                print(line)
            print(f"{len(problems)} problem(s)" if problems else "notebooks: clean, linked, paired")
            return 1 if problems else 0
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
