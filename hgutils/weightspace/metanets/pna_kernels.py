r"""Cache-blocked kernels for the GMN's dense edge blocks, each with its own backward.

On the neuron graph of an MLP the edge states of a block are ``[B, r, c, F]`` tensors
(:mod:`.pna`), 2M numbers at notebook 02's shapes, and every elementwise pass over one is a trip
through main memory. Each kernel here computes a per-edge expression and the few reductions the model
needs from it a slice of the batch at a time, so the intermediates stay in cache, and its backward
walks the same slices with the intermediates each forward slice kept (small tensors, so the
allocator reuses their memory from step to step where one whole-block tensor would be fresh pages
each time; keeping them costs less than recomputing the sines and the matrix products). Inputs and
results are those of the plain formula written in the docstring, gradients included
(``tests/test_metanet_fastpaths.py``):

* :func:`fourier_linear` -- :math:`[\cos x\Phi^\top, \sin x\Phi^\top]\,A^\top + c`;
* :func:`modulated_moments` -- sum, sum of squares, min and max over one axis of the PNA messages
  :math:`m = (E_s e + b_s) \odot (a_r + c_c) + E_t e + b_t`;
* :func:`edge_mlp` -- :math:`W_1\,\mathrm{SiLU}(W_e e + a_r + c_c) + b_1`.

``a_r`` / ``c_c`` are per-node terms broadcast along the block's rows / columns.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.autograd.function import once_differentiable

#: edges per slice (8 networks of 02's 32 x 32 blocks): between the two fastest, 4,096 and 16,384, of
#: 256 to 65,536 in a timing of the kernels on a 64 x 32 x 32 x 32 block
SLICE_EDGES = 8192


def _slices(n_batch: int, per_item: int) -> list[tuple[int, int]]:
    step = max(1, SLICE_EDGES // max(per_item, 1))
    return [(i, min(i + step, n_batch)) for i in range(0, n_batch, step)]


class _FourierLinear(torch.autograd.Function):
    """``cos P A_cos^T + sin P A_sin^T + c`` with ``P = x Phi^T`` (the two halves of ``A`` apart, so the
    features are never concatenated), in row chunks that stay in cache; each chunk's features are kept
    for the backward."""

    @staticmethod
    def forward(ctx, x: Tensor, freqs: Tensor, weight: Tensor, bias: Tensor, chunk: int) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x, freqs, weight)
        ctx.chunk, ctx.kept = chunk, []
        out, m = x.new_empty(x.shape[0], weight.shape[0]), freqs.shape[0]
        for i in range(0, x.shape[0], chunk):
            p = x[i : i + chunk] @ freqs.T
            cos, sin = p.cos(), p.sin()
            torch.addmm(bias, cos, weight[:, :m].T, out=out[i : i + chunk]).addmm_(sin, weight[:, m:].T)
            ctx.kept.append((cos, sin))
        return out

    @staticmethod
    @once_differentiable  # the kept slices carry no graph: a second derivative would be wrong
    def backward(ctx, g: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        x, freqs, weight = ctx.saved_tensors
        need_x, need_f, need_w, need_b, _ = ctx.needs_input_grad
        m = freqs.shape[0]
        gw = torch.zeros_like(weight) if need_w else None
        gx = torch.empty_like(x) if need_x else None
        gf = torch.zeros_like(freqs) if need_f else None
        for i, (cos, sin) in zip(range(0, x.shape[0], ctx.chunk), ctx.kept):
            xc, gc = x[i : i + ctx.chunk], g[i : i + ctx.chunk]
            if gw is not None:
                gw[:, :m].addmm_(gc.T, cos)
                gw[:, m:].addmm_(gc.T, sin)
            if gx is not None or gf is not None:
                gphi = gc @ weight  # d/dP of [cos P, sin P] A^T: -sin P (g A_cos) + cos P (g A_sin)
                gp = cos * gphi[:, m:] - sin * gphi[:, :m]
                if gx is not None:
                    torch.mm(gp, freqs, out=gx[i : i + ctx.chunk])
                if gf is not None:
                    gf.addmm_(gp.T, xc)
        gb = g.sum(0) if need_b else None
        return gx, gf, gw, gb, None


def fourier_linear(x: Tensor, freqs: Tensor, weight: Tensor, bias: Tensor, chunk: int = 1024) -> Tensor:
    r"""A linear map of Fourier features, :math:`[\cos P, \sin P]\,A^\top + c` with :math:`P = x\,\Phi^\top`.

    ``x [..., k]``, ``freqs`` :math:`\Phi` ``[m, k]`` (angular: :class:`GaussianFourierFeatures` is
    :math:`\Phi = 2\pi B`), ``weight`` :math:`A` ``[d, 2m]``, ``bias`` ``[d]``; returns ``[..., d]``.
    Equal to ``F.linear(torch.cat([P.cos(), P.sin()], -1), A, c)`` with its gradients, computed
    ``chunk`` rows at a time (on the GMN's edge blocks the features are 8x the output's size, and
    building them as whole tensors dominated its input encoding).
    """
    if x.shape[-1] != freqs.shape[1] or weight.shape[1] != 2 * freqs.shape[0] or bias.shape != weight.shape[:1]:
        raise ValueError(
            f"need x [..., k], freqs [m, k], weight [d, 2m], bias [d]; got {tuple(x.shape)}, "
            f"{tuple(freqs.shape)}, {tuple(weight.shape)}, {tuple(bias.shape)}"
        )
    flat = x.reshape(-1, x.shape[-1]).contiguous()
    return _FourierLinear.apply(flat, freqs, weight, bias, chunk).view(*x.shape[:-1], weight.shape[0])


def _node_sum(rows: Tensor, cols: Tensor) -> Tensor:
    """``rows [b, r, F]`` and ``cols [b, c, F]`` broadcast to ``[b, r, c, F]`` and summed."""
    return rows[:, :, None] + cols[:, None]


class _ModulatedMoments(torch.autograd.Function):
    @staticmethod
    def forward(ctx, e, rows, cols, w_scale, b_scale, w_shift, b_shift, dim):  # type: ignore[override]
        B, r, c, Fd = e.shape
        n = r if dim == 2 else c
        s1, s2, mn, mx = (e.new_empty(B, n, Fd) for _ in range(4))
        ctx.kept = []
        for i, j in _slices(B, r * c):
            ec = e[i:j].reshape(-1, Fd)
            scale = torch.addmm(b_scale, ec, w_scale.T).view(j - i, r, c, Fd)
            m = torch.addmm(b_shift, ec, w_shift.T).view_as(scale)
            m.addcmul_(scale, _node_sum(rows[i:j], cols[i:j]))
            torch.sum(m, dim, out=s1[i:j])
            torch.amin(m, dim, out=mn[i:j])
            torch.amax(m, dim, out=mx[i:j])
            torch.sum(m * m, dim, out=s2[i:j])
            ctx.kept.append((scale, m))
        ctx.save_for_backward(e, rows, cols, w_scale, b_scale, w_shift, b_shift, mn, mx)
        ctx.dim = dim
        return s1, s2, mn, mx

    @staticmethod
    @once_differentiable  # the kept slices carry no graph: a second derivative would be wrong
    def backward(ctx, g1, g2, gmin, gmax):  # type: ignore[override]
        e, rows, cols, w_scale, b_scale, w_shift, b_shift, mn, mx = ctx.saved_tensors
        dim, (B, r, c, Fd) = ctx.dim, e.shape
        ge, grows, gcols = torch.empty_like(e), torch.empty_like(rows), torch.empty_like(cols)
        gw_scale, gw_shift = torch.zeros_like(w_scale), torch.zeros_like(w_shift)
        gb_scale, gb_shift = torch.zeros_like(b_scale), torch.zeros_like(b_shift)
        for (i, j), (scale, m) in zip(_slices(B, r * c), ctx.kept):
            ec = e[i:j].reshape(-1, Fd)
            t = _node_sum(rows[i:j], cols[i:j])
            gm = torch.addcmul(g1[i:j].unsqueeze(dim), m, 2 * g2[i:j].unsqueeze(dim))
            for lo, hi, g in ((mn[i:j].unsqueeze(dim), m, gmin), (m, mx[i:j].unsqueeze(dim), gmax)):
                # as amin / amax, shared by the ties: lo <= hi, so sign(lo - hi) + 1 is 1 where m attains
                # the extreme and 0 elsewhere (a float mask: comparisons to bool are slower here)
                hit = torch.sub(lo, hi).sign_().add_(1.0)
                gm.addcmul_(hit, (g[i:j] / hit.sum(dim)).unsqueeze(dim))
            gt = gm * scale
            torch.sum(gt, 2, out=grows[i:j])
            torch.sum(gt, 1, out=gcols[i:j])
            gm2 = gm.view(-1, Fd)
            ge2 = torch.mm(gm2, w_shift, out=ge[i:j].view(-1, Fd))
            gw_shift.addmm_(gm2.T, ec)
            gb_shift += gm2.sum(0)
            gs2 = gm.mul_(t).view(-1, Fd)  # now the gradient of the scale
            ge2.addmm_(gs2, w_scale)
            gw_scale.addmm_(gs2.T, ec)
            gb_scale += gs2.sum(0)
        return ge, grows, gcols, gw_scale, gb_scale, gw_shift, gb_shift, None


def modulated_moments(
    e: Tensor, rows: Tensor, cols: Tensor, weight: Tensor, bias: Tensor, dim: int
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    r"""Sum, sum of squares, min and max over axis ``dim`` (2: along a row; 1: down a column) of the
    messages :math:`m = (E_s e + b_s) \odot (a_r + c_c) + (E_t e + b_t)` of an edge block.

    ``e [B, r, c, F]``; ``rows [B, r, F]``, ``cols [B, c, F]`` (``a``, ``c``); ``weight [2F, F]`` and
    ``bias [2F]`` stack :math:`(E_s, E_t)` and :math:`(b_s, b_t)`, the edge encoder of
    :class:`~.pna.PNALayer`. Results ``[B, r or c, F]``; min and max pass their gradient to the
    attaining entries, shared among ties (as ``amin`` / ``amax``).
    """
    B, r, c, Fd = e.shape
    if dim not in (1, 2) or rows.shape != (B, r, Fd) or cols.shape != (B, c, Fd) or weight.shape != (2 * Fd, Fd):
        raise ValueError(
            f"need e [B, r, c, F], rows [B, r, F], cols [B, c, F], weight [2F, F], dim 1 or 2; got "
            f"{tuple(e.shape)}, {tuple(rows.shape)}, {tuple(cols.shape)}, {tuple(weight.shape)}, {dim}"
        )
    return _ModulatedMoments.apply(
        e.contiguous(), rows.contiguous(), cols.contiguous(), weight[:Fd], bias[:Fd], weight[Fd:], bias[Fd:], dim
    )


class _EdgeMLP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, e, rows, cols, w_e, w_1, b_1):  # type: ignore[override]
        B, r, c, Fd = e.shape
        out = e.new_empty(B, r, c, w_1.shape[0])
        ctx.kept = []
        for i, j in _slices(B, r * c):
            a = _node_sum(rows[i:j], cols[i:j]).view(-1, Fd).addmm_(e[i:j].reshape(-1, Fd), w_e.T)
            act = F.silu(a)
            torch.addmm(b_1, act, w_1.T, out=out[i:j].view(-1, w_1.shape[0]))
            ctx.kept.append((a, act))
        ctx.save_for_backward(e, w_e, w_1)
        ctx.node_shapes = rows.shape, cols.shape
        return out

    @staticmethod
    @once_differentiable  # the kept slices carry no graph: a second derivative would be wrong
    def backward(ctx, g):  # type: ignore[override]
        e, w_e, w_1 = ctx.saved_tensors
        B, r, c, Fd = e.shape
        ge, grows, gcols = torch.empty_like(e), e.new_empty(ctx.node_shapes[0]), e.new_empty(ctx.node_shapes[1])
        gw_e, gw_1 = torch.zeros_like(w_e), torch.zeros_like(w_1)
        g2 = g.reshape(-1, g.shape[-1])
        for (i, j), (a, act) in zip(_slices(B, r * c), ctx.kept):
            ec, gc = e[i:j].reshape(-1, Fd), g2[i * r * c : j * r * c]
            gw_1.addmm_(gc.T, act)
            ga = torch.ops.aten.silu_backward(gc @ w_1, a)
            torch.mm(ga, w_e, out=ge[i:j].view(-1, Fd))
            gw_e.addmm_(ga.T, ec)
            ga4 = ga.view(j - i, r, c, Fd)
            torch.sum(ga4, 2, out=grows[i:j])
            torch.sum(ga4, 1, out=gcols[i:j])
        return ge, grows, gcols, gw_e, gw_1, g2.sum(0)


def edge_mlp(e: Tensor, rows: Tensor, cols: Tensor, w_e: Tensor, w_1: Tensor, b_1: Tensor) -> Tensor:
    r""":math:`W_1\,\mathrm{SiLU}(W_e e + a_r + c_c) + b_1` on an edge block ``e [B, r, c, F]`` (the
    ``EdgeMLP`` of :class:`~.pna.EdgeUpdate`; ``rows [B, r, F]`` and ``cols [B, c, F]`` hold its node
    terms, :math:`W_e`'s bias included in one of them). Returns ``[B, r, c, F']``."""
    B, r, c, Fd = e.shape
    if rows.shape != (B, r, Fd) or cols.shape != (B, c, Fd) or w_e.shape != (Fd, Fd) or w_1.shape[1] != Fd:
        raise ValueError(
            f"need e [B, r, c, F], rows [B, r, F], cols [B, c, F], w_e [F, F], w_1 [F', F]; got {tuple(e.shape)}, "
            f"{tuple(rows.shape)}, {tuple(cols.shape)}, {tuple(w_e.shape)}, {tuple(w_1.shape)}"
        )
    return _EdgeMLP.apply(e.contiguous(), rows.contiguous(), cols.contiguous(), w_e, w_1, b_1)
