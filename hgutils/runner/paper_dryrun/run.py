"""Running the dry run and writing its ledger: the notebook table, :func:`run_dryrun` and the command line.

Holds :data:`DRIVERS` (each notebook's ``dry_NN``), :func:`dryrun_notebook` (one notebook into a
:class:`~hgutils.runner.paper_dryrun.core.DryRun`), :func:`run_dryrun` (the selected notebooks,
then the ledger files ``dryrun.json`` and ``DRYRUN.md``) and :func:`main`, the command line behind
``python -m hgutils.runner.paper_dryrun`` and ``make dryrun``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import torch

from hgutils.atomic import atomic_write_text
from hgutils.runner.paper_dryrun.core import CUTS, NOTEBOOKS, DryRun
from hgutils.runner.paper_dryrun.others import dry_04, dry_05, dry_06
from hgutils.runner.paper_dryrun.weightspace import dry_01, dry_02, dry_03, dry_07

log = logging.getLogger("hgutils")

__all__ = ["DRIVERS", "dryrun_notebook", "main", "run_dryrun"]

#: the first line of ``python -m hgutils.runner.paper_dryrun --help``
_DESCRIPTION = "Paper-preset dry run of every notebook: the paper's sizes, a handful of networks and one step."

#: each notebook's dry run, by number
DRIVERS: dict[str, Callable[..., None]] = {
    "01": dry_01,
    "02": dry_02,
    "03": dry_03,
    "04": dry_04,
    "05": dry_05,
    "06": dry_06,
    "07": dry_07,
}


# --------------------------------------------------------------------------------------------
# driver and ledger
# --------------------------------------------------------------------------------------------
def dryrun_notebook(
    nb: str,
    dr: DryRun | None = None,
    seed: int = 0,
    device: str = "cpu",
    data_dir: str | None = None,
    out: Path | None = None,
    compile_: bool = False,
) -> DryRun:
    """Dry-run notebook ``nb`` (``"01"`` ... ``"07"``) into ``dr`` (a new :class:`DryRun` if ``None``)."""
    if nb not in DRIVERS:
        raise ValueError(f"notebook must be one of {list(DRIVERS)}; got {nb!r}")
    dr = dr if dr is not None else DryRun(device=device)
    DRIVERS[nb](dr, seed=seed, device=device, data_dir=data_dir, out=out, compile_=compile_)
    return dr


def _markdown(dr: DryRun, seconds: float) -> str:
    df = dr.frame()
    df = df.astype(object).where(df.notna(), "")
    lines = [
        f"# Paper-preset dry run ({dr.device}, {seconds:.0f} s)",
        "",
        "Each notebook's paper preset with only the counts cut (hgutils.runner.paper_dryrun.CUTS):",
        "",
    ]
    lines += [f"- {nb}: `{json.dumps(c, default=str)}`" for nb, c in CUTS.items()]
    lines += [
        "",
        "rss_peak_mib: the process's peak resident set during the call (absolute); step_mib: peak live tensor "
        "bytes of one training step at the given batches; step_mib@paper_batch: the step's live bytes after every "
        "operator extrapolated linearly to the paper's batch, their maximum (paper_dryrun.step_memory).",
        "",
        "| " + " | ".join(df.columns) + " |",
        "|" + "---|" * len(df.columns),
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    for r in dr.records:
        if r.get("status") != "ok":
            lines.append(f"\n- {r['notebook']} {r['model']}: {r['status']}: {r.get('error') or r.get('reason')}")
    return "\n".join(lines) + "\n"


def run_dryrun(
    notebooks: Sequence[str] = NOTEBOOKS,
    out: str | Path | None = None,
    seed: int = 0,
    device: str = "cpu",
    data_dir: str | None = None,
    track_tensors: bool = False,
    compile_: bool = False,
    max_gib: float | None = 4.0,
) -> DryRun:
    """Dry-run ``notebooks`` and write the ledger ``out/dryrun.json`` + ``out/DRYRUN.md`` (and each
    notebook's paper-branch claims under ``out/<nb>/``). Zoos and lr searches are cached under
    ``$HGUTILS_CACHE`` like any run; point it at a temporary folder to leave nothing behind."""
    unknown = [nb for nb in notebooks if nb not in DRIVERS]
    if unknown or not notebooks:
        raise ValueError(f"notebooks must be a non-empty selection of {list(DRIVERS)}; got {list(notebooks)}")
    out_path = Path(out) if out is not None else None
    dr = DryRun(device=device, track_tensors=track_tensors, max_gib=max_gib)
    t0 = time.perf_counter()
    for nb in notebooks:
        t_nb = time.perf_counter()
        dryrun_notebook(nb, dr, seed, device, data_dir, out_path, compile_)
        log.info("dry run %s: %.0f s", nb, time.perf_counter() - t_nb)
    seconds = time.perf_counter() - t0
    if out_path is not None:
        out_path.mkdir(parents=True, exist_ok=True)
        payload = {
            "device": device,
            "torch": torch.__version__,
            "seconds": round(seconds, 1),
            "cuts": CUTS,
            "compile": compile_,
            "max_gib": max_gib,
            "records": dr.records,
        }
        atomic_write_text(out_path / "dryrun.json", json.dumps(payload, indent=2, default=str) + "\n")
        atomic_write_text(out_path / "DRYRUN.md", _markdown(dr, seconds))
    dr.seconds = seconds
    return dr


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: run the dry run, print the ledger table; exit 1 if any model failed, 2 on bad arguments."""
    p = argparse.ArgumentParser(prog="python -m hgutils.runner.paper_dryrun", description=_DESCRIPTION)
    p.add_argument("--out", default=None, help="folder for dryrun.json / DRYRUN.md (default: print only)")
    p.add_argument("--only", default=",".join(NOTEBOOKS), help="comma-separated notebooks, e.g. 01,04")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=None, help="dataset folder (default: $HGUTILS_DATA, then packaged copies)")
    p.add_argument(
        "--track-tensors", action="store_true", help="also count live tensor storages of every call (slower)"
    )
    p.add_argument("--compile", action="store_true", help="keep the paper preset's torch.compile (minutes on a CPU)")
    p.add_argument(
        "--max-gib", type=float, default=4.0, help="address-space cap per call, GiB above the process size (0: none)"
    )
    a = p.parse_args(argv)
    notebooks = [s.strip().zfill(2) for s in a.only.split(",") if s.strip()]
    bad = [nb for nb in notebooks if nb not in DRIVERS]
    if bad or not notebooks:
        print(f"error: --only must name notebooks from {','.join(DRIVERS)}; got {a.only!r}", file=sys.stderr)
        return 2
    if torch.device(a.device).type == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch sees no CUDA device (install a CUDA build of torch)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    dr = run_dryrun(notebooks, a.out, a.seed, a.device, a.data_dir, a.track_tensors, a.compile, a.max_gib or None)
    with pd.option_context("display.width", 250, "display.max_colwidth", 60, "display.max_rows", 500):
        print(dr.frame().to_string(index=False))
    seconds = dr.seconds
    ok = sum(r["status"] == "ok" for r in dr.records)
    skipped = [r for r in dr.records if r["status"] == "skipped"]
    print(
        f"\npaper dry run: {ok} ok, {len(skipped)} skipped, {len(dr.over_cap)} over the memory cap, "
        f"{len(dr.failed)} failed, {seconds:.0f} s on {a.device}"
    )
    for r in skipped + dr.over_cap:
        print(f"  {r['status']} {r['notebook']} {r['model']}: {r['reason']}")
    for r in dr.failed:
        print(f"  FAILED {r['notebook']} {r['model']}: {r['error']}\n{r.get('traceback', '')}")
    return 1 if dr.failed else 0
