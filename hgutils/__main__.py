"""Command line: ``python -m hgutils reproduce | claims | sweep`` (see ``--help`` of each).

Exit status: 0 when everything ran, 1 when a notebook failed (the message names the notebook and
the cell), 2 for bad input (one ``error:`` line; nothing ran, nothing was written), 130 when
interrupted by Ctrl-C or SIGTERM, at any moment from the start (queued work cancelled, kernels and
workers terminated, completed results kept, nothing half-written).

Input is checked before anything heavy is imported: names, types and values against each
notebook's parameters cell, the device, the output root (writable, not in use by another run),
the cache folder (``$HGUTILS_CACHE`` or ``<out>/.cache``, writable); then against the notebook's
preset, before the first notebook starts. An argument that starts like a negative number
(``-p x -1e-3``) is a value.
"""

from __future__ import annotations

import signal


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


if __name__ == "__main__":  # ``python -m hgutils``: Ctrl-C and SIGTERM count from the first moment,
    # also when the shell started this process with SIGINT ignored (a background job)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)

import argparse  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

from hgutils.presets import SCALES  # noqa: E402

_RUN_ROOT_HELP = "output root (default: results/runs, ignored by git); nothing tracked is written without --publish"


#: What reads as a (negative) number, not an option: ``-1``, ``-.5``, ``-1e-3``, ``-1,1`` (a sweep
#: axis), ``-inf``. argparse's own pattern takes only ``-1`` and ``-0.5``, so ``-p x -1e-3`` was
#: refused as "expected 2 arguments".
_NEGATIVE_VALUE = re.compile(r"^-(\.?\d|\.?(inf|infinity|nan)$)", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one ``error:`` line (no usage block); ``--help`` as usual; every
    argument that starts like a negative number is a value (:data:`_NEGATIVE_VALUE`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE  # subparsers are _Parser too

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def _add_execution(p: argparse.ArgumentParser, jobs_help: str) -> None:
    p.add_argument("--jobs", type=int, default=1, help=jobs_help)
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--cluster",
        metavar="local[:N]",
        default=None,
        help="run on a Dask LocalCluster of N single-threaded worker processes (default N: --jobs, else one per CPU)",
    )
    where.add_argument(
        "--scheduler",
        metavar="tcp://HOST:8786",
        default=None,
        help="run on the Dask cluster at this scheduler (workers: `dask worker ADDRESS --nthreads 1`)",
    )
    p.add_argument("--force", action="store_true", help="rerun even what is complete for this scale and code")
    p.add_argument("--notebook-dir", default=None, help="folder of the NN_name.ipynb notebooks (default: notebooks/)")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m hgutils", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("reproduce", help="execute the numbered notebooks at one scale (plan, progress, resume)")
    r.add_argument("--scale", choices=SCALES, default="medium")
    r.add_argument("--only", default=None, help="comma-separated notebook numbers or names, e.g. 01,05 (00: template)")
    r.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps")
    r.add_argument("--out", default=None, help=_RUN_ROOT_HELP)
    r.add_argument("--data-dir", default=None, help="dataset folder for every notebook (must hold a dataset)")
    r.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="one-off parameter override for every selected notebook (lists as YAML/JSON: '[a,b]')",
    )
    r.add_argument(
        "--publish",
        action="store_true",
        help="copy the completed ledgers, tables and figures into the tracked results/<scale>/ and figures/<scale>/",
    )
    r.add_argument("--log-output", action="store_true", help="stream notebook output to the terminal")
    _add_execution(r, "notebooks run at once, in worker processes with one BLAS thread each when > 1")

    c = sub.add_parser(
        "claims",
        help="render the claims ledgers of a scale into <root>/<scale>/CLAIMS.md "
        "(root: results/runs, where reproduce writes; --published: results/)",
    )
    c.add_argument("--scale", choices=SCALES, default="medium")
    where = c.add_mutually_exclusive_group()
    where.add_argument(
        "--out", default=None, help="root holding <scale>/*/claims.json (default: results/runs, what reproduce writes)"
    )
    where.add_argument(
        "--published",
        action="store_true",
        help="read the tracked results/<scale>/ (what reproduce --publish writes) instead of results/runs/",
    )
    c.add_argument(
        "--update-readme",
        action="store_true",
        help="also replace the README's claims summary with the published medium counts (implies --published)",
    )

    s = sub.add_parser("sweep", help="papermill parameter grid over one notebook (parallel or Dask, resumable)")
    s.add_argument("notebook", help="notebook path, stem or number (e.g. 05)")
    s.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUES"),
        required=True,
        help="a parameter and its values separated by --sep (commas inside [...] do not split); repeat for a grid",
    )
    s.add_argument("--sep", default=",", help="separator between the values of one -p (default ',')")
    s.add_argument("--scale", choices=SCALES, default="smoke", help="preset for every point")
    s.add_argument("--device", default=None, help="device for every point (default: the notebook's)")
    s.add_argument("--data-dir", default=None, help="dataset folder for every point (must hold a dataset)")
    s.add_argument("--out", default=None, help="sweep folder (default: results/sweeps/<notebook>)")
    s.add_argument(
        "--metric", action="append", default=None, help="claim id to show in the summary table (default: all)"
    )
    _add_execution(s, "points run at once, in worker processes with one BLAS thread each")
    return ap


