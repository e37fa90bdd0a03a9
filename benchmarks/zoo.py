"""INR-zoo throughput: batched trainer vs the per-network loop public INR sets were made with.

Measured side by side in one run, on the same MNIST images, same SIREN (2 -> 32 -> 32 -> 1, omega0 30),
same initialisation and the same number of Adam steps (lr 5e-4):

- ``loop``     -- one ``nn.Sequential`` SIREN + ``torch.optim.Adam`` per image, one after the other;
- ``naive``    -- :func:`hgutils.weightspace.batched_training.train_stacked` with autograd through
  :func:`mlp_forward` on all images at once (one big ``bmm`` batch);
- ``batched``  -- the zoo's path: hand-written SIREN gradients
  (:func:`hgutils.weightspace.zoo.siren_mse_value_and_grad`, separable first layer on the pixel
  grid), flat Adam buffers, and the batch size chosen by measurement
  (:func:`hgutils.weightspace.zoo.auto_batch_size`).

Reported: network-steps/s, achieved GFLOP/s (3 x forward matmul FLOPs per step), the large-GEMM
GFLOP/s of this machine in the same run, mean final PSNR of each method on the images all of them
fitted (equal arithmetic => equal PSNR), and the memory of 1,000 INRs x T = 100 snapshots.

Denormals: on MNIST (black backgrounds) the per-network loop hits float32 denormal slow paths in
autograd's reductions and runs ~7x slower per CPU-second than on random targets; the batched paths
do not. So that the baseline is not handicapped, every method runs with
``torch.set_flush_denormal(True)`` (pass ``--no-flush`` to see the loop as usually run).

Usage: ``python benchmarks/zoo.py [--quick] [--threads K] [--no-flush]``; the last line is
``batched/loop speedup: X.XX``. Rates are wall-clock; "per CPU-second" rates (process time) are
also printed because they are robust to other jobs on a shared machine when ``--threads 1``.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HGUTILS_PROGRESS", "0")

import torch  # noqa: E402

from hgutils.data import load_images  # noqa: E402
from hgutils.weightspace.batched_training import train_stacked  # noqa: E402
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward  # noqa: E402
from hgutils.weightspace.zoo import (  # noqa: E402
    MLPSpec,
    Zoo,
    auto_batch_size,
    fit_sirens,
    image_coordinates,
    net_seeds,
    psnr,
)

SIZES = (2, 32, 32, 1)
OMEGA0 = 30.0
LR = 5e-4


class _Sine(torch.nn.Module):
    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sin(OMEGA0 * z)


def gemm_gflops(n: int = 2048, reps: int = 3) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def flops_per_step(n_points: int) -> float:
    fwd = 2 * n_points * sum(SIZES[i] * SIZES[i + 1] for i in range(len(SIZES) - 1))
    return 3.0 * fwd


def run_loop(x: torch.Tensor, y: torch.Tensor, init: dict, steps: int) -> tuple[float, float, torch.Tensor]:
    n = y.shape[0]
    losses = torch.empty(n)
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        net = torch.nn.Sequential(
            torch.nn.Linear(2, 32), _Sine(), torch.nn.Linear(32, 32), _Sine(), torch.nn.Linear(32, 1)
        )
        with torch.no_grad():
            for l in range(3):
                net[2 * l].weight.copy_(init[f"W{l}"][i])
                net[2 * l].bias.copy_(init[f"b{l}"][i])
        opt = torch.optim.Adam(net.parameters(), lr=LR)
        for _ in range(steps):
            opt.zero_grad()
            loss = ((net(x) - y[i]) ** 2).mean()
            loss.backward()
            opt.step()
        with torch.no_grad():
            losses[i] = ((net(x) - y[i]) ** 2).mean()
    return n * steps / (time.perf_counter() - t0), n * steps / (time.process_time() - c0), losses


def run_naive(x: torch.Tensor, y: torch.Tensor, init: dict, steps: int) -> tuple[float, float, torch.Tensor]:
    def loss_fn(p: dict) -> torch.Tensor:
        return ((mlp_forward(p, x, "sine", omega0=OMEGA0) - y) ** 2).mean(dim=(1, 2))

    t0, c0 = time.perf_counter(), time.process_time()
    res = train_stacked(init, loss_fn, steps=steps, lr=LR)
    k = y.shape[0] * steps
    return k / (time.perf_counter() - t0), k / (time.process_time() - c0), res.losses


def run_batched(
    x: torch.Tensor, y: torch.Tensor, seeds: list[int], steps: int, batch: int
) -> tuple[float, float, torch.Tensor]:
    spec = MLPSpec(SIZES, "sine", OMEGA0)
    t0, c0 = time.perf_counter(), time.process_time()
    out = fit_sirens(
        x,
        y,
        spec,
        init="siren",
        seeds=seeds,
        steps=steps,
        snapshot_steps=[0, steps],
        lr=LR,
        batch_size=batch,
        grid=(28, 28),
    )
    k = y.shape[0] * steps
    return k / (time.perf_counter() - t0), k / (time.process_time() - c0), out["final_loss"]


def memory_table() -> list[tuple[str, float]]:
    n_params = sum(SIZES[i] * SIZES[i + 1] + SIZES[i + 1] for i in range(len(SIZES) - 1))
    rows = []
    for dt in (torch.float32, torch.float16):
        params = {}
        for l in range(len(SIZES) - 1):
            params[f"W{l}"] = torch.empty(1000, 100, SIZES[l + 1], SIZES[l], dtype=dt)
            params[f"b{l}"] = torch.empty(1000, 100, SIZES[l + 1], dtype=dt)
        z = Zoo(MLPSpec(SIZES, "sine", OMEGA0), params, torch.arange(100))
        assert z.nbytes() == 1000 * 100 * n_params * torch.finfo(dt).bits // 8
        rows.append((str(dt).replace("torch.", ""), z.nbytes() / 2**20))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="<= 60 s: fewer steps, fewer loop networks")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--n", type=int, default=256, help="INRs (MNIST images) for the batched methods")
    ap.add_argument("--steps", type=int, default=None, help="Adam steps per INR")
    ap.add_argument("--n-loop", type=int, default=None, help="INRs for the per-network loop")
    ap.add_argument("--no-flush", action="store_true", help="keep float32 denormals (slow loop on MNIST)")
    args = ap.parse_args()
    torch.set_flush_denormal(not args.no_flush)
    if args.threads:
        torch.set_num_threads(args.threads)
    steps = args.steps or (30 if args.quick else 200)
    n_loop = args.n_loop or (6 if args.quick else 32)
    n = args.n if not args.quick else min(args.n, 128)

    imgs = load_images("mnist", split="train", limit=n).images
    x = image_coordinates(28, 28)
    y = imgs.flatten(2).transpose(1, 2).contiguous()  # [n, 784, 1]
    seeds = net_seeds(0, 0, n)
    init = init_mlp(n, SIZES, scheme="siren", omega0=OMEGA0, seeds=seeds)
    threads = torch.get_num_threads()

    g = gemm_gflops(1024 if args.quick else 2048)
    t0 = time.perf_counter()
    batch = auto_batch_size(x.shape[0], SIZES, omega0=OMEGA0, steps=3 if args.quick else 6, grid=(28, 28))
    t_auto = time.perf_counter() - t0
    # warm-up, untimed: the first calls of each path pay one-off dispatch/kernel set-up costs
    # (measured: the loop runs ~5x slower in its first ~200 steps in a fresh process)
    run_loop(x, y[:2], {k: v[:2] for k, v in init.items()}, 60)
    run_naive(x, y[:8], {k: v[:8] for k, v in init.items()}, 10)
    run_batched(x, y[:batch], seeds[:batch], 10, batch)
    rate_b, cpu_b, loss_b = run_batched(x, y, seeds, steps, batch)
    rate_l, cpu_l, loss_l = run_loop(x, y[:n_loop], {k: v[:n_loop] for k, v in init.items()}, steps)
    n_naive = n if not args.quick else 32
    rate_n, cpu_n, loss_n = run_naive(x, y[:n_naive], {k: v[:n_naive] for k, v in init.items()}, steps)
    fl = flops_per_step(x.shape[0])

    def ps(losses: torch.Tensor) -> float:
        return float(psnr(losses[:n_loop]).mean())

    print(f"# INR zoo benchmark: MNIST 28x28, SIREN {SIZES}, Adam lr {LR}, {steps} steps, torch threads {threads}")
    print(
        f"# large GEMM: {g:.1f} GFLOP/s; auto batch size {batch} (chosen in {t_auto:.1f} s); "
        f"flush denormals: {not args.no_flush}"
    )
    print(
        f"| method | INRs | network-steps/s (wall) | per CPU-second | GFLOP/s (wall) | % of GEMM | "
        f"mean PSNR (first {n_loop}) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, nn_, rate, cpu, losses in (
        ("per-network loop (nn.Sequential + Adam)", n_loop, rate_l, cpu_l, loss_l),
        ("naive batched (autograd bmm, one batch)", n_naive, rate_n, cpu_n, loss_n),
        (f"batched (fused SIREN grads, batch {batch})", n, rate_b, cpu_b, loss_b),
    ):
        gf = rate * fl / 1e9
        print(f"| {name} | {nn_} | {rate:,.0f} | {cpu:,.0f} | {gf:.1f} | {100 * gf / g:.0f}% | {ps(losses):.2f} dB |")
    print("# memory per 1,000 INRs x T=100 snapshots: " + ", ".join(f"{d} {mb:.0f} MiB" for d, mb in memory_table()))
    dpsnr = abs(ps(loss_b) - ps(loss_l))
    print(f"# |PSNR batched - PSNR loop| = {dpsnr:.4f} dB (same init, same arithmetic)")
    print(
        f"# per CPU-second (robust to other load when threads=1): naive/loop {cpu_n / cpu_l:.2f}, "
        f"batched/loop {cpu_b / cpu_l:.2f}"
    )
    print(f"# naive/loop speedup (wall): {rate_n / rate_l:.2f}")
    print(f"batched/loop speedup: {rate_b / rate_l:.2f}")


if __name__ == "__main__":
    main()
