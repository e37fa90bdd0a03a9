"""Fitting many SIRENs at once: hand-written fused gradients and a measured batch size.

- :func:`siren_mse_value_and_grad` -- per-network MSE and its gradient without autograd;
- :func:`auto_batch_size` -- the fastest batch of networks on this machine, measured;
- :func:`fit_sirens` -- Adam on stacked SIRENs through :func:`hgutils.weightspace.batched_training.train_stacked`.

SIREN: Sitzmann et al. (2020), "Implicit Neural Representations with Periodic Activation Functions"
(arXiv:2006.09661), :math:`h_{l+1} = \\sin(\\omega_0 (W_l h_l + b_l))`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

from hgutils.weightspace.batched_training import train_stacked
from hgutils.weightspace.stacked_mlp import init_mlp
from hgutils.weightspace.zoo.containers import MLPSpec

log = logging.getLogger("hgutils")


def image_coordinates(h: int, w: int) -> Tensor:
    """Pixel coordinates ``[h*w, 2]`` on ``[-1, 1]^2``, row-major (x = column, y = row), as DWSNets."""
    ys = torch.linspace(-1.0, 1.0, h)
    xs = torch.linspace(-1.0, 1.0, w)
    yy, xx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([xx.reshape(-1), yy.reshape(-1)], dim=1)


def psnr(mse: Tensor, peak: float = 1.0) -> Tensor:
    """Peak signal-to-noise ratio :math:`10 \\log_{10}(\\text{peak}^2 / \\text{mse})` in dB."""
    return 10.0 * torch.log10(peak**2 / mse.clamp_min(1e-20))


def siren_mse_value_and_grad(
    x: Tensor, y: Tensor, omega0: float, output_offset: float = 0.0, grid: tuple[int, int] | None = None
) -> Callable[[Mapping[str, Tensor]], tuple[Tensor, Tensor]]:
    """Fused per-network MSE and its gradient for stacked SIRENs, without autograd.

    Forward (hidden layers :math:`l < L-1`, shared inputs ``x [P, in]``, targets ``y [n, P, out]``):

    .. math::
        a_l = \\omega_0 (h_l W_l^\\top + b_l),\\quad h_{l+1} = \\sin a_l,\\quad
        \\hat y = h_{L-1} W_{L-1}^\\top + b_{L-1} + c,\\quad \\ell = \\tfrac{1}{P\\,d_{out}}\\|\\hat y - y\\|^2.

    Backward: :math:`\\delta_{L-1} = \\tfrac{2}{P d_{out}} (\\hat y - y)`, and for hidden layers
    :math:`\\delta_l = (\\delta_{l+1} W_{l+1}) \\odot \\omega_0 \\cos a_l`; then
    :math:`\\partial W_l = \\delta_l^\\top h_l`, :math:`\\partial b_l = \\sum_p \\delta_l`.

    ``grid=(H, W)`` says that ``x`` is :func:`image_coordinates` ``(H, W)``: the first layer's
    argument then separates, :math:`a_0(r, c) = A(c) + B(r)` with :math:`A = \\omega_0(W_{0,:,0} x_c + b_0)`,
    :math:`B = \\omega_0 W_{0,:,1} y_r`, and :math:`\\sin a_0 = \\sin A \\cos B + \\cos A \\sin B`,
    :math:`\\cos a_0 = \\cos A \\cos B - \\sin A \\sin B` need transcendentals on ``H + W`` values
    instead of ``H W`` (the most expensive pass of a step; the identity is also more accurate in
    float32 than ``sin`` of the large rounded argument).

    Returns
    -------
    callable
        ``params -> (losses [n], grads [n, D])`` with ``grads`` flattened in the key order
        ``W0, b0, W1, b1, ...`` (the layout :func:`train_stacked` uses).
    """
    if x.dim() != 2 or y.dim() != 3 or y.shape[1] != x.shape[0]:
        raise ValueError(f"need x [P, in] and y [n, P, out] with the same P; got {tuple(x.shape)}, {tuple(y.shape)}")
    if grid is not None:
        H, Wd = grid
        if x.shape != (H * Wd, 2) or not torch.equal(x, image_coordinates(H, Wd).to(x)):
            raise ValueError(f"grid={grid} needs x = image_coordinates{grid} [{H * Wd}, 2]; got {tuple(x.shape)}")
        xs, ys = x[:Wd, 0], x[::Wd, 1]
    P, d_out = y.shape[1], y.shape[2]
    scale = 2.0 / (P * d_out)
    y_shift = y - output_offset if output_offset else y

    def fn(p: Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
        n = y.shape[0]
        L = len(p) // 2
        if L < 2:
            raise ValueError("a SIREN needs at least one hidden (sine) layer")
        # omega0 is folded into the (small) weights once, saving full passes over the activations:
        # a_l = h_l (w W_l)^T + w b_l, and with delta_l = dL/d(h_l W_l^T + b_l):
        # delta_{l-1} = (delta_l (w W_l)) * cos(a_{l-1}).
        wW = [p[f"W{l}"] * omega0 for l in range(L)]
        w1, d_in = wW[0].shape[1], wW[0].shape[2]
        # layer 0 (shared inputs) in pixel-major layout [P, n, w1]
        if grid is None:  # ONE GEMM for all networks
            a0 = torch.addmm((p["b0"] * omega0).reshape(-1), x, wW[0].reshape(n * w1, d_in).t()).view(P, n, w1)
            s0, c0 = torch.sin(a0), a0.cos_()
        else:  # separable: a0[r, c] = A[c] + B[r]
            A = torch.addmm((p["b0"] * omega0).reshape(1, -1), xs[:, None], wW[0][:, :, 0].reshape(1, -1))
            B = ys[:, None] * wW[0][:, :, 1].reshape(1, -1)
            sA, cA = torch.sin(A).view(1, Wd, n, w1), torch.cos(A).view(1, Wd, n, w1)
            sB, cB = torch.sin(B).view(H, 1, n, w1), torch.cos(B).view(H, 1, n, w1)
            s0 = torch.mul(sA, cB).addcmul_(cA, sB).view(P, n, w1)
            c0 = torch.mul(cA, cB).addcmul_(sA, sB, value=-1.0).view(P, n, w1)
        hs: list[Tensor] = [x, s0.transpose(0, 1)]  # layer inputs, as [n, P, w] views
        cs: list[Tensor] = [c0]  # cos(a_l); cs[0] is pixel-major
        for l in range(1, L - 1):
            a = torch.baddbmm((p[f"b{l}"] * omega0).unsqueeze(1), hs[l], wW[l].transpose(1, 2))
            hs.append(torch.sin(a))
            cs.append(a.cos_())
        W, b = p[f"W{L - 1}"], p[f"b{L - 1}"]
        r = torch.baddbmm(b.unsqueeze(1), hs[L - 1], W.transpose(1, 2)).sub_(y_shift)
        losses = r.square().mean(dim=(1, 2))
        d = r.mul_(scale)
        grads: list[Tensor] = [torch.empty(0)] * (2 * L)
        for l in range(L - 1, 0, -1):
            grads[2 * l] = torch.bmm(d.transpose(1, 2), hs[l]).reshape(n, -1)
            grads[2 * l + 1] = d.sum(dim=1)
            # d/dz of sin(w z) brings one factor w, folded into W_l; one output => a broadcast product
            back = torch.mul(d, wW[l]) if d.shape[2] == 1 else torch.bmm(d, wW[l])
            if l > 1:
                d = back.mul_(cs[l - 1])
            else:
                d = torch.mul(cs[0], back.transpose(0, 1))  # pixel-major [P, n, w1]
        # layer 0: dW0 = delta_0^T x for all networks as ONE GEMM; db0 = sum over pixels
        gW0 = torch.mm(x.t(), d.view(P, n * w1)).view(d_in, n, w1).permute(1, 2, 0)
        grads[0] = gW0.reshape(n, -1)
        grads[1] = d.sum(dim=0)
        return losses, torch.cat(grads, dim=1)

    return fn


_AUTO_BATCH: dict[tuple, int] = {}


def auto_batch_size(
    n_points: int,
    sizes: Sequence[int],
    *,
    candidates: Sequence[int] = (8, 16, 32, 64, 128),
    steps: int = 4,
    omega0: float = 30.0,
    grid: tuple[int, int] | None = None,
) -> int:
    """Fastest SIREN-fitting batch size on this machine, measured (and remembered per process).

    Activations are ``[batch, P, width]``; they must stay in cache, so the best batch is a machine
    property. Each candidate trains ``steps`` Adam steps on random targets; the one with the highest
    network-steps/s wins (per CPU-second with one torch thread, per wall-second otherwise).
    """
    key = (int(n_points), tuple(int(s) for s in sizes), torch.get_num_threads(), tuple(candidates), grid)
    if key in _AUTO_BATCH:
        return _AUTO_BATCH[key]
    x = (
        image_coordinates(*grid)
        if grid is not None
        else torch.rand(int(n_points), int(sizes[0]), generator=torch.Generator().manual_seed(2)) * 2 - 1
    )
    # one thread: CPU time of this process (robust to other jobs on a shared machine); else wall time
    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    best, best_rate = candidates[0], -1.0
    for c in candidates:
        p = init_mlp(c, sizes, scheme="siren", omega0=omega0, generator=torch.Generator().manual_seed(0))
        y = torch.rand(c, x.shape[0], sizes[-1], generator=torch.Generator().manual_seed(1))
        vg = siren_mse_value_and_grad(x, y, omega0, grid=grid)
        train_stacked(p, None, steps=1, value_and_grad=vg, lr=1e-4)  # warm-up
        t0 = clock()
        train_stacked(p, None, steps=steps, value_and_grad=vg, lr=1e-4)
        rate = c * steps / (clock() - t0)
        if rate > best_rate:
            best, best_rate = c, rate
    _AUTO_BATCH[key] = best
    log.info("auto_batch_size(P=%d, sizes=%s) = %d (%.0f network-steps/s)", n_points, sizes, best, best_rate)
    return best


def fit_sirens(
    x: Tensor,
    y: Tensor,
    spec: MLPSpec,
    *,
    init: str,
    seeds: Sequence[int],
    steps: int,
    snapshot_steps: Sequence[int],
    lr: float,
    weight_decay: float = 0.0,
    stop_loss: float | None = None,
    batch_size: int | None = None,
    snapshot_dtype: torch.dtype = torch.float32,
    fused: bool = True,
    desc: str | None = None,
    device: str | torch.device | None = None,
    grid: tuple[int, int] | None = None,
) -> dict[str, Tensor]:
    """Fit one SIREN per target ``y [n, P, out]`` on shared inputs ``x [P, in]`` with Adam.

    Networks are processed in batches of ``batch_size`` (default :func:`auto_batch_size`); a network
    stops (and is frozen) once its MSE is ``<= stop_loss``. Returns ``{"W0": [n, T, ...], ...,
    "final_loss": [n], "stopped_at": [n]}`` (on the CPU). On a GPU (``device="cuda"``) the whole
    target set is one batch unless ``batch_size`` says otherwise; inits are drawn on the CPU, so
    they are identical on every device.
    """
    n = y.shape[0]
    if len(seeds) != n:
        raise ValueError(f"need one seed per target ({n}); got {len(seeds)}")
    dev = torch.device(device) if device is not None else x.device
    x, y = x.to(dev), y.to(dev)
    if batch_size is None:
        if dev.type != "cpu":
            batch_size = n
        else:
            batch_size = auto_batch_size(x.shape[0], spec.sizes, omega0=spec.omega0 or 30.0, grid=grid) if fused else 64
    out: dict[str, list[Tensor]] = {}
    for s in range(0, n, batch_size):
        e = min(s + batch_size, n)
        p = {
            k: v.to(dev)
            for k, v in init_mlp(e - s, spec.sizes, scheme=init, omega0=spec.omega0 or 30.0, seeds=seeds[s:e]).items()
        }
        yb = y[s:e]
        stop_fn = None
        if stop_loss is not None:
            thr = float(stop_loss)
            stop_fn = lambda q, losses, thr=thr: losses <= thr  # noqa: E731
        if fused:
            vg = siren_mse_value_and_grad(x, yb, spec.omega0 or 30.0, spec.output_offset, grid=grid)
            res = train_stacked(
                p,
                None,
                steps=steps,
                lr=lr,
                weight_decay=weight_decay,
                value_and_grad=vg,
                snapshot_steps=snapshot_steps,
                stop_fn=stop_fn,
                snapshot_dtype=snapshot_dtype,
                desc=desc,
            )
        else:

            def loss_fn(q: dict[str, Tensor], yb: Tensor = yb) -> Tensor:
                return (spec.forward(q, x) - yb).square().mean(dim=(1, 2))

            res = train_stacked(
                p,
                loss_fn,
                steps=steps,
                lr=lr,
                weight_decay=weight_decay,
                snapshot_steps=snapshot_steps,
                stop_fn=stop_fn,
                snapshot_dtype=snapshot_dtype,
                desc=desc,
            )
        for k, v in res.snapshots.items():
            out.setdefault(k, []).append(v)
        out.setdefault("final_loss", []).append(res.losses.cpu())
        out.setdefault("stopped_at", []).append(res.stopped_at.cpu())
    return {k: torch.cat(v) for k, v in out.items()}