def _pairs(pairs: list[list[str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise ValueError(f"-p {name} given twice")
        out[name] = value
    return out


def _reproduce(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hgutils import runner

    t0 = time.perf_counter()
    kwargs = {"notebook_dir": Path(args.notebook_dir)} if args.notebook_dir else {}
    res = runner.reproduce(
        args.scale,
        args.only,
        args.device,
        args.out,
        args.data_dir,
        params=_pairs(args.param),
        force=args.force,
        jobs=args.jobs,
        cluster=args.cluster,
        scheduler=args.scheduler,
        publish=args.publish,
        log_output=args.log_output,
        **kwargs,
    )
    print()
    if not res.interrupted and any((res.out / args.scale).glob("*/claims.json")):
        print(runner.write_claims(args.scale, res.out))
    print(res.table())
    print(f"total {time.perf_counter() - t0:.0f} s; results under {res.out}")
    if res.published:
        print(f"published {len(res.published)} file(s) into results/{args.scale}/ and figures/{args.scale}/")
    for r in res.failed:
        print(f"error: {r.error}", file=sys.stderr)
    if res.interrupted:
        left = sum(r.status == "not run" for r in res.records)
        print(f"interrupted: {left} notebook(s) not run; rerun the same command to resume", file=sys.stderr)
        return 130
    return 1 if res.failed else 0


def _sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hgutils import runner

    grid = _pairs(args.param)
    fixed = {k: v for k, v in (("device", args.device), ("data_dir", args.data_dir)) if v is not None}
    kwargs = {"notebook_dir": Path(args.notebook_dir)} if args.notebook_dir else {}
    res = runner.sweep(
        args.notebook,
        grid,
        scale=args.scale,
        fixed=fixed,
        sep=args.sep,
        jobs=args.jobs,
        cluster=args.cluster,
        scheduler=args.scheduler,
        out=args.out,
        force=args.force,
        **kwargs,
    )
    print(res.summary())
    print(res.table(args.metric))
    for d, err in res.failed.items():
        print(f"error: {d.name}: {err}", file=sys.stderr)
    if res.interrupted:
        print("interrupted: rerun the same command to resume (completed points are kept)", file=sys.stderr)
        return 130
    return 1 if res.failed else 0


def _claims(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hgutils import runner
    from hgutils.runner.claims_report import PUBLISHED_ROOT, check_readme_scale, claims_root

    if args.update_readme:
        check_readme_scale(args.scale)  # before looking for ledgers: only medium updates the README
    root = args.out or (PUBLISHED_ROOT if args.published else claims_root(args.update_readme))
    if not runner.collect_claims(args.scale, root):
        other = "" if args.published or args.out or args.update_readme else "; --published reads results/<scale>/"
        raise ValueError(
            f"no {args.scale} ledgers under {root}/{args.scale}/ (`python -m hgutils reproduce --scale {args.scale}` "
            f"writes them under results/runs/{args.scale}/){other}"
        )
    from hgutils.runner.notebooks import REPO_ROOT
    from hgutils.runner.preflight import check_file_writable

    # before anything is written: a read-only folder is one error line, not a traceback
    check_file_writable(Path(root) / args.scale / "CLAIMS.md", "--out" if args.out else "claims")
    if args.update_readme:
        check_file_writable(REPO_ROOT / "README.md", "--update-readme")
    print(runner.write_claims(args.scale, root, update_readme=args.update_readme))
    print(f"written: {root}/{args.scale}/CLAIMS.md")
    return 0


def _descendants() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (see module docstring).

    SIGINT and SIGTERM raise ``KeyboardInterrupt`` from the start (in the main thread); whatever
    they interrupt, every process this call started is terminated before it returns 130.
    """
    saved = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            saved[sig] = signal.signal(sig, _interrupt)
    except ValueError:  # not the main thread (embedded use): leave signals alone
        saved = {}
    before: set[int] | None = None
    try:
        before = _descendants()
        try:
            args = _parser().parse_args(argv)
        except SystemExit as exit_:  # --help (0) or a usage error, already printed as one line (2)
            return exit_.code if isinstance(exit_.code, int) else 2
        if args.cmd == "reproduce":
            return _reproduce(args)
        if args.cmd == "claims":
            return _claims(args)
        if args.cmd == "sweep":
            return _sweep(args)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        for sig in saved:
            signal.signal(sig, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        if before is not None:
            from hgutils.runner.processes import descendants, terminate_processes

            terminate_processes(descendants() - before)
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return 2  # pragma: no cover - argparse enforces a command


if __name__ == "__main__":
    sys.exit(main())
