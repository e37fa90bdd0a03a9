"""Reader links: Binder launch URLs, the published medium-scale runs, and where they are written.

- :func:`binder_url` -- a mybinder.org URL that opens this repository in JupyterLab, optionally
  on one file (``urlpath=lab/tree/notebooks/NN_name.ipynb``). Binder builds from ``binder/`` and
  every notebook opens at its default (smoke) preset.
- :func:`published_notebook` -- ``results/<scale>/NN_name.ipynb`` when ``reproduce --publish``
  wrote it.
- :func:`refresh_notebook_links` -- the marked line under the title of a notebook's first
  markdown cell linking its published medium run (when there is one) and its Binder launch.
- :func:`refresh_readme` -- the README's Binder badge and its table of notebooks, each between
  its markers.

All links are generated from :data:`BINDER_REPO` / :data:`BINDER_REF`; every refresh is
idempotent (the marked block is replaced, never duplicated).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hgutils.runner.notebooks import NOTEBOOK_DIR, REPO_ROOT

#: the GitHub repository (``owner/name``) Binder builds; every Binder link is generated from it
BINDER_REPO = "hgutils/hgutils"
#: the branch, tag or commit Binder builds (``HEAD``: the default branch)
BINDER_REF = "HEAD"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
#: the scale whose executed notebooks the README and the notebooks link for readers
PUBLISHED_SCALE = "medium"
#: scales whose published notebooks (results/<scale>/NN_name.ipynb) are tracked by git (see .gitignore)
TRACKED_SCALES = ("medium", "paper")

LINKS_START = "<!-- hgutils:links -->"
LINKS_END = "<!-- /hgutils:links -->"
BADGE_START = "<!-- BINDER:START -->"
BADGE_END = "<!-- BINDER:END -->"
TABLE_START = "<!-- NOTEBOOKS:START -->"
TABLE_END = "<!-- NOTEBOOKS:END -->"
_PATTERN = "[0-9][0-9]_*.ipynb"


def binder_url(path: str | None = None) -> str:
    """mybinder.org URL of the repository, opening JupyterLab on ``path`` (repository-relative) if given."""
    base = f"https://mybinder.org/v2/gh/{BINDER_REPO}/{BINDER_REF}"
    return f"{base}?urlpath=lab/tree/{path.strip('/')}" if path else f"{base}?urlpath=lab"


def published_notebook(stem: str, repo_root: Path = REPO_ROOT, scale: str = PUBLISHED_SCALE) -> Path | None:
    """``<repo>/results/<scale>/<stem>.ipynb`` if it was published, else ``None``."""
    path = Path(repo_root) / "results" / scale / f"{stem}.ipynb"
    return path if path.is_file() else None


def published_notebooks(repo_root: Path = REPO_ROOT) -> list[Path]:
    """Every tracked published notebook: ``results/<scale>/NN_name.ipynb`` for the tracked scales."""
    return sorted(p for s in TRACKED_SCALES for p in (Path(repo_root) / "results" / s).glob(_PATTERN))


def _rel(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def links_block(notebook: Path, repo_root: Path = REPO_ROOT) -> str:
    """The marked Markdown block for ``notebook`` (a path under ``<repo>/notebooks``)."""
    notebook = Path(notebook)
    parts = []
    run = published_notebook(notebook.stem, repo_root)
    if run is not None:
        parts.append(
            f"**Medium-scale run:** [{run.name}]({_rel(run, notebook.parent)}) (executed, outputs kept; "
            "the numbers of the README's claims table)"
        )
    url = binder_url(_rel(notebook, repo_root))
    parts.append(f"**Run it yourself:** [open in JupyterLab on Binder]({url}) (smoke preset)")
    return f"{LINKS_START}\n{' · '.join(parts)}\n{LINKS_END}"


def _with_block(text: str, block: str, start: str, end: str) -> str | None:
    """``text`` with its ``start``...``end`` section replaced by ``block``; ``None`` when unmarked."""
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: block, text, count=1)


def with_links(source: str, block: str) -> str:
    """A first-cell ``source`` carrying ``block``: replaced in place, else inserted under the title line."""
    replaced = _with_block(source, block, LINKS_START, LINKS_END)
    if replaced is not None:
        return replaced
    lines = source.split("\n")
    if lines and lines[0].startswith("#"):
        rest = "\n".join(lines[1:]).lstrip("\n")
        return f"{lines[0]}\n\n{block}\n\n{rest}".rstrip("\n") + ("\n" if source.endswith("\n") else "")
    return f"{block}\n\n{source}"


def refresh_notebook_links(notebook: Path, repo_root: Path = REPO_ROOT) -> bool:
    """Write (or refresh) the links block in ``notebook``'s first cell; return whether the file changed.

    Raises
    ------
    ValueError
        If the notebook's first cell is not a Markdown cell.
    """
    import nbformat

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        raise ValueError(f"{notebook.name}: the first cell must be Markdown (the title) to carry the links")
    new = with_links(nb.cells[0].source, links_block(notebook, repo_root))
    if new == nb.cells[0].source:
        return False
    nb.cells[0].source = new
    nbformat.write(nb, notebook)
    return True


def _title(notebook: Path) -> str:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    first = nb.cells[0].source.split("\n", 1)[0] if nb.cells and nb.cells[0].cell_type == "markdown" else ""
    title = first.lstrip("#").strip()
    return re.sub(r"^\d\d\s*[·—:-]\s*", "", title) or notebook.stem


def readme_badge() -> str:
    """The marked Binder badge: JupyterLab on Binder, opened at the notebooks folder."""
    return f"{BADGE_START}\n[![Binder]({BINDER_BADGE})]({binder_url('notebooks')})\n{BADGE_END}"


def readme_table(repo_root: Path = REPO_ROOT, notebook_dir: Path | None = None) -> str:
    """The marked table of notebooks: title, the published medium run, the Binder launch."""
    notebook_dir = Path(notebook_dir) if notebook_dir else Path(repo_root) / "notebooks"
    lines = [
        TABLE_START,
        "| notebook | what it reproduces | medium-scale run (executed) | run it on Binder |",
        "|---|---|---|---|",
    ]
    for nb in sorted(notebook_dir.glob(_PATTERN)):
        rel = _rel(nb, repo_root)
        run = published_notebook(nb.stem, repo_root)
        if run is not None:
            medium = f"[{run.name}]({_rel(run, repo_root)})"
        else:
            medium = "template (not run at medium)" if nb.name.startswith("00_") else "not published yet"
        lines.append(f"| [{nb.stem}]({rel}) | {_title(nb)} | {medium} | [launch]({binder_url(rel)}) |")
    lines.append(TABLE_END)
    return "\n".join(lines)


def refresh_readme(readme: Path | None = None, repo_root: Path = REPO_ROOT) -> bool:
    """Rewrite the README's marked Binder badge and notebook table; return whether it changed.

    Raises
    ------
    ValueError
        If the README lacks either pair of markers.
    """
    readme = Path(readme) if readme else Path(repo_root) / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = text
    for start, end, block in (
        (BADGE_START, BADGE_END, readme_badge()),
        (TABLE_START, TABLE_END, readme_table(repo_root)),
    ):
        replaced = _with_block(new, block, start, end)
        if replaced is None:
            raise ValueError(f"{readme} has no {start} ... {end} section to update")
        new = replaced
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True


def refresh_all(repo_root: Path = REPO_ROOT, notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Refresh every numbered notebook's links and the README; return the files that changed."""
    changed = [nb for nb in sorted(Path(notebook_dir).glob(_PATTERN)) if refresh_notebook_links(nb, repo_root)]
    readme = Path(repo_root) / "README.md"
    if refresh_readme(readme, repo_root):
        changed.append(readme)
    return changed
