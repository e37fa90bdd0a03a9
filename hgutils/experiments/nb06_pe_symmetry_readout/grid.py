r"""Notebook 06's training grid: which networks are trained (:func:`grid_spec`: the main grid and the
training domain × weight decay factor grid), the one stacked run that trains them all (:func:`train_grid`,
returning a :class:`GridResult`), their fit quality (:func:`fit_table`) and the notebook's two-criterion
learnability check of a (encoding, shape, domain, weight decay) cell (:func:`sdf_cell_gates`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb06_pe_symmetry_readout.preset import SHORT, SymmetryReadoutConfig, make_encodings
from hgutils.loop import LearnabilityGate
from hgutils.symmetry.domains import DiskDomain, stream_seed
from hgutils.symmetry.encodings import FourierPE
from hgutils.symmetry.shapes import Shape, default_shapes
from hgutils.weightspace.batched_training import train_stacked
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward


@dataclass
class GridResult:
    """Trained grid: stacked parameters of N networks plus one metadata row per network.

    ``meta`` columns: ``net, shape, encoding, seed, group, domain, weight_decay, main`` (the network
    belongs to the main grid), ``pool`` (index into ``pools``), ``initial_loss`` (first minibatch
    before any update), ``final_loss`` (mean over the last 5 % of the steps), ``train_mse`` (one fresh
    minibatch at the end) and ``eval_rel_err`` (:math:`\\|f - \\mathrm{sdf}\\| / \\|\\mathrm{sdf}\\|` on
    ``eval_points``).
    """

    params: dict[str, torch.Tensor]  # final, stacked [N, ...]
    init: dict[str, torch.Tensor]  # initial, stacked [N, ...]
    meta: pd.DataFrame
    history: torch.Tensor  # [steps, N] training loss
    shapes: list[Shape]
    encodings: list[FourierPE]
    eval_points: torch.Tensor  # [n_eval, 2] float64, uniform in the unit disk (inside both domains)
    pools: torch.Tensor  # [P, n_points, 2] float32: the training points of each (seed, domain, shape)
    pool_meta: pd.DataFrame  # columns: pool, seed, domain, shape

    def select(self, **where: Any) -> np.ndarray:
        """Positions of the networks whose metadata match ``where`` (e.g. ``shape="square"``)."""
        mask = np.ones(len(self.meta), dtype=bool)
        for k, v in where.items():
            if k not in self.meta.columns:
                raise ValueError(f"no metadata column {k!r}; columns are {list(self.meta.columns)}")
            mask &= (self.meta[k] == v).to_numpy()
        return np.flatnonzero(mask)

    def subset(self, idx: Sequence[int], which: str = "params") -> dict[str, torch.Tensor]:
        src = self.params if which == "params" else self.init
        ix = torch.as_tensor(np.asarray(idx), dtype=torch.long)
        return {k: v[ix] for k, v in src.items()}

    def cell(self, domain: str, weight_decay: float) -> GridResult:
        """The networks trained at one (domain, weight decay) cell, as a grid of their own."""
        idx = self.select(domain=domain, weight_decay=float(weight_decay))
        if len(idx) == 0:
            cells = sorted(set(zip(self.meta["domain"], self.meta["weight_decay"])))
            raise ValueError(f"no networks at domain={domain!r}, weight_decay={weight_decay!r}; cells are {cells}")
        ix = torch.as_tensor(idx, dtype=torch.long)
        names = list(dict.fromkeys(self.meta.iloc[idx]["shape"]))
        return GridResult(
            params={k: v[ix] for k, v in self.params.items()},
            init={k: v[ix] for k, v in self.init.items()},
            meta=self.meta.iloc[idx].reset_index(drop=True),
            history=self.history[:, ix],
            shapes=[s for s in self.shapes if s.name in names],
            encodings=self.encodings,
            eval_points=self.eval_points,
            pools=self.pools,
            pool_meta=self.pool_meta,
        )


def grid_spec(cfg: SymmetryReadoutConfig, shapes: Sequence[Shape], encodings: Sequence[FourierPE]) -> pd.DataFrame:
    """One row per network to train: the main grid (every shape at ``(cfg.domain, cfg.weight_decay)``)
    and the factor grid (``cfg.factor_shapes`` at every ``cfg.domains × cfg.weight_decays`` cell), seed
    outermost. Columns: ``net, shape, encoding, seed, group, domain, weight_decay, main``."""
    names = [s.name for s in shapes]
    factor = [n for n in names if n in cfg.factor_shapes]
    rows = []
    for s in range(cfg.n_seeds):
        for dom in cfg.domains:
            for wd in cfg.weight_decays:
                main = dom == cfg.domain and wd == cfg.weight_decay
                for shape in shapes:
                    if not (main or shape.name in factor):
                        continue
                    for enc in encodings:
                        rows.append(
                            {
                                "net": len(rows),
                                "shape": shape.name,
                                "encoding": enc.name,
                                "seed": s,
                                "group": shape.group_name,
                                "domain": dom,
                                "weight_decay": wd,
                                "main": main,
                            }
                        )
    return pd.DataFrame(rows)


def train_grid(
    cfg: SymmetryReadoutConfig,
    seed: int = 0,
    shapes: Sequence[Shape] | None = None,
    encodings: Sequence[FourierPE] | None = None,
    device: str = "cpu",
) -> GridResult:
    """Train every network of :func:`grid_spec` (SDF regression), all stacked in one run.

    Each step draws a fresh minibatch of ``cfg.batch`` points per (seed, domain, shape) pool of
    ``cfg.n_points`` samples (:meth:`Shape.sample` with that domain); every encoding and every weight
    decay of the pool sees the same points. With the high dyadic frequencies (up to :math:`2^{11}\\pi`)
    a small fixed training set is badly overfitted, so a large pool with minibatches is used instead.
    """
    shapes = list(default_shapes() if shapes is None else shapes)
    encodings = list(make_encodings(cfg) if encodings is None else encodings)
    dims = {e.dim for e in encodings}
    if len(dims) != 1:
        raise ValueError(f"all encodings must share one output dimension to be stacked; got {sorted(dims)}")
    d = dims.pop()
    spec = grid_spec(cfg, shapes, encodings)
    shape_index = {sh.name: i for i, sh in enumerate(shapes)}
    shape_by_name = {sh.name: sh for sh in shapes}
    pool_keys = list(dict.fromkeys(zip(spec["seed"], spec["domain"], spec["shape"])))
    pool_of = {k: i for i, k in enumerate(pool_keys)}
    xs, ys, batch_gens = [], [], []
    for s, dom, name in pool_keys:
        gen = torch.Generator().manual_seed(stream_seed(seed, s, dom, shape_index[name], 0))
        x, y = shape_by_name[name].sample(cfg.n_points, gen, domain=dom, dtype=torch.float64)
        xs.append(x)
        ys.append(y.float())
        batch_gens.append(torch.Generator().manual_seed(stream_seed(seed, s, dom, shape_index[name], 1)))
    px, py = torch.stack(xs), torch.stack(ys)  # [P, n_points, 2] float64, [P, n_points]
    spec["pool"] = [pool_of[k] for k in zip(spec["seed"], spec["domain"], spec["shape"])]
    enc_index = {e.name: i for i, e in enumerate(encodings)}
    net_pool = torch.tensor(spec["pool"].tolist(), dtype=torch.long)
    net_enc = torch.tensor(spec["encoding"].map(enc_index).tolist(), dtype=torch.long)
    sizes = [d] + [cfg.hidden] * cfg.depth + [1]
    p0 = init_mlp(len(spec), sizes, seeds=[seed * 1000 + s for s in spec["seed"]])
    p0 = {k: v.to(device) for k, v in p0.items()}
    wds = spec["weight_decay"].to_numpy()
    weight_decay = float(wds[0]) if (wds == wds[0]).all() else torch.tensor(wds.tolist(), dtype=torch.float64)

    def loss_fn(p: dict[str, torch.Tensor]) -> torch.Tensor:
        # a fresh minibatch per pool each step, encoded by every encoding, then routed to its networks
        idx = torch.stack([torch.randint(0, cfg.n_points, (cfg.batch,), generator=g) for g in batch_gens])
        xb = torch.gather(px, 1, idx[..., None].expand(-1, -1, 2))
        yb = torch.gather(py, 1, idx)
        feats = torch.stack([enc(xb).float() for enc in encodings], dim=1)  # [P, E, B, d]
        x_net, y_net = feats[net_pool, net_enc], yb[net_pool]  # [N, B, d], [N, B]
        return (mlp_forward(p, x_net.to(device))[..., 0] - y_net.to(device)).pow(2).mean(-1)

    res = train_stacked(
        p0, loss_fn, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=weight_decay, desc="SDF grid"
    )
    params = {k: v.detach().cpu() for k, v in res.params.items()}
    meta = spec
    hist = res.history.cpu().double()
    tail = max(1, cfg.steps // 20)
    meta["initial_loss"] = hist[0].numpy() if cfg.steps else np.nan
    meta["final_loss"] = hist[-tail:].mean(0).numpy() if cfg.steps else np.nan
    meta["train_mse"] = res.losses.cpu().double().numpy()
    # relative error on fresh points of the unit disk (inside both domains): ||f - sdf|| / ||sdf||
    eval_x = DiskDomain(1.0).sample(cfg.n_eval, torch.Generator().manual_seed(seed * 7919 + 17))
    feats = torch.stack([e(eval_x).float() for e in encodings])  # [E, n_eval, d]
    with torch.no_grad():
        pred = mlp_forward(params, feats[net_enc])[..., 0].double()
    truth = torch.stack([shape_by_name[n].sdf(eval_x) for n in meta["shape"]])
    meta["eval_rel_err"] = ((pred - truth).norm(dim=-1) / truth.norm(dim=-1)).numpy()
    pool_meta = pd.DataFrame(
        [{"pool": i, "seed": s, "domain": dom, "shape": name} for i, (s, dom, name) in enumerate(pool_keys)]
    )
    return GridResult(
        params=params,
        init={k: v.cpu() for k, v in p0.items()},
        meta=meta,
        history=res.history.cpu(),
        shapes=shapes,
        encodings=encodings,
        eval_points=eval_x,
        pools=px.float(),
        pool_meta=pool_meta,
    )


def fit_table(meta: pd.DataFrame) -> pd.DataFrame:
    """Fit quality per (domain, weight decay, encoding, shape): seed means of the initial and final training
    loss and of the relative error on fresh points, and the worst seed's relative error."""
    g = meta.groupby(["domain", "weight_decay", "encoding", "shape"], sort=False)
    return g.agg(
        initial_loss=("initial_loss", "mean"),
        final_loss=("final_loss", "mean"),
        rel_err=("eval_rel_err", "mean"),
        rel_err_max=("eval_rel_err", "max"),
        n=("seed", "nunique"),
    ).reset_index()


