# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] tags=[]
# # 05 · Metric similarity analysis: rich vs lazy networks
#
# <!-- hgutils:links -->
# **Medium-scale run:** [05_msa_rich_vs_lazy.ipynb](../results/medium/05_msa_rich_vs_lazy.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/05_msa_rich_vs_lazy.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** N. A. Cayco-Gajic & A. Pellegrino, *Geometry-aware similarity metrics for neural
# representations on Riemannian and statistical manifolds*, arXiv **2603.28764** (2026).
#
# **Method.** Metric similarity analysis (MSA) compares the *intrinsic* geometry two networks give an
# input manifold: the pullback metric $G(p) = J(p)^\top J(p)$ of a layer, compared point by point with
# the spectral ratio $d_{SR}(G_1, G_2) = 1-\sqrt{\lambda_{min}/\lambda_{max}}$ of $G_1 v = \lambda G_2 v$
# and averaged over the manifold (§2, §4). Extrinsic measures (CKA, CCA, RSA, Procrustes) compare the
# embedded point clouds instead.
#
# **Claims tested.**
# 1. a plane and its swiss-roll embedding have the same intrinsic geometry (MSA ≈ 0) while Procrustes
#    and RSA call them dissimilar (Fig. 1);
# 2. rich and lazy networks look alike extrinsically (Procrustes similarity ≈ 1) while MSA separates
#    them (Fig. 5d);
# 3. in a hierarchical sweep (number of classes × regime × seed × trained/untrained) MSA recovers the
#    hierarchy, while CCA and RSA cannot tell trained from untrained networks (Fig. 6a).
#
# **Protocol.** The paper's description, since its code and task are not public: deep tanh networks
# $2 \to H \to H \to K$, rich by small and lazy by large initialisation, trained with Adam on the
# cross-entropy *to convergence*; untrained networks as their own group; every measure scored the same
# three ways. The recipe this notebook used before (one ReLU layer, lazy by output scaling, a fixed
# number of SGD steps) is kept as a named ablation, with one-factor changes, to show which choices make
# the effect disappear. The experiment lives in `hgutils.experiments.nb05_msa_rich_vs_lazy`, the math
# in `hgutils.similarity`; every number below is computed in this run.

# %% tags=["parameters"]
scale: str = "smoke"  # smoke (CI, under 3 min) | medium (make reproduce, about 3 min on 2 CPU cores) | paper (GPU)
seed: int = 0  # base seed of the data, the initialisations and the held-out points
device: str = "cpu"  # cpu or cuda (2-D inputs: this notebook runs on the CPU)
data_dir = None  # str or None: unused, all data here is generated
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# regime checks, fixed before any result is seen (section 2):
rich_min_weight_change: float = 0.5  # rich cells: median relative change of the hidden weights above this
rich_max_ntk_alignment: float = 0.9  # rich cells: median tangent-kernel alignment init vs trained below this
rich_min_label_gain: float = 0.01  # rich cells: median rise of the hidden kernel's label alignment above this
lazy_max_weight_change: float = 0.1  # lazy cells: median relative change of the hidden weights below this
lazy_min_ntk_alignment: float = 0.99  # lazy cells: median tangent-kernel alignment above this
# optional per-field overrides of the preset, None means use the preset:
n_seeds = None  # int or None: networks per (K, regime) cell
hidden = None  # int or None: width of the hidden layers
depth = None  # int or None: hidden layers (the last one is compared)
activation = None  # str or None: tanh, relu or gelu
lazy_mode = None  # str or None: init_scale (large init, the paper) or alpha (Chizat output scaling)
gain_rich = None  # float or None: init scale g of the rich networks
gain_lazy = None  # float or None: init scale g of the lazy networks
loss = None  # str or None: cross_entropy or mse
optimizer = None  # str or None: adam or sgd
stop = None  # str or None: converged (all training points right, loss under loss_tol) or fixed (max_steps)
max_steps = None  # int or None: step cap
n_heldout = None  # int or None: held-out ring points (MSA reference measure and baselines' samples)
grid = None  # int or None: side of the MSA grid (grid squared points)
ablations = None  # list or None: names of ablations (ex.ABLATIONS) run beside the protocol

