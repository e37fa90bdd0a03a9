"""Cost of the ILNN layers against Euclidean and hyperbolic baselines (issue: ILNN, benchmark).

1. Forward and forward+backward time of ``PLFC`` (ILNN), HCNN ``LorentzFC``, HNN ``PoincareLinear``
   and ``nn.Linear`` at input width = output width in {16, 64, 256, 1024}, batch 512, float32, as
   ratios to ``nn.Linear`` measured side by side (interleaved repetitions, median).
   Public anchor (a published GPU micro-benchmark, 16384 outputs): hyperbolic FC layers cost 5-17x a Linear at

   width 16 and ~1.1-1.4x at 4096. Target here: PLFC <= 3x nn.Linear at width 256 on this CPU.
2. Batch norms on ``[4096, 64]`` Lorentz points (forward+backward): GyroLBN (closed-form centroid),
   GyroBN-style (iterative Karcher mean), HCNN LBN (tangent-space), as ratios to GyroLBN.
3. ``hgutils.nn.lorentz.asinh`` (a composition of vectorised kernels) against ``torch.asinh`` on 2^20
   float32 values, forward+backward: the reason the ILNN layers use their own.
4. Time per epoch of the three ResNet flavours at the medium preset of notebook 04 (estimated
   from timed training steps x steps per epoch). Skipped by ``--quick``.

All times are single-threaded CPU time of this process (see :func:`side_by_side`).

``python benchmarks/lorentz_layers.py --quick`` (<= 60 s) prints as its last line
``PLFC/Linear fwd+bwd @256: X.XX``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz import PLFC, GyroLBN, asinh
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN, LorentzFC, PoincareLinear


def _timer(fn, backward: bool):
    def run():
        out = fn()
        if backward:
            out.sum().backward()

    return run


def side_by_side(cases: dict, reps: int, inner: int) -> dict[str, float]:
    """Median CPU seconds per call of each case, repetitions interleaved across cases.

    CPU time of this process (``time.process_time``), not wall clock: on a machine shared with other
    jobs wall-clock ratios swing by 5x between runs, CPU time does not (with one torch thread it is
    the op's cost)."""
    times: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():  # warm-up
        fn()
    for _ in range(reps):
        for k, fn in cases.items():
            t0 = time.process_time()
            for _ in range(inner):
                fn()
            times[k].append((time.process_time() - t0) / inner)
    return {k: statistics.median(v) for k, v in times.items()}


def layer_table(widths, batch: int, reps: int, work: int = 2048) -> dict[int, dict[str, tuple[float, float]]]:
    out = {}
    for w in widths:
        torch.manual_seed(0)
        xe = torch.randn(batch, w).requires_grad_()
        xl = L.expmap0(F.pad(torch.randn(batch, w) / w**0.5, (1, 0))).detach().requires_grad_()
        xp = L.to_poincare(xl).detach().requires_grad_()
        layers = {
            "Linear": (nn.Linear(w, w), xe),
            "PLFC": (PLFC(w, w), xl),
            "LorentzFC": (LorentzFC(w, w), xl),
            "PoincareFC": (PoincareLinear(w, w), xp),
        }
        inner = max(1, work // w)
        res = {}
        for bwd in (False, True):
            cases = {k: _timer(lambda m=m, x=x: m(x), bwd) for k, (m, x) in layers.items()}
            if not bwd:
                with torch.no_grad():
                    res[bwd] = side_by_side(cases, reps, inner)
            else:
                res[bwd] = side_by_side(cases, reps, inner)
        out[w] = {k: (res[False][k] / res[False]["Linear"], res[True][k] / res[True]["Linear"]) for k in layers}
    return out


def bn_table(n: int, d: int, reps: int) -> dict[str, float]:
    torch.manual_seed(0)
    x = L.expmap0(F.pad(torch.randn(n, d) / d**0.5, (1, 0))).detach().requires_grad_()
    bns = {"GyroLBN": GyroLBN(d), "GyroBN (Karcher)": GyroBN(d, iters=10), "LBN (HCNN)": LorentzBN(d)}
    t = side_by_side({k: _timer(lambda m=m: m(x), True) for k, m in bns.items()}, reps, 1)
    return {k: (v, v / t["GyroLBN"]) for k, v in t.items()}


def asinh_table(reps: int, n: int = 2**20) -> dict[str, float]:
    """CPU seconds of forward+backward of ``torch.asinh`` and :func:`hgutils.nn.lorentz.asinh`."""
    x = (torch.randn(n) * 3).requires_grad_()
    cases = {"torch.asinh": _timer(lambda: torch.asinh(x), True), "asinh": _timer(lambda: asinh(x), True)}
    return side_by_side(cases, reps, 1)


def resnet_epoch_times(reps: int) -> dict[str, float]:
    from hgutils.experiments.nb04_ilnn_cifar_genomics import ILNNConfig
    from hgutils.nn.resnets import resnet

    cfg = ILNNConfig.from_scale("medium")
    x = torch.rand(cfg.batch_size, 3, 32, 32)
    y = torch.randint(0, 10, (cfg.batch_size,))
    steps = -(-cfg.cifar_train // cfg.batch_size)
    out = {}
    for fl in ("euclidean", "hcnn", "ilnn"):
        torch.manual_seed(0)
        m = resnet(fl, cfg.depth, 10, cfg.widths)
        opt = torch.optim.SGD(m.parameters(), lr=0.01)

        def step(m=m, opt=opt):
            loss = F.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

        step()
        ts = []
        for _ in range(reps):
            t0 = time.process_time()
            step()
            ts.append(time.process_time() - t0)
        out[fl] = statistics.median(ts) * steps
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="<= 60 s: fewer repetitions, no ResNet epochs")
    args = ap.parse_args()
    torch.set_num_threads(1)  # CPU-time ratios of single-threaded ops
    reps = 3 if args.quick else 15
    work = 256 if args.quick else 2048
    widths = (16, 64, 256, 1024)
    print(f"torch {torch.__version__}, 1 thread, CPU time, batch 512, float32")
    table = layer_table(widths, 512, reps, work)
    print("\nlayer cost / nn.Linear (same width in and out)      fwd     fwd+bwd")
    for w, row in table.items():
        for k, (f, fb) in row.items():
            if k != "Linear":
                print(f"  width {w:5d}  {k:12s}                      {f:6.2f}x  {fb:6.2f}x")
    bn = bn_table(1024 if args.quick else 8192, 64, 3 if args.quick else 7)
    print("\nbatch norm fwd+bwd on [N, 64+1] points        CPU s     / GyroLBN")
    for k, (t, r) in bn.items():
        print(f"  {k:20s}                     {t:8.4f}   {r:6.2f}x")
    at = asinh_table(3 if args.quick else 9)
    print(
        f"\nasinh fwd+bwd on 2^20 floats: torch.asinh {1e3 * at['torch.asinh']:.1f} ms, hgutils asinh "
        f"{1e3 * at['asinh']:.1f} ms ({at['torch.asinh'] / at['asinh']:.1f}x)"
    )
    if not args.quick:
        ep = resnet_epoch_times(3)
        print("\nResNet time per epoch at the medium preset (estimated from timed steps)")
        for k, v in ep.items():
            print(f"  {k:10s} {v:8.1f} s   ({v / ep['euclidean']:.2f}x Euclidean)")
    print(f"PLFC/Linear fwd+bwd @256: {table[256]['PLFC'][1]:.2f}")


if __name__ == "__main__":
    main()
