"""Benchmark: batched pullback metrics vs a per-point loop, and all-pairs similarity matrices.

1. Pullback metrics of 4,096 points on a 2-D manifold through a 3-hidden-layer width-256 ReLU MLP:
   ``vmap(jacfwd)``, ``vmap(jacrev)`` and ``mode="rows"`` (hgutils.similarity.pullback_metric) vs
   per-point loops (``jacfwd`` per point, and ``torch.autograd.functional.jacobian``). Loops are
   timed on a subset and scaled to 4,096 points (they are linear in the number of points).
2. ``msa_matrix`` for 40 stacked MLPs (the medium sweep's model count) at the medium sweep's grid,
   split into the O(M·P) Jacobian part and the O(M²·P) spectral-ratio part, next to the baseline
   matrices (CKA, CCA, SVCCA, RSA, Procrustes) on the same 40 hidden representations.

Usage: ``python benchmarks/similarity.py [--quick]``; the last line is the headline
``vmap/loop speedup: X.XX`` = per-point ``jacfwd`` loop time / ``vmap(jacfwd)`` time (same Jacobian
method, batched vs not; the textbook ``autograd.functional.jacobian`` loop, 256 backward passes per
point, is a further row).
"""

from __future__ import annotations

import argparse
import time

import torch

from hgutils.similarity import (
    cca_matrix,
    linear_cka_matrix,
    mlp_layer_fn,
    mlp_pullback_metrics,
    msa_matrix_from_metrics,
    procrustes_matrix,
    pullback_metric,
    rsa_matrix,
    svcca_matrix,
)
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward


def timeit(fn, repeat: int = 1) -> float:
    fn()  # warm-up (torch.func tracing, allocator)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller loop subset and grids (<= 60 s)")
    args = ap.parse_args()
    torch.manual_seed(0)
    n_points, width = 4096, 256
    loop_points = 64 if args.quick else 512
    repeat = 1 if args.quick else 3

    params = init_mlp(
        1, (2, width, width, width, 3), scheme="normal", gain=1.0, generator=torch.Generator().manual_seed(0)
    )
    f = mlp_layer_fn(params, 2, net=0)  # third hidden layer, [2] -> [256]
    pts = torch.rand(n_points, 2) * 4 - 2

    t_fwd = timeit(lambda: pullback_metric(f, pts, mode="fwd"), repeat)
    t_rows = timeit(lambda: pullback_metric(f, pts, mode="rows"), repeat)
    rev_points = 128 if args.quick else 1024
    t_rev = timeit(lambda: pullback_metric(f, pts[:rev_points], mode="rev"), repeat) * n_points / rev_points
    jac1 = torch.func.jacfwd(f)

    def loop():  # the same forward-mode Jacobian, one point at a time
        out = []
        for p in pts[:loop_points]:
            J = jac1(p)  # [256, 2]
            out.append(J.T @ J)
        return torch.stack(out)

    def loop_autograd():  # the textbook version: torch.autograd.functional.jacobian per point
        return torch.stack([(lambda J: J.T @ J)(torch.autograd.functional.jacobian(f, p)) for p in pts[:loop_ag]])

    loop_ag = 8 if args.quick else 32
    t_loop = timeit(loop, 1) * n_points / loop_points
    t_loop_ag = timeit(loop_autograd, 1) * n_points / loop_ag
    # correctness check of the batched result against the loop on the subset
    err = (pullback_metric(f, pts[:loop_points]) - loop()).abs().max().item()

    print(f"pullback metrics, {n_points} points, 3x{width} ReLU MLP (layer 3), max |diff| vs loop {err:.1e}")
    print(f"{'method':<40}{'seconds':>10}{'points/s':>12}{'vs loop':>10}")
    rows = [
        ("vmap(jacfwd)", t_fwd),
        ("rows: 2 batched JVPs", t_rows),
        (f"vmap(jacrev) ({rev_points} pts, scaled)", t_rev),
        (f"loop jacfwd per point ({loop_points} pts, scaled)", t_loop),
        (f"loop autograd jacobian ({loop_ag} pts, scaled)", t_loop_ag),
    ]
    for name, t in rows:
        print(f"{name:<40}{t:>10.3f}{n_points / t:>12.0f}{t_loop / t:>10.2f}")

    # --- all-pairs matrices for 40 models --------------------------------------------------
    M, hidden, grid = 40, 128, (24 if args.quick else 32)
    zoo = init_mlp(M, (2, hidden, hidden, 5), scheme="normal", generator=torch.Generator().manual_seed(1))
    g = torch.linspace(-2, 2, grid)
    P = torch.cartesian_prod(g, g)
    t0 = time.perf_counter()
    G = mlp_pullback_metrics(zoo, P, layer=1)
    t_jac = time.perf_counter() - t0
    t0 = time.perf_counter()
    msa_matrix_from_metrics(G)
    t_pairs = time.perf_counter() - t0
    n_rep = 250 if args.quick else 500
    X = torch.rand(n_rep, 2) * 4 - 2
    with torch.no_grad():
        reps = list(mlp_forward(zoo, X, layer=1).numpy())
    times = {}
    for name, fn in [
        ("linear CKA", linear_cka_matrix),
        ("CCA", cca_matrix),
        ("SVCCA (<= 10 directions)", lambda r: svcca_matrix(r, keep=0.99, max_components=10)),
        ("RSA", rsa_matrix),
        ("Procrustes", procrustes_matrix),
    ]:
        t0 = time.perf_counter()
        fn(reps)
        times[name] = time.perf_counter() - t0
    print(
        f"\nall-pairs matrices, M={M} MLPs (2-{hidden}-{hidden}-5), MSA on a {grid}x{grid} grid, "
        f"baselines on {n_rep} samples"
    )
    print(f"{'part':<36}{'seconds':>10}")
    print(f"{'MSA Jacobians (O(M*P), batched JVPs)':<36}{t_jac:>10.3f}")
    print(f"{'MSA spectral ratios (O(M^2*P))':<36}{t_pairs:>10.3f}")
    for name, t in times.items():
        print(f"{name + ' matrix':<36}{t:>10.3f}")
    total = t_jac + t_pairs + sum(times.values())
    print(f"{'total (all six measures)':<36}{total:>10.3f}")
    print(f"vmap/loop speedup: {t_loop / t_fwd:.2f}")


if __name__ == "__main__":
    main()