# %% tags=[]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from hgutils.data.points import swiss_roll, unrolled_plane
from hgutils.experiments import nb05_msa_rich_vs_lazy as ex
from hgutils.ledger import Claims, paper_table
from hgutils.notebook_tools.tables import table
from hgutils.plotting import save_figure, use_style
from hgutils.repro import cached, output_dirs, seed_everything
from hgutils.similarity import (
    linear_cka,
    mlp_pullback_metrics,
    msa,
    msa_from_metrics,
    procrustes_similarity,
    pullback_metric,
    rsa,
)
from hgutils.weightspace.stacked_mlp import mlp_forward

cfg = ex.CONFIG.from_scale(
    scale,
    rich_min_weight_change=rich_min_weight_change,
    rich_max_ntk_alignment=rich_max_ntk_alignment,
    rich_min_label_gain=rich_min_label_gain,
    lazy_max_weight_change=lazy_max_weight_change,
    lazy_min_ntk_alignment=lazy_min_ntk_alignment,
    n_seeds=n_seeds,
    hidden=hidden,
    depth=depth,
    activation=activation,
    lazy_mode=lazy_mode,
    gain_rich=gain_rich,
    gain_lazy=gain_lazy,
    loss=loss,
    optimizer=optimizer,
    stop=stop,
    max_steps=max_steps,
    n_heldout=n_heldout,
    grid=grid,
    ablations=None if ablations is None else tuple(ablations),
)
gen = seed_everything(seed)
out_res, out_fig = output_dirs("05_msa_rich_vs_lazy", scale, results_dir, figures_dir)
use_style()
pd.set_option("display.max_colwidth", None)
for k, v in cfg.to_dict().items():
    print(f"{k:>24}: {v}")

# %% [markdown] tags=[]
# ## 1 · Sanity check: a plane and its swiss roll
#
# Chart coordinates $(t, h) \in [1.5\pi, 4.5\pi] \times [0, 2]$. The swiss roll is
# $(t\cos t, h, t\sin t)$; the *plane* is the same surface unrolled flat, $(s(t), h, 0)$ with $s(t)$
# the arc length of the spiral. Both pull back $\mathrm{diag}(1+t^2, 1)$, so their intrinsic geometry
# is identical; their point clouds in $\mathbb{R}^3$ are not. Here the two "representations" are the
# embeddings themselves (MSA with $f$ = the embedding, reference measure = uniform samples of the chart).

# %% tags=[]
pts = torch.rand(cfg.swiss_points, 2, generator=gen, dtype=torch.float64)
pts = pts * torch.tensor([3 * np.pi, 2.0], dtype=torch.float64) + torch.tensor([1.5 * np.pi, 0.0], dtype=torch.float64)
plane, roll = unrolled_plane(pts), swiss_roll(pts)
swiss = {
    "MSA distance": msa(unrolled_plane, swiss_roll, pts),
    "Procrustes similarity": procrustes_similarity(plane, roll),
    "RSA similarity": rsa(plane, roll),
    "linear CKA": linear_cka(plane, roll),
}
expected = torch.diag_embed(torch.stack([1 + pts[:, 0] ** 2, torch.ones_like(pts[:, 0])], -1))
print(f"max |G_plane - diag(1+t^2, 1)| = {(pullback_metric(unrolled_plane, pts) - expected).abs().max().item():.1e}")
for k, v in swiss.items():
    print(f"{k:>22}: {v:.3g}")
fig = ex.plot_swiss_roll(pts.float(), pts[:, 0].numpy())
save_figure(fig, out_fig, "05_swiss_roll")
plt.show()

