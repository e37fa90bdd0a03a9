"""Command line: ``python -m hgutils reproduce | claims | sweep`` (see ``--help`` of each).

Exit status is non-zero when any notebook fails; the message names the notebook and the cell.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from hgutils.presets import SCALES


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m hgutils", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("reproduce", help="execute the numbered notebooks with papermill")
    r.add_argument("--scale", choices=SCALES, default="medium")
    r.add_argument("--only", default=None, help="comma-separated notebook numbers, e.g. 01,05")
    r.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    r.add_argument("--out", default=None, help="results folder (default: <repo>/results)")
    r.add_argument("--data-dir", default=None, help="dataset folder passed to every notebook")
    r.add_argument("--log-output", action="store_true", help="stream notebook output to the terminal")

    c = sub.add_parser("claims", help="render all claims ledgers of a scale into CLAIMS.md")
    c.add_argument("--scale", choices=SCALES, default="medium")
    c.add_argument("--out", default=None, help="results folder (default: <repo>/results)")
    c.add_argument(
        "--update-readme", action="store_true", help="also replace the README section between the CLAIMS markers"
    )

    s = sub.add_parser("sweep", help="papermill parameter grid over one notebook (parallel, resumable)")
    s.add_argument("notebook", help="notebook path, stem or number (e.g. 05)")
    s.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUES"),
        required=True,
        help="a parameter and its comma-separated values; repeat for a grid",
    )
    s.add_argument("--scale", choices=SCALES, default="smoke", help="preset for every point")
    s.add_argument("--jobs", type=int, default=1, help="parallel worker processes (1 thread each)")
    s.add_argument("--out", default=None, help="sweep folder (default: results/sweeps/<notebook>)")
    s.add_argument(
        "--metric", action="append", default=None, help="claim id to show in the summary table (default: all)"
    )
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from hgutils import runner

    try:
        if args.cmd == "reproduce":
            t0 = time.perf_counter()
            records = runner.reproduce(
                args.scale,
                args.only,
                args.device,
                args.out,
                args.data_dir or os.environ.get("HGUTILS_DATA"),
                args.log_output,
            )
            print()
            print(runner.write_claims(args.scale, args.out))
            print("| notebook | wall time (s) | status |\n|---|---|---|")
            for rec in records:
                print(f"| {rec.notebook} | {rec.seconds:.0f} | {'ok' if rec.ok else 'FAILED'} |")
            print(f"total {time.perf_counter() - t0:.0f} s")
            bad = [r for r in records if not r.ok]
            for r in bad:
                print(f"error: {r.error}", file=sys.stderr)
            return 1 if bad else 0
        if args.cmd == "claims":
            print(runner.write_claims(args.scale, args.out, update_readme=args.update_readme))
            return 0
        if args.cmd == "sweep":
            grid: dict[str, list] = {}
            for name, values in args.param:
                if name in grid:
                    raise ValueError(f"parameter {name!r} given twice")
                grid[name] = runner.parse_values(values)
            res = runner.sweep(args.notebook, grid, jobs=args.jobs, out=args.out, base={"scale": args.scale})
            print(f"{len(res.ran)} ran, {len(res.skipped)} skipped (already complete), {len(res.failed)} failed")
            print(res.table(args.metric))
            for d, err in res.failed.items():
                print(f"error: {d.name}: {err}", file=sys.stderr)
            return 1 if res.failed else 0
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse enforces a command


if __name__ == "__main__":
    sys.exit(main())
