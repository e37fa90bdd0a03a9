"""Meta-network training throughput and memory: every model, GTH-GMN's cost in T, torch.compile, and the
training throughput of GTH-GMN and GMN against the revision before their speed-ups (side by side).

Usage::

    python benchmarks/metanets.py            # full (~11 min): batch 32, T sweep 1/10/20/50, memory, compile,
                                             # side by side: 5 rounds x 3 steps
    python benchmarks/metanets.py --quick    # ~3 min: batch 8, T sweep 1/5/10, no memory; 2 rounds x 1 step
    python benchmarks/metanets.py --versus-only [--rounds N]   # section 5 alone

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
3. (full mode) the peak extra memory of one training step of GTH-GMN, GMN and NFN_NP.
4. ``torch.compile`` of GTH-GMN's attention layers (``compile=True``): the stage-1 step eager and
   compiled, the one-off compile time reported apart.
5. Side by side with ``--previous`` (default :data:`PREVIOUS_REV`, before the speed-ups), one thread: for each
   entry of :data:`ENTRIES` -- GTH-GMN in two configurations (:data:`CONFIGS`: today's default and a
   larger one) x its reconstruction step (stage 1 of ``two_stage``) and its joint task step, batch 32,
   T = 20 on the 2-32-32-1 synthetic zoo; GMN's InfoNCE step on notebook 02's medium shapes (1-32-32-1
   sine INRs, T = 10, GMN reads the last snapshot, batch 32) -- child processes alternate between
   this checkout and the library as it was at ``--previous`` (extracted with ``git archive`` into a
   temporary folder and put first on ``PYTHONPATH``), ``--rounds`` times each. Each child reports the
   median process CPU time per step over ``--reps`` steps after one warm-up step (a shared machine
   inflates wall time, not much CPU time). Throughput is the median over rounds; the ratio to the
   previous revision is the median of the per-round ratios (paired round by round), with their
   range. Then the limit: matmul FLOPs per INR-snapshot of a training step of this checkout
   (forward + backward, ``torch.utils.flop_counter.FlopCounterMode``; elementwise work not counted),
   over the machine's measured one-thread matmul rate (``torch.mm`` of 1024 x 1024 matrices), and the
   share of that limit the measured throughput reaches.

The last lines are the headlines, one per entry:
``<model> <config>/<step> training throughput: X INR-snapshots/s (Y x previous)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
from side_by_side import alternate, one_thread_env, paired_ratio, previous_library
from torch import Tensor

from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES = (2, 32, 32, 1)
#: the last revision before the speed-ups of GTH-GMN and GMN (2026-12-02)
PREVIOUS_REV = "d8808bb"
#: GTH-GMN configurations of the side-by-side table: today's default and a larger one
CONFIGS: dict[str, dict] = {
    "default": {},
    "large": {"dim": 32, "n_attn_layers": 2, "heads": 4, "head_dim": 8, "gru_hidden": 32},
}
#: (model, config, step) entries of the side-by-side table (section 5)
#: a config ending in "+compile" runs this checkout with ``compile=True`` (the recurrence and the stage-1
#: pair terms through ``torch.compile``; compile time is reported apart) against the previous revision eager
ENTRIES: tuple[tuple[str, str, str], ...] = (
    ("GTH-GMN", "default", "reconstruction"),
    ("GTH-GMN", "default", "joint"),
    ("GTH-GMN", "large", "reconstruction"),
    ("GTH-GMN", "large", "joint"),
    ("GTH-GMN", "default+compile", "reconstruction"),
    ("GTH-GMN", "default+compile", "joint"),
    ("GTH-GMN", "large+compile", "reconstruction"),
    ("GTH-GMN", "large+compile", "joint"),
    ("GMN", "nb02-medium", "infonce"),
)
COMPILE = "+compile"
SINE_SIZES = (1, 32, 32, 1)  # notebook 02's sine INRs (DWSNets' architecture)
VERSUS_BATCH, VERSUS_T, NB02_T = 32, 20, 10


def synthetic_zoo(n: int, T: int, seed: int = 0, sizes: tuple[int, ...] = SIZES) -> Zoo:
    """Random SIREN-shaped weights (default 2-32-32-1) with a random-walk trajectory (timing needs shapes only)."""
    g = torch.Generator().manual_seed(seed)
    params = {}
    for i in range(len(sizes) - 1):
        for key, shape in ((f"W{i}", (sizes[i + 1], sizes[i])), (f"b{i}", (sizes[i + 1],))):
            start = torch.randn(n, 1, *shape, generator=g) * 0.3
            steps = torch.randn(n, T, *shape, generator=g) * 0.01
            steps[:, 0] = 0
            params[key] = start + steps.cumsum(1)
    return Zoo(MLPSpec(sizes, "sine", 30.0), params, torch.arange(T), {"label": torch.arange(n) % 10})


def float64_step(kw: dict, step: str, n: int = 3, T: int = 4) -> tuple[dict, dict]:
    """The loss terms and every parameter gradient of one float64 GTH-GMN training step (``kw``: its
    config overrides; ``step``: ``"reconstruction"`` -- stage 1 -- or ``"joint"``, the task step) on an
    ``n``-network synthetic zoo of ``T`` snapshots, with fixed seeds: what the exactness tests compare."""
    import dataclasses

    zoo = synthetic_zoo(n, T)
    torch.manual_seed(0)
    m = build_metanet("GTH-GMN", zoo, "classification", 10, **kw).double()
    m.train()
    g = m.prepare(zoo)
    g = dataclasses.replace(
        g, edge_weight=g.edge_weight.double(), node_feat=g.node_feat.double(), edge_attr=g.edge_attr.double()
    )
    gen = torch.Generator().manual_seed(1)
    if step == "reconstruction":
        terms, weights = m.pretrain_terms(g, 0.5, gen), m.recon_weights()
    else:
        terms, weights = m.loss_terms(g, zoo.meta["label"], 0.5, gen), m.loss_weights
    sum(weights.get(k, 0.0) * v for k, v in terms.items()).backward()
    grads = {name: p.grad.clone() for name, p in m.named_parameters() if p.grad is not None}
    return {k: v.detach() for k, v in terms.items()}, grads


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


def _versus_model(model: str, config: str, step: str) -> tuple[Any, Any, Callable[[], Tensor], int]:
    """The model, its optimiser, a closure computing one step's loss, and the INR-snapshots per step
    of a side-by-side entry (whichever ``hgutils`` is first on the path)."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    if model == "GMN":  # notebook 02 medium: sine INRs, T = 10, InfoNCE, GMN reads the last snapshot
        zoo = synthetic_zoo(VERSUS_BATCH, NB02_T, sizes=SINE_SIZES)
        m = build_metanet("GMN", zoo, "infonce", 16)
        data = m.prepare(zoo)

        def loss() -> Tensor:
            return sum(m.loss_weights.get(k, 0.0) * v for k, v in m.loss_terms(data, None, 0.5, g).items())

        return m, data, loss, VERSUS_BATCH * data.T
    base, compiled = config.removesuffix(COMPILE), config.endswith(COMPILE)
    kw = dict(CONFIGS[base], snapshots="all", **({"compile": True} if compiled else {}))
    if step == "joint":
        kw["protocol"] = "joint"
    zoo = synthetic_zoo(VERSUS_BATCH, VERSUS_T)
    m = build_metanet("GTH-GMN", zoo, "classification", 10, **kw)
    data = m.prepare(zoo)
    y = zoo.meta["label"]

    def loss() -> Tensor:
        if step == "reconstruction":
            terms, weights = m.pretrain_terms(data, 0.5, g), m.recon_weights()
        else:
            terms, weights = m.loss_terms(data, y, 0.5, g), m.loss_weights
        return sum(weights.get(k, 0.0) * v for k, v in terms.items())

    return m, data, loss, VERSUS_BATCH * data.edge_weight.shape[1]