# %% [markdown] tags=[]
# ## 2 · Rich and lazy networks, trained to convergence
#
# **Task.** *Ring blobs* (`hgutils.data.points.ring_blobs`): `blobs_per_class` Gaussian blobs per class
# (std `blob_std`) on the unit circle, labels interleaved (blob $j$ of $B = $ `blobs_per_class`$\cdot K$
# at angle $2\pi j/B$ has label $j \bmod K$). With three blobs per class the task is not linearly
# separable for any $K$, and no blob lies opposite a blob of its own class, so an odd function (a tanh
# network with zero biases) can fit it — two opposite blobs per class, the previous task, it cannot.
#
# **Networks.** `depth` hidden layers of width `hidden` and `activation`, $W \sim \mathcal N(0,
# (g/\sqrt{\text{fan\_in}})^2)$, zero (trainable) biases. **Rich** = small initialisation
# (`gain_rich`), **lazy** = large initialisation (`gain_lazy`), α = 1: the paper's description
# ("small weight initialisation ⇒ rich, large ⇒ lazy"). Adam (`lr_rich`, `lr_lazy`) on the
# cross-entropy, full batch; each network stops at the first step where it classifies every training
# point correctly **and** its loss is below `loss_tol` (cap `max_steps`). **Untrained** networks at
# $g$ = `gain_untrained` are their own group; the lazy networks' initial weights are kept as a control
# (*lazy init*, same $g$ as lazy).
#
# **Checks, fixed before the results** (parameters cell). Every network must pass the learnability
# check (`hgutils.loop.LearnabilityGate`: loss at least 5 % below its initial value, training accuracy
# at least 0.1 above chance); a claim that judges a cell with a network that did not train reads
# "inconclusive (did not train)". Regime checks per cell (medians over its networks): relative change
# of the hidden weights $\|W-W_0\|_F/\|W_0\|_F$; alignment of the neural tangent kernel before and after
# training, $\langle\Theta_0,\Theta_1\rangle_F/(\|\Theta_0\|_F\|\Theta_1\|_F)$ (1 = lazy: the kernel did
# not move); the rise of the alignment of the last hidden layer's kernel with the label kernel (rich
# networks learn task-aligned features).

# %% tags=[]
print("regime checks:", ex.regime_criterion(cfg))
key = {"cfg": cfg, "seed": seed, "version": ex.SWEEP_VERSION}
exp = cached("05_msa_experiment", key, lambda: ex.run_experiment(cfg, seed))
meta, cells = exp["meta"], exp["cells"]
regimes = ex.regime_table(cells)
checks = ex.regime_checks(cells, cfg)
gates = ex.group_gates(cells)
display(table(regimes, floats="{:.4g}", index=False))
print(f"rich cells pass the rich checks: {checks['rich']}; lazy cells pass the lazy checks: {checks['lazy']}")
for name, g in gates.items():
    print(f"learnability {name}: {'trained' if g['trained'] else 'DID NOT TRAIN'} ({g['reason']})")

# %% tags=[]
fig = ex.plot_training_curves(cells)
save_figure(fig, out_fig, "05_training_curves")
plt.show()

# %% [markdown] tags=[]
# ### Hidden layers look alike extrinsically …
#
# The last hidden layer of a rich and a lazy network (K = 2, seed 0) at the held-out ring points,
# coloured by the polar angle of the input, projected on its first two principal components, and their
# Procrustes similarity and linear CKA.

# %% tags=[]
heldout, layer, hid = exp["points"]["held-out"], exp["layer"], exp["hidden"]
idx = {m["group"]: i for i, m in enumerate(meta) if m["trained"] and m["classes"] == 2 and m["seed"] == 0}
with torch.no_grad():
    H = mlp_forward(hid, heldout, cfg.activation, layer=layer).double().numpy()
