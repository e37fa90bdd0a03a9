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
# # 06 · Which symmetries can be read from the weights? Positional encodings, Gram observations, the training domain and weight decay
#
# <!-- hgutils:links -->
# **Medium-scale run:** [06_pe_symmetry_readout.ipynb](../results/medium/06_pe_symmetry_readout.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/06_pe_symmetry_readout.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** N. Chiba, S. Sugiyama, Y. Uranishi, *Observability of symmetries from neural-network weights
# depends on the positional encoding and the observation function*, arXiv:2607.03108 (the text available to us
# stops after Lemma 1 in §3.2, before the training details and the result tables).
#
# **Claim reproduced.** For a neural field $f_\theta(x) = F_\theta(\varphi(x))$ the symmetries visible in the
# weights obey $G_{obs} \subseteq G_{lift}(\varphi) \cap G_{true}$ (Proposition 1): an input symmetry can only
# appear in a weight-level observation if the positional encoding (PE) lifts it to a linear map $\rho(g)$ with
# $\varphi(gx) = \rho(g)\varphi(x)$. The paper reports that **DyadicAxisPE supports D4 readout and suppresses
# D3**, **TriAxisPE gives low D3/D6 scores under Gram observations**, and **random Fourier features (RFF)
# respond mainly to the π rotation** (abstract).
#
# **Beyond the paper: two named factors.** The available text does not say where the training points lie or how
# strongly the weights are decayed, and both decide what the weights show:
# - *training domain* (`domain`): `"disk"` puts the bulk of the points uniformly in the unit disk, so the sampling
#   density has the shape's whole symmetry group; `"square"` puts them uniformly in $[-1,1]^2$, the usual
#   neural-field box, whose density keeps only the elements the shape shares with $D_4$. In both, half the points
#   are jittered boundary points of the shape.
# - *weight decay* (`weight_decay`): AdamW's decoupled decay, which removes the part of $W_0^\top W_0$ that the
#   fit does not use.
#
# The *main grid* (six shapes) is trained at (`domain`, `weight_decay`) and carries the paper-protocol analyses
# (§3–§5). The *factor grid* trains the square, triangle and hexagon at every domain × weight-decay cell
# (§6–§8). Everything is one stacked training run, and all networks with the same seed index start from the same
# initial weights.
#
# **What this notebook does.**
# 1. Computes the exact lift table: which of 16 candidate elements (D4 ∪ D6) each 48-dim PE lifts.
# 2. Trains ReLU MLPs on exact 2D SDFs for every encoding, seed, domain and weight decay, and checks every fit.
# 3. Reads symmetries from the weights with Gram observations, compares them with the learned function's own
#    symmetry (functional score), sweeps the rotation angle, and checks the hierarchy.
# 4. Measures each $G_{true}$ element's readout against the training domain and the weight decay, next to the
#    sampling density's own symmetry, with same-initialisation controls and the initial-weight baseline.
#
# **Scales.** `smoke` (the stored outputs, CI) runs every code path with one seed and 600 steps; `medium`
# (`make reproduce`) uses five seeds and 1500 steps, and its ledger is the one the README reports. §9 says which
# verdicts mean something at which scale.

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤3 min) | "medium" (make reproduce, ≤20 min, CPU) | "paper" (GPU, hours)
seed: int = 0  # base seed
device: str = "cpu"  # "cpu" or "cuda"
data_dir = None  # str or None: unused: every dataset here is generated (exact SDFs)
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset (None keeps the preset's value):
n_seeds = None  # int or None: networks per (shape, encoding, domain, weight decay)
steps = None  # int or None: optimizer steps
hidden = None  # int or None: hidden width
domain = None  # str or None: training domain of the main grid, "disk" or "square"
weight_decay = None  # float or None: AdamW decoupled weight decay of the main grid
factor_domains = None  # list of str or None: training domains of the factor grid (the main domain is added)
factor_weight_decays = None  # list of float or None: weight-decay ladder of the factor grid (main decay added)

# %% tags=[]
import logging
import warnings

import matplotlib.pyplot as plt
import pandas as pd

from hgutils.experiments import nb06_pe_symmetry_readout as ex
from hgutils.ledger import Claims, paper_table
from hgutils.plotting import save_figure, use_style
from hgutils.repro import output_dirs, seed_everything
from hgutils.symmetry.encodings import RandomFourierPE, lift_table
from hgutils.symmetry.groups import candidate_elements, rotation, rotation_sweep
from hgutils.symmetry.shapes import default_shapes

logging.getLogger("hgutils").setLevel(logging.WARNING)
warnings.filterwarnings("ignore", message="IProgress not found")
pd.set_option("display.width", 250)
pd.set_option("display.max_colwidth", None)
use_style()
cfg = ex.CONFIG.from_scale(
    scale,
    n_seeds=n_seeds,
    steps=steps,
    hidden=hidden,
    domain=domain,
    weight_decay=weight_decay,
    factor_domains=factor_domains,
    factor_weight_decays=factor_weight_decays,
)
seed_everything(seed)
out_res, out_fig = output_dirs("06_pe_symmetry_readout", scale, results_dir, figures_dir)
print(cfg)
print(f"main grid: {cfg.domain} domain, weight decay {cfg.weight_decay:g}")
print(f"factor grid: domains {cfg.domains} × weight decays {cfg.weight_decays} on {cfg.factor_shapes}")

# %% [markdown] tags=[]
# ## 1 · Encodings and their exact lifts
#
# All three encodings are Fourier features $\sin/\cos(\omega_i^\top x + b_i)$ with $d = 48$ (arXiv:2607.03108, §3.2):
# DyadicAxisPE ($K=12$, $\omega = 2^k\pi e_{1,2}$), TriAxisPE ($K=8$, $\omega = 2^k\pi v_j$ on three axes 120° apart)
# and RFF ($n=24$, $\omega_i\sim N(0,\sigma^2 I)$, $\sigma=10$, $b_i\sim U[0,2\pi)$).
# Because plane waves with distinct frequencies are linearly independent, $g$ lifts exactly **iff**
# $g^\top$ maps the frequency set onto itself up to sign; $\rho(g)$ is then built block by block
# (sine is odd, cosine even; RFF phases give rotation/reflection blocks). Otherwise `lift` fits $\rho$ by least
# squares on $[-1,1]^2$ and the relative residual shows that no linear lift exists.

# %% tags=[]
encodings = ex.make_encodings(cfg)
elements = candidate_elements()
lifts = lift_table(encodings, elements)
res_tab = lifts.pivot(index="encoding", columns="element", values="residual")[[g.name for g in elements]]
print(res_tab.loc[[e.name for e in encodings]].map(lambda r: f"{r:.0e}").to_string())
print()
for e in encodings:
    print(f"G_lift({e.name}) ∩ candidates = {[g.name for g in e.liftable_set(elements)]}")
fig = ex.plot_lift_residuals(lifts)
save_figure(fig, out_fig, "06_lift_residuals")
plt.show()

# %% [markdown] tags=[]
# Why $\sigma = 10$ for RFF: with a small $\sigma$ every feature is slowly varying on $[-1,1]^2$, so a
# least-squares "lift" of a 90° rotation fits almost perfectly although no exact lift exists; the numerical
# test can then not tell liftable from non-liftable elements.

# %% tags=[]
sig = pd.DataFrame({"sigma": [0.3, 1.0, 3.0, 10.0, 30.0]})
sig["R90 residual"] = [RandomFourierPE(24, s, 0).lift(rotation(90))[1] for s in sig["sigma"]]
sig["R180 residual"] = [RandomFourierPE(24, s, 0).lift(rotation(180))[1] for s in sig["sigma"]]
print(sig.to_string(index=False, float_format=lambda v: f"{v:.1e}"))

# %% [markdown] tags=[]
# ## 2 · Shapes, training domains and training
#
# Exact signed distance functions, centred and oriented so that each $G_{true}$ is a subgroup of the candidates
# (square D4, triangle D3, hexagon D6, circle O(2), rectangle D2, an asymmetric control).

# %% tags=[]
shapes = default_shapes()
fig = ex.plot_shapes(shapes)
save_figure(fig, out_fig, "06_shapes")
plt.show()

# %% [markdown] tags=[]
# Each network is `48 → hidden → hidden → 1` (ReLU), trained with AdamW on fresh minibatches drawn from a pool of
# points per (seed, domain, shape). Networks with the same seed index share their initial weights whatever their
# shape, encoding, domain or weight decay, and networks that differ only in weight decay see the same minibatches
# in the same order, so any two cells of a seed differ only in the factor that names them.

# %% tags=[]
grid = ex.train_grid(cfg, seed=seed, shapes=shapes, encodings=encodings, device=device)
print(f"{len(grid.meta)} networks trained at once ({cfg.steps} steps), {len(grid.pool_meta)} training pools")
print(grid.meta.groupby(["domain", "weight_decay"]).size().rename("networks").to_frame().T.to_string())

# %% [markdown] tags=[]
# **The sampling density's own symmetry.** The jittered boundary points have the shape's group $G_{true}$, the bulk
# has the domain's group (O(2) for the disk, $D_4$ for the square), so the density is invariant exactly under
# $G_{true} \cap G_{domain}$ — on the disk all of $G_{true}$, on the square e.g. only the reflection about the
# vertical axis for the triangle. The table checks this on the pools the networks were trained on (seed 0): for
# each element, $z$ is the largest standardised difference between the empirical characteristic functions of the
# points and of the transformed points (240 Fourier moments); it stays at a few units for elements that preserve
# the density and is far larger for the ones that do not.

# %% tags=[]
fig = ex.plot_domains(grid, "triangle")
save_figure(fig, out_fig, "06_domains")
plt.show()
dsym = ex.data_symmetry_table(grid, elements)
print(ex.data_symmetry_summary(dsym).to_string(index=False, float_format=lambda v: f"{v:.1f}"))

# %% [markdown] tags=[]
# **Did every network train?** Relative $L_2$ error $\|f - \mathrm{sdf}\| / \|\mathrm{sdf}\|$ on fresh points of the
# unit disk (inside both domains; seed mean), and the training curves (median over shapes and seeds). A claim is
# judged only on networks that left their initial loss plateau and fit their SDF to a relative error below
# `fit_tol`; otherwise its verdict reads "inconclusive (did not train)".

# %% tags=[]
fit = ex.fit_table(grid.meta)
print(f"fit_tol = {cfg.fit_tol}; worst relative error of any network: {grid.meta['eval_rel_err'].max():.3f}")
print(
    fit.pivot_table(
        index=["domain", "weight_decay", "shape"], columns="encoding", values="rel_err", sort=False
    ).to_string(float_format=lambda v: f"{v:.3f}")
)
fig = ex.plot_training_curves(grid)
save_figure(fig, out_fig, "06_training_curves")
plt.show()

# %% [markdown] tags=[]
# ## 3 · Readout from the weights (main grid)
#
# Observation functions (data-free, in PE-feature space): the prefix Gram $\Gamma_k = A_k^\top A_k$ with
# $A_k = W_{k-1}\cdots W_0$ — the product of the first $k$ linear maps, nonlinearities ignored (it is the
# all-units-active Jacobian of layer $k$ w.r.t. $\varphi$; invariant to hidden-neuron permutations and inner
# ReLU rescalings). $\Gamma_1 = W_0^\top W_0$ is the first-layer Gram. Score of $g$:
# $s(g) = 1 - \|\rho^\top\Gamma\rho - \Gamma\|_F/\|\Gamma\|_F$ (and the scale-free cosine variant).
# `prefix1@init` is the same score on the initial weights (the random baseline), `functional` compares
# $f(gx)$ with $f(x)$ on fresh points (ground truth for the learned function's symmetry).
# In the heatmaps a white dot marks elements the encoding cannot lift, a white × liftable elements outside
# the shape's $G_{true}$.

# %% tags=[]
frame = ex.readout_frame(grid, elements)
frame.to_csv(
    out_res / "readout_scores.csv.gz", index=False, float_format="%.5g", compression={"method": "gzip", "mtime": 0}
)
main = ex.cell_frame(frame, cfg.domain, cfg.weight_decay)
shape_order = [s.name for s in shapes]
fig = ex.plot_readout_heatmaps(
    main, ["prefix1@init", "prefix1", "prefix2", "functional"], "frobenius", shape_order=shape_order
)
save_figure(fig, out_fig, "06_readout_heatmaps")
plt.show()

# %% tags=[]
fig = ex.plot_readout_heatmaps(main, ["prefix1", "prefix2"], "cosine", shape_order=shape_order)
save_figure(fig, out_fig, "06_readout_heatmaps_cosine")
plt.show()
print(f"first-layer Gram readout, Frobenius score (seed mean; {cfg.domain} domain, weight decay {cfg.weight_decay:g}):")
print(ex.score_table(main, "prefix1").to_string(float_format=lambda v: f"{v:.2f}"))

# %% [markdown] tags=[]
# ## 4 · Rotation sweeps (main grid)
#
# Score of $R_\theta$ for $\theta \in [0°, 360°)$ (first-layer Gram, seed mean), with each encoding's lift residual
# below: exact lifts sit at the residual floor. Peaks away from 0° can only be exact readouts where the
# residual is at the floor.

# %% tags=[]
main_grid = grid.cell(cfg.domain, cfg.weight_decay)
sweep = ex.sweep_frame(main_grid, rotation_sweep(cfg.sweep_num), "prefix1", "frobenius")
fig = ex.plot_rotation_sweeps(sweep, shape_order=shape_order)
save_figure(fig, out_fig, "06_rotation_sweeps")
plt.show()
peaks = ex.sweep_peaks(sweep)
print(peaks.pivot(index="shape", columns="encoding", values="angle").loc[shape_order].to_string())

# %% [markdown] tags=[]
# Reading the sweeps: between exact angles the least-squares "lift" cannot rotate the high-frequency features and
# shrinks those rows of $\rho$ towards 0, so the score measures only the low-frequency part of $\Gamma$. Close to an
# exact angle this can score slightly *above* the exact lift (whose permutation also moves the untrained,
# unstructured high-frequency part of $\Gamma$), which is why peaks are a few degrees wide and may show a notch
# at the exact angle. Only peaks that coincide with a residual at the floor are exact readouts in the sense of
# the hierarchy; the table lists the highest-scoring angle away from 0° per (shape, encoding).
#
# ## 5 · Hierarchy check (main grid)
#
# For every (encoding, observation) we count the (shape, element ≠ I) cells whose seed-mean score is at least
# the threshold, and among them those that violate $G_{obs} \subseteq G_{lift} \cap G_{true}$
# (`not_in_G_data`: high cells whose element the training density breaks — allowed by the hierarchy).

# %% tags=[]
hier = ex.hierarchy_check(main, cfg.threshold)
print(f"threshold = {cfg.threshold}")
print(hier.to_string(index=False))

# %% [markdown] tags=[]
# The prefix-2 Gram and the cosine variant are looser observations: $\Gamma_2$ of a weight-decayed network is
# dominated by a few low-frequency directions, which least-squares lifts of non-liftable elements approximate
# well, so "high" cells outside $G_{lift}$ appear there; the hierarchy is an exact statement about exact lifts
# and the first-layer Frobenius score is the observation that respects it here. The `functional` rows are the
# ground truth for the learned function: it is symmetric under (nearly) all of $G_{true}$ whatever the encoding.
#
# ## 6 · The training domain and weight decay
#
# Each panel shows the first-layer Gram score (seed mean) of every element of the shape's $G_{true}$ (columns)
# for every domain × weight-decay cell (rows); hatched cells are elements the training density breaks. Above each
# column of panels, two strips: the training density's measured symmetry (green: respected; $z$ as in §2) and the
# learned *function's* own score of each element (the lowest over encodings and weight decays). Where the
# function strip is near 1 and a Gram cell is low, the function is symmetric and the weights show nothing.
#
# Our hypothesis, to be tested: a Gram readout can only pick up a symmetry that shapes the training problem, and
# the problem's group is $G_{true} \cap G_{data}$, so on the square the weights should show the elements the
# density respects and lose those it breaks, even though the learned function keeps them.

# %% tags=[]
ftab = ex.factor_table(frame)
ftab.to_csv(out_res / "factor_scores.csv", index=False, float_format="%.5g")
fshapes = list(cfg.factor_shapes)
fig = ex.plot_factor_scores(ftab, dsym, "gram", shape_order=fshapes)
save_figure(fig, out_fig, "06_factor_scores")
plt.show()

# %% tags=[]
summary = ftab.groupby(["encoding", "shape", "domain", "weight_decay"], sort=False)[["gram", "init", "functional"]]
summary = summary.mean().unstack(["domain", "weight_decay"])
print("mean over G_true∖{I}: first-layer Gram score (trained, initial weights) and functional score, seed means")
print(summary.to_string(float_format=lambda v: f"{v:.2f}"))
print()
dens = {d: ex.density_readout(ftab, "TriAxisPE", d, cfg.weight_decay, ["triangle", "hexagon"]) for d in cfg.domains}
for d, r in dens.items():
    print(
        f"TriAxis, {d} domain, weight decay {cfg.weight_decay:g}, triangle + hexagon: "
        f"{r['n_kept']:.0f} G_true elements the density respects read {r['kept_gram']:.2f} "
        f"(function {r['kept_functional']:.2f}); {r['n_broken']:.0f} it breaks read {r['broken_gram']:.2f} "
        f"(function {r['broken_functional']:.2f})"
    )

# %% [markdown] tags=[]
# ## 7 · Dyadic D4 readout against its same-initialisation control
#
# For each seed, the Dyadic network trained on the square and the one trained on the triangle start from the same
# weights, see the same domain and decay, and differ only in the target. Over the D4 elements the square has and the
# triangle lacks (R90, R180, R270, S0, S45, S135), the square network's Gram score minus the triangle network's is a
# paired gap that isolates what the square's symmetry put into the weights; the initial weights give the floor.

# %% tags=[]
ctrl = ex.same_init_control(frame, "DyadicAxisPE", "square", "triangle")
ctrl_seeds = ex.same_init_control(frame, "DyadicAxisPE", "square", "triangle", per_seed_values=True)
print(ctrl.drop(columns="elements").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
print("elements:", ctrl["elements"].iloc[0])
fig = ex.plot_same_init_control(ctrl)
save_figure(fig, out_fig, "06_dyadic_control")
plt.show()

# %% [markdown] tags=[]
# ## 8 · The hierarchy in every cell
#
# The first-layer Frobenius hierarchy check of §5, repeated in every domain × weight-decay cell of the factor grid;
# below it, every cell read out high although the element is not liftable or not in $G_{true}$, with the learned
# function's own score of that element.

# %% tags=[]
hcells = ex.hierarchy_by_cell(frame[frame["shape"].isin(fshapes)], cfg.threshold)
print(hcells.to_string(index=False))
outliers = ex.hierarchy_outliers(frame[frame["shape"].isin(fshapes)], cfg.threshold)
print()
if len(outliers):
    print(outliers.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
else:
    print("no high cell outside G_lift ∩ G_true")

# %% [markdown] tags=[]
# Proposition 1 is exact: an *exact* readout ($\rho^\top\Gamma\rho = \Gamma$) needs an exact lift and an exact
# symmetry. The threshold test reads approximate scores, so a target that is *nearly* symmetric under an element
# outside $G_{true}$ can push that element over the threshold; the function's own score of the element (last
# column above; about $1-\sqrt2$ for unrelated values, 1 for an exact symmetry) tells such near-symmetries apart
# from readouts of nothing. Those cells are what a `hierarchy@*` claim fails on, if it fails.

# %% [markdown] tags=[]
# ## 9 · Paper vs ours, and how to read the verdicts
#
# The paper states its results qualitatively (abstract of arXiv:2607.03108; the tables are beyond the available
# text). Ours are seed means of the first-layer Gram Frobenius score, per training domain at the main weight decay.

# %% tags=[]
by_domain = {
    d: ex.claim_metrics(ex.cell_frame(frame, d, cfg.weight_decay), None, "prefix1", "frobenius", cfg.threshold)
    for d in cfg.domains
}
m = ex.claim_metrics(main, sweep, "prefix1", "frobenius", cfg.threshold)
m2 = ex.claim_metrics(main, sweep, "prefix2", "frobenius", cfg.threshold)
rows = ex.paper_rows(by_domain, m, m2, cfg.domain, cfg.weight_decay)  # one column of ours per training domain
print(paper_table(rows, what="pattern").to_string(index=False))

# %% [markdown] tags=[]
# **Which reading the paper's setting implies.** The available text fixes the encodings and $d = 48$ but neither
# the training distribution nor the weight decay. The usual neural-field setting samples the box $[-1,1]^2$: our
# `square` domain. There the sampling density keeps only $G_{true} \cap D_4$ — for the triangle the identity and
# one reflection, for the hexagon the rectangle group $D_2$ — so TriAxisPE's exact lifts of the D3 rotations have
# nothing in the training problem to pick up, and a *low* TriAxis D3/D6 readout is what the hierarchy, refined by the
# density's symmetry, predicts. The paper's TriAxis result — unexpected at first sight, since TriAxisPE lifts all
# of D6 — is then the square-domain reading. On the disk
# the same encoding sees the whole of $G_{true}$ in the data and its D3/D6 readout rises (compare the two domain
# columns above and the `triaxis_*` claims per domain below).
#
# **What a user should expect.** On the square domain, expect the weights to show at most the elements the shape
# shares with $D_4$ (and only those the PE lifts); a symmetric *function* (functional score near 1) tells you
# nothing about whether the weights will show it. On an O(2)-invariant domain the readout follows
# $G_{lift} \cap G_{true}$. In both, weight decay sharpens the readout: without it, the trained Gram still carries
# the initial random part, so absolute scores stay lower while the same-initialisation gap (§7) already shows the
# symmetry.
#
# **Which verdicts mean something at which scale.** The stored outputs are the `smoke` preset: one seed, 600 steps
# and a 16k-point pool per shape — enough to run every code path, not to judge a claim. With one seed a "seed mean"
# is one network, and the absolute Gram scores keep rising with training (the decay removes the random part of
# $\Gamma$ step by step), so every verdict that compares a score with a fixed threshold
# (`triaxis_below_threshold@*`, `dyadic_suppresses_d3@*`, `hierarchy*`) can differ between smoke and medium: the
# TriAxis hexagon readout on the disk, for one, can stay below 0.7 after 600 smoke steps and pass it after 1500
# medium steps, so `triaxis_below_threshold@disk` may hold here and fail in the medium ledger. The comparative
# verdicts (`dyadic_d4@*`, `triaxis_low_d3_d6@*`, `rff_pi`, the same-initialisation gaps, `triaxis_follows_density`)
# are more stable but also rest on one seed here. The `medium` ledger (five seeds, 1500 steps, written to
# `results/medium/06_pe_symmetry_readout/claims.json` and shown in the README) is the result; the `paper` preset
# (20 seeds, 10k steps) is for a GPU.
#
# ## 10 · Claims
#
# Each verdict is computed from the numbers above; each claim names the cells it judges and is inconclusive (did not
# train) if any of their networks did not train. Absolute criteria (a score below a threshold, no violation of the
# hierarchy) read *holds* or *contradicted*. A comparison between two readouts is judged over seeds
# (`hgutils.verdicts`): its difference minus the criterion's margin *holds* beyond 2 standard errors, is
# *contradicted* beyond 2 se the other way and is *inconclusive* in between, with the difference the seeds resolve.
# With one seed (smoke) there is no standard error, so every comparison reads inconclusive there. The paper's "TriAxis gives low D3/D6 scores" is read two ways on each domain:
# *comparative* (below Dyadic's D4 readout on the square) and *absolute* (below the readout threshold). We also
# record whether the TriAxis D3 readout is above its own off-group baseline: if it is, the exact lift exists
# **and** training uses it, only more weakly than Dyadic uses D4.

# %% tags=[]
claims = Claims("06_pe_symmetry_readout", scale)
ex.claim_rff_pi(claims, cfg, grid, m)
ex.claim_hierarchy(claims, cfg, grid, m)
for d in cfg.domains:
    ps = ex.claim_metrics_by_seed(ex.cell_frame(frame, d, cfg.weight_decay), "prefix1", "frobenius", cfg.threshold)
    ex.claim_dyadic_d4(claims, cfg, grid, d, by_domain[d], ps)
    ex.claim_dyadic_suppresses_d3(claims, cfg, grid, d, by_domain[d])
    ex.claim_triaxis_low_d3_d6(claims, cfg, grid, d, by_domain[d], ps)
    ex.claim_triaxis_below_threshold(claims, cfg, grid, d, by_domain[d])
    ex.claim_triaxis_d3_visible(claims, cfg, grid, d, by_domain[d], ps)
for d in cfg.domains:
    ex.claim_dyadic_d4_control(claims, cfg, grid, d, ctrl, ctrl_seeds)
    ex.claim_dyadic_d4_control(claims, cfg, grid, d, ctrl, ctrl_seeds, wd0=True)
    ex.claim_hierarchy_domain(claims, cfg, grid, d, hcells)
for d in cfg.domains:
    ex.claim_triaxis_follows_density(claims, cfg, grid, d, dens[d], frame)
claims.show()
claims.save(out_res);

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
