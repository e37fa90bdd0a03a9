"""GTH-GMN's two-stage embedding per INR -- encoder, stage-2 refinement of every snapshot's node
coordinates over every pair, pooling -- side by side with the revision before the refinement read its
pair distances off one Gram product (:func:`hgutils.nn.attention_kernels.distance_from_gram`).

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
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
#: the revision whose every-pair terms formed all V x V distances
PREVIOUS_REV = "2d70f1d"
CONFIGS: dict[str, dict] = {
    "default": {},
    "large": {"dim": 32, "n_attn_layers": 2, "heads": 4, "head_dim": 8, "gru_hidden": 32},
}
T, REFINE_STEPS = 20, 10


def child(config: str, batch: int, reps: int) -> None:
    """Child process: the median CPU seconds of ``reps`` two-stage embeddings of ``batch`` INRs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from metanets import synthetic_zoo

    from hgutils.weightspace.metanets import build_metanet

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
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=pythonpath)
    cmd = [sys.executable, __file__, "--child", config, "--batch", str(batch), "--reps", str(reps)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=tempfile.gettempdir())
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
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", a.previous, "hgutils"], capture_output=True, check=True
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"error: previous revision {a.previous} unavailable ({exc})")
    now: dict[str, list[float]] = {c: [] for c in CONFIGS}
    prev: dict[str, list[float]] = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        for r in range(a.rounds):
            for config in CONFIGS:
                sides = ((now, str(REPO)), (prev, tmp))
                for store, path in sides if r % 2 == 0 else sides[::-1]:
                    store[config].append(_seconds(path, config, a.batch, a.reps))
    print(
        f"two-stage embedding of {a.batch} INRs (T = {T}, {REFINE_STEPS} refinement steps) vs {a.previous}, one thread"
    )
    print(f"{'config':8s} {'CPU s now':>10s} {'CPU s prev':>11s} {'x previous (range)':>20s}")
    heads = []
    for config in CONFIGS:
        n, p = statistics.median(now[config]), statistics.median(prev[config])
        ratios = [b / x for b, x in zip(prev[config], now[config])]
        print(f"{config:8s} {n:10.3f} {p:11.3f} {statistics.median(ratios):8.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
        ratio = statistics.median(ratios)
        heads.append(f"GTH-GMN {config} two-stage embedding: {a.batch / n:.1f} INRs/s ({ratio:.2f} x previous)")
    print("\n".join(heads))


if __name__ == "__main__":
    main()
