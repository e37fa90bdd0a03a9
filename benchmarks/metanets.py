"""Meta-network training throughput and memory: every model, GTH-GMN's cost in T, and torch.compile.

Usage::

    python benchmarks/metanets.py            # full: batch 32, T sweep 1/10/20/50, memory, compile (~10 min)
    python benchmarks/metanets.py --quick    # batch 8, T sweep 1/5/10, no memory children; compile included

What is measured (all in this run, same machine, same shapes):

1. one training step (forward + all loss terms + backward + Adam) on a batch of ``B`` trajectories
   of a 2->32->32->1 SIREN zoo (the medium MNIST INR architecture), for every model: GTH-GMN's
   stage-1 (reconstruction) step reading ``T`` snapshots -- the step its two-stage training repeats
   -- and its joint (task + auxiliary) step; GMN reading all ``T`` snapshots (the per-snapshot
   reference) and the last one; NFN_NP, NFN_HNP, DWSNet, StatNN, FlatMLP reading the last one:
   INR-snapshots/s (``B x snapshots read`` per step) and the time per INR-snapshot as a ratio to
   GMN's. Timing depends only on the shapes, so the zoo is synthetic by default (random weights
   with a random-walk trajectory); ``--zoo mnist`` uses the cached medium MNIST INR zoo instead.
2. GTH-GMN as T grows: time per step and per snapshot, and (full mode) the peak extra memory of a
   training step and of a no-grad forward, each measured in a fresh child process
   (``VmHWM - VmRSS`` from ``/proc/self/status``). The no-grad forward of the two-stage model builds
   the trajectory embedding from every snapshot's refined coordinates, so its memory grows with T
   (the end-to-end ``protocol="joint"`` forward keeps one snapshot of node states); a training step
   keeps autograd activations for every snapshot, so its memory grows with T -- unless
   ``checkpoint_snapshots=True`` (column "ckpt train"), which recomputes them in the backward.


3. ``torch.compile`` of GTH-GMN's attention layers (``compile=True``; used for training steps):
   the stage-1 step eager and compiled, the one-off compile time reported apart.

5. GTH-GMN's training throughput against the previous implementation, side by side: the stage-1
   step (batch 32, T = 20, one process, one thread) timed in child processes that alternate between
   this checkout and the library as it was at ``--previous`` (a git revision, extracted with
   ``git archive`` into a temporary folder and put first on ``PYTHONPATH``), ``--rounds`` times
   each; process CPU time per step, median over rounds (a shared machine inflates wall time, not
   much CPU time).

The last lines are the headlines: ``GTH-GMN/GMN time per snapshot: X.XX`` (target: <= 4; per
graph pass, i.e. against GMN encoding one snapshot, since GMN reads a trajectory as edge-feature
channels of a single pass -- the ratio per snapshot *read* against that is printed just above),
``GTH-GMN compiled/eager training throughput: X.XX`` and, last,
``GTH-GMN training throughput: X INR-snapshots/s (Y x previous)`` (target: >= 2 x previous).

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

from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (2, 32, 32, 1)
#: the library before GTH-GMN's rewrite (free radii, dense attention, every-pair refinement)
PREVIOUS_REV = "edfda7f"
REPO = Path(__file__).resolve().parent.parent


def synthetic_zoo(n: int, T: int, seed: int = 0) -> Zoo:
    """Random 2-32-32-1 SIREN-shaped weights with a random-walk trajectory (timing needs shapes only)."""
    g = torch.Generator().manual_seed(seed)
    params = {}
    for i in range(len(SIZES) - 1):
        for key, shape in ((f"W{i}", (SIZES[i + 1], SIZES[i])), (f"b{i}", (SIZES[i + 1],))):
            start = torch.randn(n, 1, *shape, generator=g) * 0.3
            steps = torch.randn(n, T, *shape, generator=g) * 0.01
            steps[:, 0] = 0
            params[key] = start + steps.cumsum(1)
    return Zoo(MLPSpec(SIZES, "sine", 30.0), params, torch.arange(T), {"label": torch.arange(n) % 10})


def load_zoo(kind: str, n: int, T: int) -> Zoo:
    if kind == "synthetic":
        return synthetic_zoo(n, T)
    from hgutils.weightspace.zoo import inr_image_zoo

    zoo = inr_image_zoo("mnist", scale="medium")
    idx = torch.linspace(0, zoo.T - 1, min(T, zoo.T)).round().long()
    return zoo.subset(torch.arange(n)).snapshots(idx)


def time_steps(name: str, zoo: Zoo, batch: int, reps: int, stage1: bool = False, **kw) -> tuple[float, int, float]:
    """Best-of-``reps`` seconds per training step after one warm-up, the snapshots read, and the
    warm-up step's seconds (the compile time for a compiled model). ``stage1``: GTH-GMN's
    self-supervised reconstruction step (``pretrain_terms``) instead of the task step."""
    torch.manual_seed(0)
    m = build_metanet(name, zoo, "classification", 10, **kw)
    m.train()
    data = m.prepare(zoo)
    y = zoo.meta["label"]
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    idx = torch.arange(batch)
    g = torch.Generator().manual_seed(0)
    times = []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        if stage1:
            terms, weights = m.pretrain_terms(data[idx], 0.5, g), m.recon_weights()
        else:
            terms, weights = m.loss_terms(data[idx], y[idx], 0.5, g), m.loss_weights
        loss = sum(weights.get(k, 0.0) * v for k, v in terms.items())
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    n_read = data.T
    return min(times[1:]), n_read, times[0]


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1])  # kB
    return -1


def memory_child(name: str, T: int, batch: int, mode: str) -> None:
    """Child process: print the peak extra memory (MiB) of one training step / no-grad forward."""
    zoo = synthetic_zoo(batch, T)
    torch.manual_seed(0)
    kw: dict = {"snapshots": "all"} if name == "GTH-GMN" else {}
    if mode == "train_ckpt":
        kw["checkpoint_snapshots"] = True
    m = build_metanet(name, zoo, "classification", 10, **kw)
    data = m.prepare(zoo)
    y = zoo.meta["label"]
    g = torch.Generator().manual_seed(0)

    def step_loss(batch: object, target: torch.Tensor) -> torch.Tensor:
        # GTH-GMN trains by its stage-1 (reconstruction) step, the step table 1 times; others by their task step
        if name == "GTH-GMN":
            terms, weights = m.pretrain_terms(batch, 0.5, g), m.recon_weights()
        else:
            terms, weights = m.loss_terms(batch, target, 0.5), m.loss_weights
        return sum(weights.get(k, 0.0) * v for k, v in terms.items())

    if mode.startswith("train"):  # warm-up allocations (autograd engine, optimizer code paths)
        step_loss(data[:2], y[:2]).backward()
    else:
        with torch.no_grad():
            m(data[:2])
    before = _status("VmRSS")
    if mode.startswith("train"):
        step_loss(data, y).backward()
    else:
        with torch.no_grad():
            m(data)

    print((_status("VmHWM") - before) / 1024)


def peak_mib(name: str, T: int, batch: int, mode: str) -> float:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    out = subprocess.run(
        [sys.executable, __file__, "--mem-child", name, str(T), str(batch), mode],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def throughput_child(batch: int, T: int, reps: int) -> None:
    """Child process: print the CPU seconds of GTH-GMN's stage-1 step (best of ``reps`` after a warm-up)
    on the synthetic zoo, with whichever ``hgutils`` is first on the path."""
    torch.set_num_threads(1)
    zoo = synthetic_zoo(batch, T)
    torch.manual_seed(0)
    m = build_metanet("GTH-GMN", zoo, "classification", 10, snapshots="all")
    m.train()
    data = m.prepare(zoo)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    idx = torch.arange(batch)
    times = []
    for _ in range(reps + 1):
        t0 = time.process_time()
        terms, weights = m.pretrain_terms(data[idx], 0.5, g), m.recon_weights()
        loss = sum(weights.get(k, 0.0) * v for k, v in terms.items())
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.process_time() - t0)
    print(min(times[1:]))


def _step_seconds(pythonpath: str, batch: int, T: int, reps: int) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=pythonpath)
    out = subprocess.run(
        [sys.executable, __file__, "--throughput-child", str(batch), str(T), str(reps)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def throughput_vs_previous(rev: str, rounds: int, batch: int = 32, T: int = 20, reps: int = 2) -> str:
    """The headline line: this checkout's GTH-GMN stage-1 throughput and its ratio to revision ``rev``."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", rev, "hgutils"], capture_output=True, check=True
            ).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            return f"GTH-GMN training throughput: previous revision {rev} unavailable ({exc})"
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        now, prev = [], []
        for _ in range(rounds):  # alternate, so load on the machine hits both alike
            now.append(_step_seconds(str(REPO), batch, T, reps))
            prev.append(_step_seconds(tmp, batch, T, reps))
    a, b = statistics.median(now), statistics.median(prev)
    print(f"stage-1 step CPU s, this checkout: {[round(x, 3) for x in now]}; {rev}: {[round(x, 3) for x in prev]}")
    return f"GTH-GMN training throughput: {batch * T / a:.0f} INR-snapshots/s ({b / a:.2f} x previous)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="<= 60 s version")
    ap.add_argument("--zoo", choices=("synthetic", "mnist"), default="synthetic")
    ap.add_argument("--T", type=int, default=None, help="snapshots GTH-GMN reads in table 1 (default 20, quick 5)")
    ap.add_argument("--previous", default=PREVIOUS_REV, help="git revision to compare throughput with")
    ap.add_argument("--rounds", type=int, default=None, help="alternating child runs per side (default 5, quick 3)")
    ap.add_argument("--mem-child", nargs=4, metavar=("MODEL", "T", "BATCH", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--throughput-child", nargs=3, type=int, metavar=("BATCH", "T", "REPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.throughput_child:
        throughput_child(*args.throughput_child)
        return
    if args.mem_child:
        name, T, batch, mode = args.mem_child
        memory_child(name, int(T), int(batch), mode)
        return
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    batch, reps = (8, 1) if args.quick else (32, 2)
    T = args.T or (5 if args.quick else 20)
    sweep = (1, 5, 10) if args.quick else (1, 10, 20, 50)
    zoo = load_zoo(args.zoo, max(batch, 32), T)
    print(f"zoo: {args.zoo}, sizes {SIZES}, batch {batch}, threads {torch.get_num_threads()}")

    models = [
        ("GTH-GMN stage 1", "GTH-GMN", {"snapshots": "all", "stage1": True}),
        ("GTH-GMN joint", "GTH-GMN", {"snapshots": "all", "protocol": "joint"}),
        ("GMN (all T)", "GMN", {"snapshots": "all"}),
        ("GMN", "GMN", {}),
        ("NFN_NP", "NFN_NP", {}),
        ("NFN_HNP", "NFN_HNP", {}),
        ("DWSNet", "DWSNet", {}),
        ("StatNN", "StatNN", {}),
        ("FlatMLP", "FlatMLP", {}),
    ]
    rows = {}
    for label, name, kw in models:
        sec, n_read, _ = time_steps(name, zoo, batch, reps, **kw)
        rows[label] = (sec, n_read, sec / (batch * n_read))
    gmn = rows["GMN (all T)"][2]
    print("\n1) training step (forward + losses + backward + Adam), eager")
    print(f"{'model':16s} {'snap':>4s} {'step s':>8s} {'INR-snap/s':>11s} {'ms/snapshot':>12s} {'vs GMN':>7s}")
    for label, (sec, n_read, per) in rows.items():
        print(f"{label:16s} {n_read:4d} {sec:8.3f} {batch * n_read / sec:11.1f} {per * 1e3:12.2f} {per / gmn:7.2f}")

    print("\n2) GTH-GMN cost vs T" + ("" if args.quick else " (memory: peak extra MiB, child processes)"))
    mem_cols = "" if args.quick else f" {'train MiB':>10s} {'ckpt train MiB':>15s} {'no-grad MiB':>12s}"
    print(f"{'T':>4s} {'step s':>8s} {'ms/snapshot':>12s}" + mem_cols)
    for t in sweep:
        z = synthetic_zoo(max(batch, 16), t) if args.zoo == "synthetic" else load_zoo(args.zoo, max(batch, 16), t)
        sec, n_read, _ = time_steps("GTH-GMN", z, batch, reps, snapshots="all", stage1=True)
        line = f"{t:4d} {sec:8.3f} {sec / (batch * n_read) * 1e3:12.2f}"
        if not args.quick:
            mib = {mode: peak_mib("GTH-GMN", t, batch, mode) for mode in ("train", "train_ckpt", "eval")}
            line += f" {mib['train']:10.1f} {mib['train_ckpt']:15.1f} {mib['eval']:12.1f}"
        print(line)
    if not args.quick:
        print("\n3) peak extra memory of one training step, batch", batch)
        for name in ("GTH-GMN", "GMN", "NFN_NP"):
            print(f"{name:8s} {peak_mib(name, T if name == 'GTH-GMN' else 1, batch, 'train'):8.1f} MiB")
    print("\n4) torch.compile of the attention layers (GTH-GMN stage-1 step)")
    eager, _, _ = time_steps("GTH-GMN", zoo, batch, reps + 1, snapshots="all", stage1=True)
    comp, n_read, first = time_steps("GTH-GMN", zoo, batch, reps + 1, snapshots="all", stage1=True, compile=True)
    print(f"eager {eager:.3f} s/step, compiled {comp:.3f} s/step (first step incl. compile: {first:.0f} s)")
    # GMN reads the T snapshots as T edge-feature channels of one message-passing pass, so its time per
    # snapshot read falls as 1/T; GTH-GMN runs one attention + GRU pass per snapshot. Both ratios:
    gth = rows["GTH-GMN stage 1"][2]
    per_pass = gth / rows["GMN"][2]
    print(f"\nGTH-GMN/GMN time per snapshot read (GMN: all T as edge channels, one pass): {gth / gmn:.2f}")

    print(f"GTH-GMN/GMN time per snapshot: {per_pass:.2f}  (per graph pass; GMN on one snapshot)")

    print(f"GTH-GMN compiled/eager training throughput: {eager / comp:.2f}")
    print(throughput_vs_previous(args.previous, args.rounds or (3 if args.quick else 5)))


if __name__ == "__main__":
    main()