def sdf_cell_gates(
    meta: pd.DataFrame,
    fit_tol: float,
    cells: Sequence[tuple[str, str, str, float]],
    gate: LearnabilityGate | None = None,
) -> dict[str, dict[str, Any]]:
    """Notebook 06's two-criterion learnability check of the cells a claim judges, for
    ``Claims.add(trained=...)``: one entry per cell, keyed ``"Dyadic/square/disk/wd=1"``.

    ``cells`` lists ``(encoding, shape, domain, weight_decay)``. A cell *trained* when (1) every seed's
    training loss fell by the gate's relative drop (:meth:`hgutils.loop.LearnabilityGate.check`, first
    minibatch vs the mean over the last 5 % of the steps) **and** (2) its worst seed's relative error on
    fresh points is below ``fit_tol``. The reason names both: how many seeds left the plateau and the worst
    error. (Not :func:`hgutils.loop.combine_gates`: the second criterion is no per-run gate, and its count
    wording differs.)
    """
    gate = gate or LearnabilityGate()
    out: dict[str, dict[str, Any]] = {}
    for enc, shape, dom, wd in cells:
        m = meta[
            (meta["encoding"] == enc)
            & (meta["shape"] == shape)
            & (meta["domain"] == dom)
            & (meta["weight_decay"] == float(wd))
        ]
        key = f"{SHORT.get(enc, enc)}/{shape}/{dom}/wd={float(wd):g}"
        if m.empty:
            raise ValueError(f"no networks for {key}")
        checks = [gate.check(float(a), float(b)) for a, b in zip(m["initial_loss"], m["final_loss"])]
        dropped = sum(c.trained for c in checks)
        err = float(m["eval_rel_err"].max())
        ok = dropped == len(checks) and err < fit_tol
        reason = (
            f"{dropped}/{len(checks)} seeds left the initial loss plateau "
            f"(loss {m['initial_loss'].mean():.3g} -> {m['final_loss'].mean():.3g}); "
            f"worst relative error on fresh points {err:.3f} ({'<' if err < fit_tol else '>='} {fit_tol:g})"
        )
        out[key] = {"trained": bool(ok), "reason": reason}
    return out
