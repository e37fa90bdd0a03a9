"""Speed of :mod:`hgutils.manifolds` versus geoopt, measured side by side in one run.

Per op: the same operation on the same inputs (batch 4096 x 64, float32, c = 1), forward + backward
(``out.sum().backward()``), hgutils and geoopt called alternately; the table shows the median call
of each and the median of the paired ratios (< 1 means hgutils is faster). Times are process CPU time by default (one
torch thread): on a shared machine wall-clock time mostly measures preemption by other processes;
``--wall`` uses the wall clock instead. geoopt is called through its pure math
functions (``geoopt.manifolds.stereographic.math`` with k = -c, ``geoopt.manifolds.lorentz.math``
with k = 1/c), i.e. without the manifold classes' optional projections, so both sides do the same
math. Ops geoopt lacks (affine) are compared with the composition of geoopt ops.

Second part: the Einstein-midpoint scatter over a graph's edges (``index_add``) versus a dense
per-node Python loop calling the dense midpoint, on a 10k-edge graph.

Usage::

    python benchmarks/manifolds.py            # full (a few minutes on a busy 2-core machine)
    python benchmarks/manifolds.py --quick    # <= 60 s; last line: worst hgutils/geoopt ratio: X.XX
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable

import torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import geoopt.manifolds.lorentz.math as glmath
    import geoopt.manifolds.stereographic.math as gmath

from hgutils.manifolds import poincare as P

try:  # the Lorentz module is written by another helper; benchmark it when it is importable
    from hgutils.manifolds import lorentz as L
except Exception as exc:  # noqa: BLE001 - report and continue with the Poincaré table
    L = None
    _LORENTZ_ERROR = f"{type(exc).__name__}: {exc}"
else:
    _LORENTZ_ERROR = ""

Op = tuple[str, Callable[[], torch.Tensor], Callable[[], torch.Tensor]]


def _fwd_bwd(fn: Callable[[], torch.Tensor], leaves: list[torch.Tensor]) -> None:
    for t in leaves:
        t.grad = None
    fn().sum().backward()


# Process CPU time by default: on a shared machine (here 2 cores, ~7 busy agents) wall-clock time
# mostly measures preemption, while the CPU time of a single-threaded run is the op's own cost.
# ``--wall`` switches to wall-clock time (use it on a quiet machine or with several threads).
CLOCK: Callable[[], float] = time.process_time


def _time(fn: Callable[[], torch.Tensor], leaves: list[torch.Tensor], iters: int) -> float:
    t0 = CLOCK()
    for _ in range(iters):
        _fwd_bwd(fn, leaves)
    return (CLOCK() - t0) / iters


def compare(
    ops: list[tuple[str, Callable, Callable, list[torch.Tensor]]], calls: int
) -> list[tuple[str, float, float, float]]:
    """Per op: median seconds of each side and the median of the paired ratios hgutils/geoopt.

    The two sides are called alternately (order flipped every pair), so a pair shares the load that
    other processes put on the machine; the median over pairs discards the disturbed ones.
    """
    rows = []
    for name, f_hg, f_geo, leaves in ops:
        for _ in range(3):  # warm-up (geoopt's TorchScript profiles its first calls)
            _fwd_bwd(f_hg, leaves)
            _fwd_bwd(f_geo, leaves)
        t_hg, t_geo = [], []
        for i in range(calls):
            if i % 2 == 0:
                t_hg.append(_time(f_hg, leaves, 1))
                t_geo.append(_time(f_geo, leaves, 1))
            else:
                t_geo.append(_time(f_geo, leaves, 1))
                t_hg.append(_time(f_hg, leaves, 1))
        ratio = statistics.median(a / b for a, b in zip(t_hg, t_geo))
        rows.append((name, statistics.median(t_hg), statistics.median(t_geo), ratio))
    return rows


def poincare_ops(batch: int, dim: int, c: float, gen: torch.Generator) -> list:
    k = torch.tensor(-c)  # geoopt stereographic curvature

    def leaf(t: torch.Tensor) -> torch.Tensor:
        return t.detach().requires_grad_(True)

    def ball_pts(scale: float) -> torch.Tensor:
        return P.expmap0(torch.randn(batch, dim, generator=gen) * scale / math.sqrt(dim), c)

    x, y = leaf(ball_pts(1.5)), leaf(ball_pts(1.5))
    u = leaf(torch.randn(batch, dim, generator=gen) * 0.5 / math.sqrt(dim))
    a = leaf(torch.randn(batch, dim, generator=gen))
    W = leaf(torch.randn(dim, dim, generator=gen) / math.sqrt(dim))
    b = leaf(torch.randn(dim, generator=gen) * 0.1)
    outside = leaf(torch.randn(batch, dim, generator=gen))  # half in, half out of the unit ball
    with torch.no_grad():
        outside[::2] *= 0.1 / math.sqrt(dim)
    r = torch.tensor(0.7)
    n_per = 16
    mp = leaf(ball_pts(1.5).reshape(batch // n_per, n_per, dim))
    mw = leaf(torch.rand(batch // n_per, n_per, generator=gen) + 0.1)
    return [
        ("mobius_add", lambda: P.mobius_add(x, y, c), lambda: gmath.mobius_add(x, y, k=k), [x, y]),
        ("mobius_scalar", lambda: P.mobius_scalar(r, x, c), lambda: gmath.mobius_scalar_mul(r, x, k=k), [x]),
        ("mobius_matvec", lambda: P.mobius_matvec(W, x, c), lambda: gmath.mobius_matvec(W, x, k=k), [W, x]),
        ("expmap0", lambda: P.expmap0(u, c), lambda: gmath.expmap0(u, k=k), [u]),
        ("logmap0", lambda: P.logmap0(y, c), lambda: gmath.logmap0(y, k=k), [y]),
        ("expmap", lambda: P.expmap(x, u, c), lambda: gmath.expmap(x, u, k=k), [x, u]),
        ("logmap", lambda: P.logmap(x, y, c), lambda: gmath.logmap(x, y, k=k), [x, y]),
        ("dist", lambda: P.dist(x, y, c), lambda: gmath.dist(x, y, k=k), [x, y]),
        ("transp0", lambda: P.transp0(y, u, c), lambda: gmath.parallel_transport0(y, u, k=k), [y, u]),
        ("project", lambda: P.project(outside, c), lambda: gmath.project(outside, k=k), [outside]),
        ("lambda_x", lambda: P.lambda_x(x, c), lambda: gmath.lambda_x(x, k=k), [x]),
        (
            "dist2plane",
            lambda: P.dist2plane(x, y, a, c, signed=True),
            lambda: gmath.dist2plane(x, y, a, k=k, signed=True),
            [x, y, a],
        ),
        (
            f"einstein_midpoint [{batch // n_per},{n_per},{dim}]",
            lambda: P.einstein_midpoint(mp, mw, c, dim=-2),
            lambda: gmath.weighted_midpoint(mp, mw, k=k, reducedim=[-2]),
            [mp, mw],
        ),
        (
            "affine (geoopt: composed)",
            lambda: P.affine(x, W, b, c),
            lambda: gmath.mobius_add(gmath.mobius_matvec(W, x, k=k), gmath.expmap0(b, k=k), k=k),
            [x, W, b],
        ),
    ]


def lorentz_ops(batch: int, dim: int, c: float, gen: torch.Generator) -> list:
    k = torch.tensor(1.0 / c)  # geoopt Lorentz(k): <x, x>_L = -k

    def leaf(t: torch.Tensor) -> torch.Tensor:
        return t.detach().requires_grad_(True)

    def tangent0(scale: float) -> torch.Tensor:
        v = torch.randn(batch, dim + 1, generator=gen) * scale / math.sqrt(dim)
        v[:, 0] = 0
        return v

    x = leaf(L.expmap0(tangent0(1.5), c))
    y = leaf(L.expmap0(tangent0(1.5), c))
    u0 = leaf(tangent0(0.5))
    with torch.no_grad():  # a tangent vector at x: transport u0 from the origin
        ux = glmath.parallel_transport0(x, u0, k=k)
    ux = leaf(ux)
    return [
        ("lorentz.dist", lambda: L.dist(x, y, c), lambda: glmath.dist(x, y, k=k), [x, y]),
        ("lorentz.expmap0", lambda: L.expmap0(u0, c), lambda: glmath.expmap0(u0, k=k), [u0]),
        ("lorentz.logmap0", lambda: L.logmap0(y, c), lambda: glmath.logmap0(y, k=k), [y]),
        ("lorentz.expmap", lambda: L.expmap(x, ux, c), lambda: glmath.expmap(x, ux, k=k), [x, ux]),
        ("lorentz.logmap", lambda: L.logmap(x, y, c), lambda: glmath.logmap(x, y, k=k), [x, y]),
        ("lorentz.transp", lambda: L.transp(x, y, ux, c), lambda: glmath.parallel_transport(x, y, ux, k=k), [x, y, ux]),
    ]


def scatter_vs_loop(
    num_edges: int, num_nodes: int, dim: int, c: float, gen: torch.Generator, rounds: int
) -> tuple[float, float, float]:
    """Seconds per forward+backward: scatter midpoint, dense per-node loop; and their max difference."""
    p_src = P.expmap0(torch.randn(num_edges, dim, generator=gen) * 1.5 / math.sqrt(dim), c)
    p_src.requires_grad_(True)
    w = (torch.rand(num_edges, generator=gen) + 0.1).requires_grad_(True)
    index = torch.randint(0, num_nodes, (num_edges,), generator=gen)
    # per-node edge lists precomputed outside the timing (favours the loop)
    order = torch.argsort(index)
    counts = torch.bincount(index, minlength=num_nodes).tolist()
    groups = list(torch.split(order, counts))

    def scatter() -> torch.Tensor:
        return P.einstein_midpoint_scatter(p_src, w, index, num_nodes, c)

    def loop() -> torch.Tensor:
        rows = []
        for g in groups:
            if len(g) == 0:
                rows.append(p_src.new_zeros(dim))
            else:
                rows.append(P.einstein_midpoint(p_src[g], w[g], c, dim=-2))
        return torch.stack(rows)

    leaves = [p_src, w]
    _fwd_bwd(scatter, leaves)
    t_s = min(_time(scatter, leaves, 1) for _ in range(10 * rounds))
    t_l = math.inf
    for _ in range(rounds):  # each loop call is seconds long: no separate warm-up
        for t in leaves:
            t.grad = None
        t0 = CLOCK()
        dense = loop()
        dense.sum().backward()
        t_l = min(t_l, CLOCK() - t0)
    with torch.no_grad():
        diff = float((scatter() - dense).abs().max())
    return t_s, t_l, diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (<= 60 s)")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--wall", action="store_true", help="time with the wall clock instead of process CPU time")
    args = ap.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter
    torch.set_num_threads(args.threads)
    torch.set_default_dtype(torch.float32)
    gen = torch.Generator().manual_seed(args.seed)
    calls = 16 if args.quick else 60
    c = 1.0
    t_start = time.perf_counter()

    ops = poincare_ops(args.batch, args.dim, c, gen)
    if L is not None:
        try:
            ops += lorentz_ops(args.batch, args.dim, c, gen)
        except Exception as exc:  # noqa: BLE001
            print(f"(lorentz ops skipped: {type(exc).__name__}: {exc})")
    else:
        print(f"(lorentz ops skipped: hgutils.manifolds.lorentz does not import: {_LORENTZ_ERROR})")
    rows = compare(ops, calls)

    print(
        f"hgutils vs geoopt, batch {args.batch} x {args.dim}, float32, forward+backward, "
        f"{torch.get_num_threads()} thread(s), {calls} alternating calls each (median; ratio = median of "
        f"paired ratios), "
        f"{'wall-clock' if args.wall else 'process CPU'} time"
    )
    w = max(len(r[0]) for r in rows)
    print(f"{'op':<{w}}  {'hgutils ms':>10}  {'geoopt ms':>9}  {'ratio':>5}")
    for name, th, tg, ratio in rows:
        print(f"{name:<{w}}  {th * 1e3:10.3f}  {tg * 1e3:9.3f}  {ratio:5.2f}")

    t_s, t_l, diff = scatter_vs_loop(10_000, 1_000, args.dim, c, gen, 1 if args.quick else 3)
    print(
        f"Einstein midpoint, 10000 edges -> 1000 nodes, d={args.dim}, forward+backward: "
        f"scatter {t_s * 1e3:.2f} ms, per-node loop {t_l * 1e3:.1f} ms, speed-up {t_l / t_s:.1f}x "
        f"(max |scatter - loop| = {diff:.2e})"
    )
    print(f"total benchmark time {time.perf_counter() - t_start:.1f} s")
    worst = max(rows, key=lambda r: r[3])
    print(f"worst op: {worst[0]}")
    print(f"worst hgutils/geoopt ratio: {worst[3]:.2f}")


if __name__ == "__main__":
    main()