def step_child(model: str, config: str, step: str, reps: int, side: str = "now") -> None:
    """Child process: print the median CPU seconds of ``reps`` training steps (after one warm-up) of a
    side-by-side entry, one thread, and the warm-up step's wall seconds (the compile time of a compiled
    entry). The previous revision (``side="prev"``) always runs eagerly."""
    torch.set_num_threads(1)
    if side == "prev":
        config = config.removesuffix(COMPILE)
    m, _, loss, _ = _versus_model(model, config, step)
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    times = []
    wall = time.perf_counter()
    for i in range(reps + 1):
        t0 = time.process_time()
        opt.zero_grad()
        loss().backward()
        opt.step()
        times.append(time.process_time() - t0)
        if i == 0:
            wall = time.perf_counter() - wall
    print(statistics.median(times[1:]), wall)


def _step_seconds(pythonpath: str, entry: tuple[str, str, str], reps: int, side: str) -> tuple[float, float]:
    """(median CPU s per step, warm-up wall s) of a child run of ``entry`` with ``pythonpath`` first."""
    out = subprocess.run(
        [sys.executable, __file__, "--step-child", *entry, str(reps), side],
        capture_output=True,
        text=True,
        env=one_thread_env(pythonpath),
        check=True,
    )
    step, warm = out.stdout.strip().splitlines()[-1].split()
    return float(step), float(warm)


