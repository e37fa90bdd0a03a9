"""GTH-GMN's two-stage embedding per INR -- encoder, stage-2 refinement of every snapshot's node
coordinates over every pair, pooling -- side by side with the revision before the refinement read its
pair distances off one Gram product (:func:`hgutils.nn.attention_kernels.distance_from_inner` on gathered Gram entries).

Usage::

    python benchmarks/refinement.py                 # 3 alternating rounds, default and large configurations
    python benchmarks/refinement.py --rounds 5 --previous <rev>

What is measured: :meth:`~hgutils.weightspace.metanets.gth_gmn.GTHGMN.trajectory_embedding` of a batch of
``--batch`` INRs (2-32-32-1 synthetic SIREN trajectories, T = 20 snapshots, the medium MNIST INR shape)
with ``refine_steps`` = 10 (notebooks 01 and 03 at medium), in child processes with one thread that
alternate between this checkout and ``--previous`` (extracted with ``git archive``), the order swapped
every round. Each child reports the median process CPU seconds of ``--reps`` embeddings after one
warm-up; the throughput is the median over rounds, the ratio the median of the per-round ratios (paired
round by round) with their range. Under ``two_stage`` this embedding is paid once per INR of every
split for every trained GTH-GMN (each seed, ablation and selection-grid cell).

The last lines are the headlines: ``GTH-GMN <config> two-stage embedding: X INRs/s (Y x previous)``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from metanets import CONFIGS, synthetic_zoo
from side_by_side import alternate, one_thread_env, paired_ratio, previous_library

from hgutils.weightspace.metanets import build_metanet

#: the revision whose every-pair terms formed all V x V distances
PREVIOUS_REV = "2d70f1d"
T, REFINE_STEPS = 20, 10


def child(config: str, batch: int, reps: int) -> None:
    """Child process: the median CPU seconds of ``reps`` two-stage embeddings of ``batch`` INRs."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    zoo = synthetic_zoo(batch, T)
    m = build_metanet(
        "GTH-GMN", zoo, "classification", 10, snapshots="all", refine_steps=REFINE_STEPS, **CONFIGS[config]
    )
    data = m.prepare(zoo)
    times = []
    for _ in range(reps + 1):
        t0 = time.process_time()
        m.trajectory_embedding(data)
        times.append(time.process_time() - t0)
    print(statistics.median(times[1:]))


def _seconds(pythonpath: str, config: str, batch: int, reps: int) -> float:
    """Median CPU seconds of a child run of ``config`` with ``pythonpath`` first on the import path."""
    cmd = [sys.executable, __file__, "--child", config, "--batch", str(batch), "--reps", str(reps)]
    out = subprocess.run(
        cmd, capture_output=True, text=True, env=one_thread_env(pythonpath), check=True, cwd=tempfile.gettempdir()
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--previous", default=PREVIOUS_REV)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.batch, a.reps)
        return
    try:
        with previous_library(a.previous) as tmp:
            now, prev = alternate(CONFIGS, a.rounds, tmp, lambda path, c, _side: _seconds(path, c, a.batch, a.reps))
    except RuntimeError as exc:
        sys.exit(f"error: {exc}")
    print(
        f"two-stage embedding of {a.batch} INRs (T = {T}, {REFINE_STEPS} refinement steps) vs {a.previous}, one thread"
    )
    print(f"{'config':8s} {'CPU s now':>10s} {'CPU s prev':>11s} {'x previous (range)':>20s}")
    heads = []
    for config in CONFIGS:
        n, p = statistics.median(now[config]), statistics.median(prev[config])
        ratio, lo, hi = paired_ratio(now[config], prev[config])
        print(f"{config:8s} {n:10.3f} {p:11.3f} {ratio:8.2f} ({lo:.2f}-{hi:.2f})")
        heads.append(f"GTH-GMN {config} two-stage embedding: {a.batch / n:.1f} INRs/s ({ratio:.2f} x previous)")
    print("\n".join(heads))


if __name__ == "__main__":
    main()
