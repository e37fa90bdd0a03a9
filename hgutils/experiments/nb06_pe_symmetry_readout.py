r"""Notebook 06's experiment: the preset, the shape × encoding × seed training grid, readout tables,
the hierarchy check and the plots.

Each network is :math:`f(x) = F(\varphi(x))` with :math:`\varphi` one of the 48-dim encodings and
:math:`F` a ReLU MLP ``48 → hidden → … → 1`` (``depth`` hidden layers), fitted to one shape's exact
SDF (mean squared error) by AdamW with decoupled weight decay on minibatches drawn afresh each step
from a large pool of points. All networks of the grid are trained at once with
:func:`hgutils.weightspace.stacked.train_stacked`: every network gets its own input features
``X [N, B, 48]`` (its encoding of its shape's minibatch) and targets ``[N, B]``.
Networks with the same seed index share their initialisation (``init_mlp(..., seeds=...)``), so
within a seed the shapes and encodings differ only through the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from hgutils.presets import Preset
from hgutils.symmetry.encodings import DyadicAxisPE, FourierPE, RandomFourierPE, TriAxisPE
from hgutils.symmetry.groups import GroupElement
from hgutils.symmetry.readout import VARIANTS, functional_profile, readout_profile
from hgutils.symmetry.shapes import Shape, default_shapes
from hgutils.weightspace.stacked import init_mlp, mlp_forward, train_stacked

__all__ = [
    "CONFIG",
    "SymmetryReadoutConfig",
    "GridResult",
    "make_encodings",
    "train_grid",
    "readout_frame",
    "sweep_frame",
    "hierarchy_check",
    "score_table",
    "sweep_peaks",
    "claim_metrics",
    "plot_shapes",
    "plot_lift_residuals",
    "plot_readout_heatmaps",
    "plot_rotation_sweeps",
]


@dataclass(frozen=True)
class SymmetryReadoutConfig(Preset):
    """Sizes of notebook 06 (smoke defaults; the paper's text gives d = 48 and is cut off before its
    training details, so width, depth, steps and points are our documented choices)."""

    n_seeds: int = 1  # networks per (shape, encoding)
    hidden: int = 64  # width of every hidden layer
    depth: int = 2  # number of hidden layers (prefix Grams k = 1..depth)
    n_points: int = 16384  # training pool per (shape, seed): half uniform in the unit disk, half near the boundary
    batch: int = 512  # minibatch per network and step, drawn afresh from the pool
    steps: int = 600  # optimizer steps
    optimizer: str = "adamw"  # "adam" (L2 in the gradient) | "adamw" (decoupled decay) | "sgd"
    lr: float = 2e-3  # learning rate
    weight_decay: float = 1.0  # decoupled weight decay: shrinks weight directions the fit does not use,
    # so the Grams show the learned structure rather than the random initialisation
    n_eval: int = 1024  # fresh points for the functional score
    sweep_num: int = 72  # rotation sweep resolution (72 = 5 degree steps)
    rff_sigma: float = 10.0  # RFF frequency std (see hgutils.symmetry.encodings for why 10)
    threshold: float = 0.7  # "high" readout score in the hierarchy check

    PRESETS: ClassVar[dict] = {
        "smoke": {},
        "medium": {"n_seeds": 5, "n_points": 65536, "steps": 1500, "n_eval": 4096, "sweep_num": 360},
        "paper": {"n_seeds": 20, "n_points": 262144, "batch": 2048, "steps": 10000, "n_eval": 8192, "sweep_num": 720},
    }


CONFIG = SymmetryReadoutConfig


def make_encodings(cfg: SymmetryReadoutConfig) -> list[FourierPE]:
    """Dyadic (K=12), TriAxis (K=8), RFF (n=24, σ=cfg.rff_sigma, seed 0): all 48-dim."""
    return [DyadicAxisPE(12), TriAxisPE(8), RandomFourierPE(24, cfg.rff_sigma, 0)]


@dataclass
class GridResult:
    """Trained grid: stacked parameters of N networks plus one metadata row per network."""

    params: dict[str, torch.Tensor]  # final, stacked [N, ...]
    init: dict[str, torch.Tensor]  # initial, stacked [N, ...]
    meta: pd.DataFrame  # columns: net, shape, encoding, seed, group, train_mse (last minibatch), eval_rel_err
    history: torch.Tensor  # [steps, N] training loss
    shapes: list[Shape]
    encodings: list[FourierPE]
    eval_points: torch.Tensor  # [n_eval, 2] float64, uniform in the unit disk

    def select(self, **where: str) -> np.ndarray:
        """Indices of the networks whose metadata match ``where`` (e.g. ``shape="square"``)."""
        mask = np.ones(len(self.meta), dtype=bool)
        for k, v in where.items():
            mask &= (self.meta[k] == v).to_numpy()
        return np.flatnonzero(mask)

    def subset(self, idx: Sequence[int], which: str = "params") -> dict[str, torch.Tensor]:
        src = self.params if which == "params" else self.init
        ix = torch.as_tensor(np.asarray(idx), dtype=torch.long)
        return {k: v[ix] for k, v in src.items()}


def _disk_points(n: int, gen: torch.Generator) -> torch.Tensor:
    r = torch.rand(n, generator=gen, dtype=torch.float64).sqrt()
    a = 2 * torch.pi * torch.rand(n, generator=gen, dtype=torch.float64)
    return torch.stack((r * torch.cos(a), r * torch.sin(a)), dim=-1)


def train_grid(
    cfg: SymmetryReadoutConfig,
    seed: int = 0,
    shapes: Sequence[Shape] | None = None,
    encodings: Sequence[FourierPE] | None = None,
    device: str = "cpu",
) -> GridResult:
    """Train the shape × encoding × seed grid of SDF-regression MLPs, all stacked in one run.

    Each step draws a fresh minibatch of ``cfg.batch`` points per (seed, shape) from its pool of
    ``cfg.n_points`` samples (``Shape.sample``); every encoding sees the same points. With the
    high dyadic frequencies (up to :math:`2^{11}\\pi`) a small fixed training set is badly
    overfitted, so a large pool with minibatches is used instead.
    """
    shapes = list(default_shapes() if shapes is None else shapes)
    encodings = list(make_encodings(cfg) if encodings is None else encodings)
    dims = {e.dim for e in encodings}
    if len(dims) != 1:
        raise ValueError(f"all encodings must share one output dimension to be stacked; got {sorted(dims)}")
    d = dims.pop()
    rows, pools, init_seeds = [], [], []
    eval_x = _disk_points(cfg.n_eval, torch.Generator().manual_seed(seed * 7919 + 17))
    for s in range(cfg.n_seeds):
        for i, shape in enumerate(shapes):
            gen = torch.Generator().manual_seed(seed * 100_003 + s * 1009 + i)
            pools.append(shape.sample(cfg.n_points, gen, dtype=torch.float64))
            for enc in encodings:
                rows.append(
                    {"net": len(rows), "shape": shape.name, "encoding": enc.name, "seed": s, "group": shape.group_name}
                )
                init_seeds.append(seed * 1000 + s)
    px = torch.stack([p[0] for p in pools])  # [S, n_points, 2], S = n_seeds * n_shapes
    py = torch.stack([p[1] for p in pools]).float()  # [S, n_points]
    n_enc = len(encodings)
    # net index = pool_index * n_enc + encoding_index (the loop order above)
    sizes = [d] + [cfg.hidden] * cfg.depth + [1]
    p0 = init_mlp(len(rows), sizes, seeds=init_seeds)
    p0 = {k: v.to(device) for k, v in p0.items()}
    batch_gen = torch.Generator().manual_seed(seed * 31337 + 5)

    def loss_fn(p: dict[str, torch.Tensor]) -> torch.Tensor:
        # a fresh minibatch per (seed, shape) each step, encoded by every encoding
        idx = torch.randint(0, cfg.n_points, (px.shape[0], cfg.batch), generator=batch_gen)
        xb = torch.gather(px, 1, idx[..., None].expand(-1, -1, 2))
        yb = torch.gather(py, 1, idx)
        feats = torch.stack([enc(xb).float() for enc in encodings], dim=1).flatten(0, 1)  # [N, B, d]
        targets = yb.repeat_interleave(n_enc, dim=0)
        return (mlp_forward(p, feats.to(device))[..., 0] - targets.to(device)).pow(2).mean(-1)

    res = train_stacked(
        p0, loss_fn, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=cfg.weight_decay, desc="SDF grid"
    )
    params = {k: v.detach().cpu() for k, v in res.params.items()}
    meta = pd.DataFrame(rows)
    meta["train_mse"] = res.losses.cpu().double().numpy()
    # relative error on fresh points: ||f - sdf|| / ||sdf||
    enc_by_name = {e.name: e for e in encodings}
    shape_by_name = {sh.name: sh for sh in shapes}
    with torch.no_grad():
        fe = torch.stack([enc_by_name[r["encoding"]](eval_x).float() for r in rows])
        pred = mlp_forward(params, fe)[..., 0].double()
    truth = torch.stack([shape_by_name[r["shape"]].sdf(eval_x) for r in rows])
    meta["eval_rel_err"] = ((pred - truth).norm(dim=-1) / truth.norm(dim=-1)).numpy()
    return GridResult(
        params=params,
        init={k: v.cpu() for k, v in p0.items()},
        meta=meta,
        history=res.history.cpu(),
        shapes=shapes,
        encodings=encodings,
        eval_points=eval_x,
    )


def readout_frame(
    grid: GridResult,
    elements: Sequence[GroupElement],
    *,
    depth: int | None = None,
    variants: Sequence[str] = VARIANTS,
    include_init: bool = True,
    lift_tol: float = 1e-6,
) -> pd.DataFrame:
    """Long table of scores: one row per (network, observation, variant, element).

    Observations: ``prefix1..prefix{depth}`` (trained weights), ``prefix1@init`` (the same network's
    initial weights, the baseline) and ``functional`` (``f(gx)`` vs ``f(x)`` on the eval points;
    its variant column is ``"data"``). Adds ``liftable`` (lift residual < ``lift_tol``), ``residual``
    and ``in_G_true``.
    """
    n_linear = sum(1 for k in grid.params if k.startswith("W"))
    depth = n_linear - 1 if depth is None else depth
    shapes = {s.name: s for s in grid.shapes}
    out = []
    for enc in grid.encodings:
        idx = grid.select(encoding=enc.name)
        meta = grid.meta.iloc[idx].reset_index(drop=True)
        scores: dict[tuple[str, str], torch.Tensor] = {}
        for k in range(1, depth + 1):
            for v in variants:
                scores[(f"prefix{k}", v)] = readout_profile(
                    grid.subset(idx), enc, elements, observation=f"prefix{k}", variant=v
                )
        if include_init:
            for v in variants:
                scores[("prefix1@init", v)] = readout_profile(
                    grid.subset(idx, "init"), enc, elements, observation="prefix1", variant=v
                )
        scores[("functional", "data")] = functional_profile(grid.subset(idx), enc, elements, grid.eval_points)
        lifts = np.array([enc.lift(g)[1] for g in elements])
        n, E = len(meta), len(elements)
        in_true = np.array([[shapes[s].is_symmetry(g) for g in elements] for s in meta["shape"]])
        base = meta[["net", "shape", "encoding", "seed", "group"]].loc[np.repeat(np.arange(n), E)]
        base = base.reset_index(drop=True)
        base["element"] = np.tile([g.name for g in elements], n)
        base["kind"] = np.tile([g.kind for g in elements], n)
        base["angle"] = np.tile([g.angle for g in elements], n)
        base["residual"] = np.tile(lifts, n)
        base["liftable"] = np.tile(lifts < lift_tol, n)
        base["in_G_true"] = in_true.reshape(-1)
        for (obs, var), sc in scores.items():
            df = base.copy()
            df["observation"], df["variant"] = obs, var
            df["score"] = sc.numpy().reshape(-1)  # row-major [net, element] matches repeat/tile above
            out.append(df)
    return pd.concat(out, ignore_index=True)


def sweep_frame(
    grid: GridResult, elements: Sequence[GroupElement], observation: str = "prefix1", variant: str = "frobenius"
) -> pd.DataFrame:
    """Seed-mean readout score per (encoding, shape, angle) for a rotation sweep, plus lift residuals."""
    rows = []
    for enc in grid.encodings:
        idx = grid.select(encoding=enc.name)
        sc = readout_profile(grid.subset(idx), enc, elements, observation=observation, variant=variant).numpy()
        res = [enc.lift(g)[1] for g in elements]
        meta = grid.meta.iloc[idx].reset_index(drop=True)
        for shape in meta["shape"].unique():
            m = (meta["shape"] == shape).to_numpy()
            mean = sc[m].mean(0)
            for j, g in enumerate(elements):
                rows.append(
                    {"encoding": enc.name, "shape": shape, "angle": g.angle, "score": mean[j], "residual": res[j]}
                )
    return pd.DataFrame(rows)


def hierarchy_check(frame: pd.DataFrame, threshold: float) -> pd.DataFrame:
    r"""Per (encoding, observation, variant): how many (shape, element) cells (seed-mean score) are
    "high" (≥ ``threshold``) and how many of those violate :math:`G_{obs} \subseteq G_{lift}\cap G_{true}`
    (high but not liftable, or high but not in :math:`G_{true}`). The identity is excluded."""
    f = frame[frame["element"] != "R0"]
    cell = (
        f.groupby(["encoding", "observation", "variant", "shape", "element"], sort=False)
        .agg(score=("score", "mean"), liftable=("liftable", "first"), in_G_true=("in_G_true", "first"))
        .reset_index()
    )
    cell["high"] = cell["score"] >= threshold
    cell["viol_lift"] = cell["high"] & ~cell["liftable"]
    cell["viol_true"] = cell["high"] & ~cell["in_G_true"]
    return (
        cell.groupby(["encoding", "observation", "variant"], sort=False)
        .agg(
            cells=("high", "size"),
            high=("high", "sum"),
            not_liftable=("viol_lift", "sum"),
            not_in_G_true=("viol_true", "sum"),
        )
        .reset_index()
    )


def score_table(frame: pd.DataFrame, observation: str, variant: str = "frobenius") -> pd.DataFrame:
    """Seed-mean scores as a table: rows ``(encoding, shape)``, columns the elements (input order)."""
    var = "data" if observation == "functional" else variant
    f = frame[(frame["observation"] == observation) & (frame["variant"] == var)]
    if f.empty:
        raise ValueError(f"no rows for observation={observation!r}, variant={var!r}")
    els = list(dict.fromkeys(f["element"]))
    encs, shps = list(dict.fromkeys(f["encoding"])), list(dict.fromkeys(f["shape"]))
    tab = f.groupby(["encoding", "shape", "element"])["score"].mean().unstack()[els]
    return tab.reindex(pd.MultiIndex.from_product([encs, shps], names=["encoding", "shape"]))


def sweep_peaks(sweep: pd.DataFrame, exclude_deg: float = 15.0) -> pd.DataFrame:
    """Angle of the highest seed-mean sweep score per (encoding, shape), ignoring angles within
    ``exclude_deg`` of 0/360 (small rotations are close to the identity for any smooth readout)."""
    f = sweep[(sweep["angle"] >= exclude_deg) & (sweep["angle"] <= 360.0 - exclude_deg)]
    idx = f.groupby(["encoding", "shape"], sort=False)["score"].idxmax()
    return f.loc[idx, ["encoding", "shape", "angle", "score"]].reset_index(drop=True)


def _cell(frame: pd.DataFrame, observation: str, variant: str, encoding: str, shape: str) -> pd.DataFrame:
    var = "data" if observation == "functional" else variant
    f = frame[
        (frame["observation"] == observation)
        & (frame["variant"] == var)
        & (frame["encoding"] == encoding)
        & (frame["shape"] == shape)
    ]
    return f.groupby("element", sort=False).agg(
        score=("score", "mean"), liftable=("liftable", "first"), in_G_true=("in_G_true", "first")
    )


def claim_metrics(
    frame: pd.DataFrame,
    sweep: pd.DataFrame,
    observation: str = "prefix1",
    variant: str = "frobenius",
    threshold: float = 0.7,
) -> dict[str, float]:
    """The measured numbers behind notebook 06's claims (seed means; identity excluded throughout).

    - ``dy_sq_d4_min`` / ``dy_sq_nonlift_max``: Dyadic, square: lowest score over D4∖{I}, highest over
      the non-liftable candidates.
    - ``dy_tri_rot_max`` / ``dy_tri_rot_func``: Dyadic, triangle: highest Gram score and lowest
      functional score of the D3 rotations R120, R240; ``dy_tri_s90``: its one liftable symmetry.
    - ``dy_sq_mean``, ``tri_tri_mean``, ``tri_hex_mean``: mean score over :math:`G_{true}` ∖ {I} for
      (Dyadic, square), (TriAxis, triangle), (TriAxis, hexagon); ``tri_tri_off``: TriAxis, triangle,
      mean over liftable elements outside :math:`G_{true}` (its baseline).
    - ``rff_pi_top``: number of shapes with R180 ∈ G_true whose top non-identity RFF score is R180, of
      ``rff_pi_shapes``; ``rff_peak_mean_dev``: mean |sweep peak angle − 180| over those shapes.
    - ``viol_lift`` / ``viol_true``: hierarchy violations at ``threshold`` over all encodings.
    """
    m: dict[str, float] = {}
    sq = _cell(frame, observation, variant, "DyadicAxisPE", "square").drop(index="R0")
    m["dy_sq_d4_min"] = float(sq.loc[sq["liftable"] & sq["in_G_true"], "score"].min())
    m["dy_sq_nonlift_max"] = float(sq.loc[~sq["liftable"], "score"].max())
    m["dy_sq_mean"] = float(sq.loc[sq["in_G_true"], "score"].mean())
    tri = _cell(frame, observation, variant, "DyadicAxisPE", "triangle")
    tri_f = _cell(frame, "functional", variant, "DyadicAxisPE", "triangle")
    m["dy_tri_rot_max"] = float(tri.loc[["R120", "R240"], "score"].max())
    m["dy_tri_rot_func"] = float(tri_f.loc[["R120", "R240"], "score"].min())
    m["dy_tri_s90"] = float(tri.loc["S90", "score"])
    tt = _cell(frame, observation, variant, "TriAxisPE", "triangle").drop(index="R0")
    th = _cell(frame, observation, variant, "TriAxisPE", "hexagon").drop(index="R0")
    m["tri_tri_mean"] = float(tt.loc[tt["in_G_true"], "score"].mean())
    m["tri_hex_mean"] = float(th.loc[th["in_G_true"], "score"].mean())
    m["tri_tri_off"] = float(tt.loc[tt["liftable"] & ~tt["in_G_true"], "score"].mean())
    top, n, devs = 0, 0, []
    peaks = sweep_peaks(sweep)
    for shape in dict.fromkeys(frame["shape"]):
        c = _cell(frame, observation, variant, "RandomFourierPE", shape).drop(index="R0")
        if "R180" not in c.index or not bool(c.loc["R180", "in_G_true"]):
            continue
        n += 1
        top += int(c["score"].idxmax() == "R180")
        pk = peaks[(peaks["encoding"] == "RandomFourierPE") & (peaks["shape"] == shape)]
        if len(pk):
            devs.append(abs(float(pk["angle"].iloc[0]) - 180.0))
    m["rff_pi_top"], m["rff_pi_shapes"] = float(top), float(n)
    m["rff_peak_mean_dev"] = float(np.mean(devs)) if devs else float("nan")
    h = hierarchy_check(frame[frame["observation"] == observation], threshold)
    h = h[h["variant"] == variant]
    m["viol_lift"], m["viol_true"] = float(h["not_liftable"].sum()), float(h["not_in_G_true"].sum())
    m["high"] = float(h["high"].sum())
    return m


# --------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------
def plot_lift_residuals(lift_df: pd.DataFrame):
    """Heatmap encoding × element of log10 lift residuals (exact lifts at the floor)."""
    import matplotlib.pyplot as plt

    from hgutils.plotting import heatmap, use_style

    use_style()
    piv = lift_df.pivot(index="encoding", columns="element", values="residual")
    piv = piv[list(dict.fromkeys(lift_df["element"]))].loc[list(dict.fromkeys(lift_df["encoding"]))]
    fig, ax = plt.subplots(figsize=(9, 2.4))
    heatmap(
        ax,
        np.log10(np.maximum(piv.to_numpy(), 1e-16)),
        list(piv.columns),
        list(piv.index),
        title="log10 lift residual (≤ -10: exact lift)",
        cmap="magma",
        vmin=-16,
        vmax=0,
        annotate=True,
        fmt=".1f",
    )
    return fig


def plot_readout_heatmaps(
    frame: pd.DataFrame,
    observations: Sequence[str],
    variant: str = "frobenius",
    element_order: Sequence[str] | None = None,
    shape_order: Sequence[str] | None = None,
):
    """Grid of heatmaps: rows = encodings, columns = observations; each shape × element (seed mean).

    Cells whose element is outside :math:`G_{lift}` are hatched with a dot; outside :math:`G_{true}`
    with a small cross, so the hierarchy can be read off the picture.
    """
    import matplotlib.pyplot as plt

    from hgutils.plotting import heatmap, use_style

    use_style()
    encs = list(dict.fromkeys(frame["encoding"]))
    els = list(element_order or dict.fromkeys(frame["element"]))
    shps = list(shape_order or dict.fromkeys(frame["shape"]))
    fig, axes = plt.subplots(
        len(encs), len(observations), figsize=(4.6 * len(observations), 2.6 * len(encs)), squeeze=False
    )
    for i, enc in enumerate(encs):
        for j, obs in enumerate(observations):
            var = "data" if obs == "functional" else variant
            f = frame[(frame["encoding"] == enc) & (frame["observation"] == obs) & (frame["variant"] == var)]
            piv = f.groupby(["shape", "element"])["score"].mean().unstack()[els].loc[shps]
            lift = f.groupby("element")["liftable"].first()[els].to_numpy()
            true = f.groupby(["shape", "element"])["in_G_true"].first().unstack()[els].loc[shps].to_numpy()
            ax = axes[i, j]
            heatmap(ax, piv.to_numpy(), els, shps, title=f"{enc} · {obs}", vmin=-0.2, vmax=1.0)
            rr, cc = np.meshgrid(np.arange(len(shps)), np.arange(len(els)), indexing="ij")
            dots = ~lift[None, :].repeat(len(shps), 0)
            crosses = ~dots & ~true.astype(bool)
            ax.scatter(cc[dots], rr[dots], marker=".", color="w", s=6)
            ax.scatter(cc[crosses], rr[crosses], marker="x", color="w", s=8, linewidths=0.8)
    fig.suptitle(f"readout scores ({variant}); dot: not liftable, x: liftable but not in G_true", y=1.0)
    fig.tight_layout()
    return fig


def plot_rotation_sweeps(sweep: pd.DataFrame, shape_order: Sequence[str] | None = None):
    """Top row: seed-mean readout score vs rotation angle per encoding (one line per shape);
    bottom row: the encoding's lift residual vs angle (log scale)."""
    import matplotlib.pyplot as plt

    from hgutils.plotting import use_style

    use_style()
    encs = list(dict.fromkeys(sweep["encoding"]))
    shps = list(shape_order or dict.fromkeys(sweep["shape"]))
    fig, axes = plt.subplots(
        2,
        len(encs),
        figsize=(4.6 * len(encs), 5.2),
        sharex=True,
        gridspec_kw={"height_ratios": [2.2, 1]},
        squeeze=False,
    )
    for j, enc in enumerate(encs):
        f = sweep[sweep["encoding"] == enc]
        ax = axes[0, j]
        for shape in shps:
            g = f[f["shape"] == shape].sort_values("angle")
            ax.plot(g["angle"], g["score"], lw=1.1, label=shape)
        for a in (60, 90, 120, 180, 240, 270, 300):
            ax.axvline(a, color="0.8", lw=0.6, zorder=0)
        ax.set_title(enc)
        ax.set_ylabel("readout score")
        g = f[f["shape"] == shps[0]].sort_values("angle")
        axes[1, j].semilogy(g["angle"], np.maximum(g["residual"].to_numpy(), 1e-16), color="k", lw=1)
        axes[1, j].set_ylabel("lift residual")
        axes[1, j].set_xlabel("rotation angle (degrees)")
        axes[1, j].set_xticks(range(0, 361, 60))
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_shapes(shapes: Sequence[Shape], res: int = 161):
    """The SDFs on [-1.2, 1.2]² (colour) with their zero level set, one panel per shape."""
    import matplotlib.pyplot as plt

    from hgutils.plotting import use_style

    use_style()
    t = torch.linspace(-1.2, 1.2, res, dtype=torch.float64)
    xx, yy = torch.meshgrid(t, t, indexing="xy")
    pts = torch.stack((xx, yy), dim=-1)
    fig, axes = plt.subplots(1, len(shapes), figsize=(2.2 * len(shapes), 2.4), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        z = shape.sdf(pts).numpy()
        ax.imshow(z, extent=(-1.2, 1.2, -1.2, 1.2), origin="lower", cmap="RdBu", vmin=-1, vmax=1)
        ax.contour(t.numpy(), t.numpy(), z, levels=[0.0], colors="k", linewidths=1)
        ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, ls="--", lw=0.6, color="0.4"))
        ax.set_title(f"{shape.name} ({shape.group_name})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    fig.tight_layout()
    return fig
