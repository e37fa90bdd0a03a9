"""DWSNet's set attention: the fused attention kernel against the explicit bmm / softmax / bmm, side by side.

Usage::

    python benchmarks/dwsnet_attention.py            # 02's medium shapes, 7 rounds (~2 min)
    python benchmarks/dwsnet_attention.py --rounds 3

What is measured (one process, one thread, same model and batch): one DWSNet InfoNCE training step
(forward through the 5 DWS layers, the invariant pool and the 16-d encoder output, backward) on
notebook 02's medium shapes -- 1-32-32-1 sine INRs, 10 snapshots as channels, hidden 16, a batch of
32 networks and its augmented view passed together (64) -- with :class:`SetAttention` computing
``softmax(Q K^T / sqrt(C')) V`` by ``torch.nn.functional.scaled_dot_product_attention`` (the
library) or by the explicit formula (the reference's code). Rounds alternate the two; each round
times ``--steps`` steps. The outputs agree to float32 rounding (printed). The last line is the
headline ``DWSNet training step, fused/explicit attention: X.XX`` (process CPU time, median over rounds).
Measured on the 2-core development machine: 0.90 (7 rounds x 5 steps) and 0.97 (9 x 8), with single
rounds spread over 420-910 ms: a gain of a few per cent at most. (A hand-written encoder on contiguous
inputs, the first version of this benchmark, read 0.80.)
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch

from hgutils.weightspace.metanets.dws import DWSNet, SetAttention
from hgutils.weightspace.zoo import MLPSpec, Zoo

SIZES, T = (1, 32, 32, 1), 10


def explicit_forward(self: SetAttention, x: torch.Tensor) -> torch.Tensor:
    """The reference's SAB (``AvivNavon/DWSNets``, Set Transformer's ``MAB`` without layer norm)."""
    B, n, _ = x.shape
    H, s = self.heads, self.cout // self.heads
    q, k, v = (f(x).view(B, n, H, s).transpose(1, 2) for f in (self.q, self.k, self.v))
    a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.cout), -1)
    o = (q + a @ v).transpose(1, 2).reshape(B, n, self.cout)
    return o + torch.relu(self.o(o))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64, help="networks per step (02: 32 plus their augmented view)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = DWSNet("infonce", 16, SIZES, T, snapshots="all")
    model.train()
    g = torch.Generator().manual_seed(0)
    params = {}
    for i in range(len(SIZES) - 1):  # random sine-INR-shaped weights: timing depends only on the shapes
        params[f"W{i}"] = torch.randn(args.batch, T, SIZES[i + 1], SIZES[i], generator=g)
        params[f"b{i}"] = torch.randn(args.batch, T, SIZES[i + 1], generator=g)
    zoo = Zoo(MLPSpec(SIZES, "sine", 30.0), params, torch.arange(T), {})
    batch = model.prepare(zoo)[torch.arange(args.batch)]

    def encode() -> torch.Tensor:
        return model.embed(batch)

    fused_forward = SetAttention.forward
    torch.manual_seed(1)
    y_fused = encode()
    SetAttention.forward = explicit_forward  # type: ignore[method-assign]
    torch.manual_seed(1)
    y_explicit = encode()
    print(f"max |fused - explicit| of the 16-d output: {(y_fused - y_explicit).abs().max().item():.2e}")

    def step_cpu() -> float:
        t0 = time.process_time()
        for _ in range(args.steps):
            model.zero_grad(set_to_none=True)
            encode().square().mean().backward()
        return (time.process_time() - t0) / args.steps

    times: dict[str, list[float]] = {"fused": [], "explicit": []}
    for fwd in (fused_forward, explicit_forward):  # warm-up
        SetAttention.forward = fwd  # type: ignore[method-assign]
        step_cpu()
    for _ in range(args.rounds):
        for kind, fwd in (("fused", fused_forward), ("explicit", explicit_forward)):
            SetAttention.forward = fwd  # type: ignore[method-assign]
            times[kind].append(step_cpu())
    SetAttention.forward = fused_forward  # type: ignore[method-assign]
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items():
        span = f"range {min(v) * 1e3:.1f}-{max(v) * 1e3:.1f}"
        print(f"{k:>8}: {med[k] * 1e3:7.1f} ms per step (median of {len(v)}; {span})")
    print(f"DWSNet training step, fused/explicit attention: {med['fused'] / med['explicit']:.2f}")


if __name__ == "__main__":
    main()