def matmul_rate(n: int = 1024, reps: int = 5) -> float:
    """The machine's one-thread matmul FLOP/s: median over ``reps`` of a ``torch.mm`` of two ``n x n``
    float32 matrices (``2 n^3`` FLOPs)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    torch.set_num_threads(threads)
    return 2 * n**3 / statistics.median(times)


def flops_per_snapshot(entry: tuple[str, str, str]) -> float:
    """Matmul FLOPs of one training step's forward and backward of this checkout per INR-snapshot
    (``FlopCounterMode``: matrix products; elementwise work is not counted)."""
    from torch.utils.flop_counter import FlopCounterMode

    m, _, loss, n_snap = _versus_model(*entry)
    m.train()
    with FlopCounterMode(display=False) as counter:
        loss().backward()
    return counter.get_total_flops() / n_snap


def versus_previous(rev: str, rounds: int, reps: int) -> list[str]:
    """Section 5: the side-by-side table and the limit estimate; returns the headline lines."""
    try:
        with previous_library(rev) as tmp:
            now_runs, prev_runs = alternate(
                ENTRIES, rounds, tmp, lambda path, e, side: _step_seconds(path, e, reps, side)
            )
    except RuntimeError as exc:
        return [f"training throughput: {exc}"]
    now = {e: [sec for sec, _ in runs] for e, runs in now_runs.items()}
    prev = {e: [sec for sec, _ in runs] for e, runs in prev_runs.items()}
    warmup = {e: [warm for _, warm in runs] for e, runs in now_runs.items()}
    rate = matmul_rate()
    print(f"\n5) training step vs {rev}, one thread, {rounds} alternating rounds x median of {reps} steps")
    print(f"one-thread matmul rate (torch.mm 1024 x 1024): {rate / 1e9:.1f} GFLOP/s")
    print(
        f"{'model':8s} {'config':16s} {'step':15s} {'CPU s now':>10s} {'CPU s prev':>11s} "
        f"{'x previous (range)':>20s} {'MFLOP/snap':>11s} {'limit snap/s':>13s} {'share':>6s}"
    )
    heads = []
    for e in ENTRIES:
        model, config, step = e
        n_snap = VERSUS_BATCH * (1 if model == "GMN" else VERSUS_T)
        a, b = statistics.median(now[e]), statistics.median(prev[e])
        ratio, lo, hi = paired_ratio(now[e], prev[e])
        fl = flops_per_snapshot(e)
        limit = rate / fl
        print(
            f"{model:8s} {config:16s} {step:15s} {a:10.3f} {b:11.3f} "
            f"{ratio:8.2f} ({lo:.2f}-{hi:.2f}) "
            f"{fl / 1e6:11.2f} {limit:13.0f} {n_snap / a / limit:6.1%}"
        )
        rounded = [[round(x, 3) for x in side[e]] for side in (now, prev)]
        print(f"   CPU s per step by round, this checkout: {rounded[0]}; {rev}: {rounded[1]}")
        if config.endswith(COMPILE):
            print(f"   first step incl. compile (wall s) by round: {[round(x, 1) for x in warmup[e]]}")
        heads.append(
            f"{model} {config}/{step} training throughput: {n_snap / a:.0f} INR-snapshots/s ({ratio:.2f} x previous)"
        )
    return heads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a few minutes")
    ap.add_argument("--versus-only", action="store_true", help="section 5 (side by side with --previous) alone")
    ap.add_argument("--zoo", choices=("synthetic", "mnist"), default="synthetic")
    ap.add_argument("--T", type=int, default=None, help="snapshots GTH-GMN reads in table 1 (default 20, quick 5)")
    ap.add_argument("--previous", default=PREVIOUS_REV, help="git revision to compare throughput with")
    ap.add_argument("--rounds", type=int, default=None, help="alternating child runs per side (default 5, quick 2)")
    ap.add_argument("--reps", type=int, default=None, help="timed steps per child run (default 3, quick 1)")
    ap.add_argument("--mem-child", nargs=4, metavar=("MODEL", "T", "BATCH", "MODE"), help=argparse.SUPPRESS)
    child = ("MODEL", "CONFIG", "STEP", "REPS", "SIDE")
    ap.add_argument("--step-child", nargs=5, metavar=child, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step_child:
        model, config, step, reps, side = args.step_child
        step_child(model, config, step, int(reps), side)
        return
    if args.mem_child:
        name, T, batch, mode = args.mem_child
        memory_child(name, int(T), int(batch), mode)
        return
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rounds, vreps = args.rounds or (2 if args.quick else 5), args.reps or (1 if args.quick else 3)
    if args.versus_only:
        print("\n".join(versus_previous(args.previous, rounds, vreps)))
        return
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
    print("\n4) torch.compile of the recurrence and the stage-1 pair terms (GTH-GMN stage-1 step)")
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
    print("\n".join(versus_previous(args.previous, rounds, vreps)))


if __name__ == "__main__":
    main()