reps = {r: H[i] for r, i in idx.items()}
fig = ex.plot_hidden_pca(reps, torch.atan2(heldout[:, 1], heldout[:, 0]).numpy())
save_figure(fig, out_fig, "05_hidden_pca")
plt.show()
print(f"Procrustes similarity (rich, lazy; K=2, seed 0): {procrustes_similarity(reps['rich'], reps['lazy']):.3f}")
print(f"linear CKA (rich, lazy; K=2, seed 0):            {linear_cka(reps['rich'], reps['lazy']):.3f}")

# %% [markdown] tags=[]
# ### … but their intrinsic geometry differs
#
# The pullback metric of the last hidden layer on the grid (`grid`² points on $[-$`extent`$,
# $`extent`$]^2$), drawn as ellipses (unit balls of $G^{-1}$, normalised per point: the spectral ratio is
# scale-blind, only shape and orientation count), and the MSA distance of the pair on the held-out
# ring points and on the grid.

# %% tags=[]
grid_pts = exp["points"]["grid"]
pair = {r: {k: v[i : i + 1] for k, v in hid.items()} for r, i in idx.items()}  # the two networks alone
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
every = max(1, cfg.grid // 12)
sub = torch.arange(len(grid_pts)).reshape(cfg.grid, cfg.grid)[::every, ::every].reshape(-1)
G_pair = {r: mlp_pullback_metrics(p, grid_pts, layer=layer, activation=cfg.activation)[0] for r, p in pair.items()}
for ax, r in zip(axes, ("rich", "lazy")):
    ex.plot_metric_field(ax, G_pair[r][sub], grid_pts[sub], title=f"{r} (K=2, seed 0): pullback metric")
save_figure(fig, out_fig, "05_metric_fields")
plt.show()
print(f"MSA distance (rich, lazy; K=2, seed 0), grid:     {msa_from_metrics(G_pair['rich'], G_pair['lazy']):.3f}")
print(f"MSA distance (rich, lazy; K=2, seed 0), held-out: {1 - exp['mats']['MSA'][idx['rich'], idx['lazy']]:.3f}")

# %% [markdown] tags=[]
# ## 3 · The hierarchical sweep, every measure scored the same way
#
# All networks — trained cells (K × regime × seed), the untrained group, the lazy initialisations —
# compared on their last hidden layer: **MSA** ($1-d_{MSA}$, uniform measure on the held-out ring
# points; *MSA grid*: on the grid), and on the activations at the same held-out points linear **CKA**,
# **SVCCA** (top directions keeping 99 % of the variance, at most `svcca_components`; plain CCA of 256
# features on a few hundred samples sits at its chance level, see `hgutils.similarity.baselines`),
# **RSA** (Euclidean RDMs, Pearson) and **Procrustes**.
#
# Every split is scored three ways (`hgutils.similarity.scoring`): the **AUC** P(a between-group pair
# is more dissimilar than a within-group pair) (0.5 = blind, 1 = separated; rank-based), the
# **ratio** of mean between- to mean within-group dissimilarity $1-S$ (scale-free: a measure whose
# dissimilarities are all small is not penalised for it; 1 = no separation), and the **raw mean
# similarities**. Splits: *regime* (rich vs lazy, trained, same K), *rich/untrained* (trained rich vs
# the untrained group), *lazy/lazy init* (the control: a lazy network against lazy initialisations),
# *classes* (K = 2 vs 5 within a regime), and the *hierarchy* ρ = Spearman correlation of dissimilarity
# with the design's tree distance (trained/untrained 4; then classes 3, regime 2, seed 1; untrained
# networks are siblings, 1; the lazy-init controls are left out).

# %% tags=[]
scores = ex.score_measures(exp["mats"], meta)
display(table(scores, floats="{:.3f}"))
fig = ex.plot_similarity_panels(exp["mats"], meta, scores)
save_figure(fig, out_fig, "05_similarity_matrices")
plt.show()

# %% [markdown] tags=[]
# The same matrices, each on its own colour range $[\min S, 1]$: where a measure's similarities all lie
# near 1, this shows which blocks its small differences follow.

# %% tags=[]
fig = ex.plot_similarity_panels(exp["mats"], meta, scores, own_scale=True)
save_figure(fig, out_fig, "05_similarity_matrices_own_scale")
plt.show()

# %% [markdown] tags=[]
# **The control.** A large-initialisation tanh network is largely saturated, so its hidden layer differs
# from a $g = 1$ network's before any training; MSA telling lazy networks from the untrained group says
# nothing about learning. The comparison at equal $g$ is *lazy vs lazy init* (table above), and the
# statistics of each group's hidden units at the held-out points are below, with the isotropy
# $\sqrt{\lambda_{min}/\lambda_{max}}$ of their pullback metrics (1 = the layer stretches every direction
# alike; two near-isotropic metrics are close under $d_{SR}$ whatever their orientation, since
# $d_{SR}(G, G') \le 1 - \iota(G)\,\iota(G')$).

# %% tags=[]
stats = ex.activation_stats(hid, heldout, layer, meta, cfg.activation)
stats = stats.join(ex.isotropy_table(exp["isotropy"], meta).add_prefix("isotropy "))
display(table(stats, floats="{:.3f}"))


# %% [markdown] tags=[]
# ## 4 · Which choices make the effect disappear
#
# The same experiment under named ablations (`ex.ABLATIONS`; sizes stay those of the preset): the
# **previous recipe** of this notebook — one hidden ReLU layer, lazy by Chizat–Bach output scaling
# $f = \alpha(h(w) - h(w_0))$ with loss$/\alpha^2$ (α = 30, $g$ = 1) and rich by $g$ = 0.01, SGD with
# momentum on the squared loss for a fixed `max_steps` steps, two opposite blobs per class — and
# one-factor changes of either recipe. Each row reports training (cells that passed the learnability
# check, worst training accuracy), the regime checks, MSA's regime AUC and ratio, the best baseline
# ratio, Procrustes' raw rich–lazy similarity, and the median isotropy of each group's metrics.

# %% tags=[]
def run_ablation(name):
    c = ex.ablation_config(cfg, name)
    return c, cached(
        "05_msa_experiment", {"cfg": c, "seed": seed, "version": ex.SWEEP_VERSION}, lambda: ex.run_experiment(c, seed)
    )


abl = {name: run_ablation(name) for name in cfg.ablations}
rows = [ex.ablation_row("protocol", exp, cfg)] + [ex.ablation_row(n, e, c) for n, (c, e) in abl.items()]
display(table(pd.DataFrame(rows), floats="{:.3f}", index=False))
for name, (_c, e) in abl.items():
    bad = {k: g["reason"] for k, g in ex.group_gates(e["cells"]).items() if not g["trained"]}
    if bad:
        print(f"\n{name}: cells that did not train: {bad}")

# %% [markdown] tags=[]
# **The mechanism.** MSA can only tell two metrics apart as far as they are anisotropic. The violins
# show, per recipe, the isotropy of every network's pullback metric at every held-out point. Where the
# metrics of all groups are close to isotropic, the spectral ratio between any two networks is bounded
# near 0 and seed-to-seed fluctuations dominate; where rich and lazy metrics are strongly anisotropic
# in different directions, MSA separates them.

# %% tags=[]
isos = {"protocol": (exp["isotropy"], meta)} | {n: (e["isotropy"], e["meta"]) for n, (c, e) in abl.items()}
fig = ex.plot_isotropy(isos)
save_figure(fig, out_fig, "05_metric_isotropy")
plt.show()
prev = "previous recipe"
if prev in abl:
    fig = ex.plot_training_curves(abl[prev][1]["cells"], title=prev)
    save_figure(fig, out_fig, "05_training_curves_previous_recipe")
    plt.show()
    display(table(ex.regime_table(abl[prev][1]["cells"]), floats="{:.4g}", index=False, caption=prev))

# %% [markdown] tags=[]
# ## 5 · Paper vs ours
#
# The paper reports these results as figures without numeric tables; its statements are quoted with
# their place in the paper.

# %% tags=[]
display(table(paper_table(ex.paper_rows(swiss, scores)), index=False))

# %% [markdown] tags=[]
# ### What may differ from the paper
#
# The paper publishes no code, task, architecture details, reference measure or numbers for these
# figures. This notebook follows its description (small vs large initialisation, deep networks, trained
# to convergence, untrained networks as a group) and fixes the rest as named, documented choices
# (ring-blob task, tanh, width 256, Adam, cross-entropy, `loss_tol`, held-out ring points as the MSA
# measure, SVCCA as the CCA variant, the design tree of the hierarchy). Two readings of the claims
# matter for the verdicts below. *"Procrustes cannot separate rich from lazy"*: its raw similarity
# between the regimes is near 1, but a measure can be near 1 everywhere and still rank every
# within-regime pair above every between-regime pair; the scale-free ratio and the AUC judge
# separation, the raw similarity only the paper's literal statement. *"CCA cannot tell trained from
# untrained"*: plain CCA of 256 features on a few hundred samples is near its chance level for any
# pair, so the test uses SVCCA, whose chance level is low.

# %% [markdown] tags=[]
# ### Reading the verdicts
#
# - **rich_lazy_procrustes_high_msa_separates** is the paper's two-part statement, literally: the raw
#   Procrustes similarity between regimes, and whether MSA ranks every between-regime pair above the
#   within-regime pairs.
# - **msa_separates_better_than_baselines** asks whether MSA separates the regimes *better* once the
#   scale of each measure is factored out. Where it fails, read the score table: the extrinsic
#   measures' between-regime dissimilarities are small in absolute terms (similarities near 1, the
#   paper's observation) but still several times their within-regime dissimilarities, because two
#   seeds of one regime are nearly identical extrinsically, while MSA's point-wise spectral ratio also
#   varies from seed to seed. "Procrustes similarity ≈ 1" and "Procrustes cannot tell the regimes
#   apart" are different statements. A ratio of means can be driven by a few pairs (a measure with a
#   high ratio and an AUC near 0.5 separates a few networks, not the regimes), so read it beside the
#   AUC.
# - **cca_rsa_blind_to_training** requires both baselines to fail *and* MSA to succeed; the row in the
#   score table shows which part decides it.
# - **ablation_previous_recipe** is the recipe this notebook used before. Its regime checks and the
#   isotropy violins show why its verdict differs: one-layer ReLU metrics are close to isotropic in
#   every group, which caps the spectral ratio between any two networks (column *its bound* of the
#   ablation table), and its rich cells do not pass the pre-registered rich check.

# %% [markdown] tags=[]
# ## 6 · Claims
#
# Each verdict comes from the printed criterion evaluated on the numbers above; claims that judge
# trained networks carry the learnability check of every cell they use. Absolute criteria (a similarity
# above 0.9, an AUC below 0.75) read *holds* or *contradicted*. The two comparisons of MSA with the
# baselines are statistics of the whole similarity matrix, so each difference is judged with its
# leave-one-seed-out jackknife standard error: *holds* beyond 2 se in the paper's direction,
# *contradicted* beyond 2 se against it, *inconclusive* in between (with the difference the run resolves).

# %% tags=[]
claims = Claims("05_msa_rich_vs_lazy", scale)
jack = ex.jackknife_scores(exp["mats"], meta)  # every score with one seed index left out
ex.claim_swiss_roll_msa_zero(claims, swiss)
ex.claim_regimes_verified(claims, cells, cfg)
ex.claim_rich_lazy_procrustes_high_msa_separates(claims, scores, cells)
ex.claim_msa_separates_better_than_baselines(claims, scores, jack, cfg, cells)
ex.claim_msa_recovers_hierarchy(claims, scores, jack, cfg, cells)
ex.claim_cca_rsa_blind_to_training(claims, scores, cells)
ex.claim_ablation_previous_recipe(claims, abl.get(prev))
claims.show()
claims.save(out_res);

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
