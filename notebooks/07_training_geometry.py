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
# # 07 · The geometry of training: 13-layer INR MLPs in the Poincaré ball (GTH-GMN)
#
# <!-- hgutils:links -->
# **Medium-scale run:** [07_training_geometry.ipynb](../results/medium/07_training_geometry.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/07_training_geometry.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** *Temporal Geometry of Deep Networks: Hyperbolic Representations of Training Dynamics for
# Intrinsic Explainability* (ICLR 2026, OpenReview [Xq64xkQCak](https://openreview.net/forum?id=Xq64xkQCak); no arXiv id, no public code).
#
# **Claims reproduced.** The paper's embedding figure shows the parameter graph of a 13-layer INR MLP in
# the Poincaré ball at two snapshots of its training, t = 11 and t = 97 of about 100, and reads three
# things off it: the layers separate *radially*, they separate *angularly*, and the nodes drift toward the
# boundary as training goes on. The figure is visual; here each statement becomes a number per network
# and is judged against a control.
#
# **What this notebook does.**
# 1. fits a zoo of 13-layer SIRENs (one image each, its own initialisation) and records about 100
#    log-spaced snapshots of each trajectory;
# 2. trains GTH-GMN's node embedding by reconstruction alone (the paper's stage 1: the weight graphs are
#    the targets, no labels) on some INRs, early-stopped on others, and reads INRs it never saw;
# 3. draws one of them in the ball at t = 11 and t = 97, and the per-layer radius and the two separation
#    indices η² over all snapshots;
# 4. judges the three statements, each against the same encoder reading the same trajectories with their
#    snapshots shuffled: a trend of training disappears under the shuffle, an artefact of the encoder's
#    recurrence does not.
#
# GTH-GMN is built at the size notebook 01 chose on its validation split (`gth_size` in the preset; at
# medium, 01's grid kept its declared first cell, `default`, since no cell passed the learnability gate
# within the grid's 300 steps; `gth_overrides` can set any other field). Scales: `smoke` (CI: 10 digit INRs of width 6, 8 snapshots, a few epochs: every code path, no
# claim judged), `medium` (40 MNIST INRs of width 16, 100 snapshots, the encoder to its plateau within a
# 150-epoch ceiling), `paper` (256 INRs of width 32, GPU).

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤ 3 min) | "medium" (make reproduce, CPU, ≤ 30 min) | "paper" (GPU)
seed: int = 0  # seed of the zoo, the encoder and the shuffled control
device: str = "cpu"  # "cpu" or "cuda": where the INRs are fitted and the encoder trained
data_dir = None  # str or None: dataset folder; None means $HGUTILS_DATA, then packaged/offline copies
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset, None = use the preset:
n_inrs = None  # int or None: INRs of the 13-layer zoo
T = None  # int or None: snapshots per trajectory
epochs = None  # int or None: the encoder's epoch ceiling (the plateau rule ends it before)

# %% tags=[]
import logging
import time

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from hgutils.experiments import nb07_training_geometry as ex
from hgutils.ledger import Claims
from hgutils.notebook_tools.tables import table
from hgutils.plotting import save_figure
from hgutils.repro import output_dirs, seed_everything

logging.getLogger("hgutils").setLevel(logging.WARNING)
cfg = ex.CONFIG.from_scale(scale, n_inrs=n_inrs, T=T, epochs=epochs)
seed_everything(seed)
out_res, out_fig = output_dirs("07_training_geometry", scale, results_dir, figures_dir)
minutes: dict[str, float] = {}  # measured wall minutes per section
print(cfg)

# %% [markdown] tags=[]
# ## 1. The 13-layer INR zoo
#
# One SIREN per image (2 inputs, 12 hidden layers of `width` sine units, 1 output: 13 linear layers; the
# paper does not state the width), fitted with Adam from its own initialisation. Each trajectory keeps `T`
# snapshots, log-spaced from step 0 to the last step, so the early steps, where the weights move fastest,
# are dense. The table gives the fit quality and how far the weights moved from the first snapshot to the
# last (median over INRs of the relative Frobenius change).

# %% tags=[]
t0 = time.time()
zoo = ex.deep_inr_zoo(cfg, scale=scale, data_dir=data_dir, seed=seed, device=device)
display(table(ex.zoo_table(zoo), index=False))
print(f"source: {zoo.info['source']}")
minutes["zoo"] = (time.time() - t0) / 60

# %% [markdown] tags=[]
# ## 2. GTH-GMN's embedding, trained by reconstruction
#
# The paper learns the embedding self-supervised: the encoder places every node of every snapshot in the
# ball, and decoders reconstruct the weight graph from the positions (Fermi–Dirac links, power-law
# magnitudes, tangent-space signs, with slope, smoothness and ranking regularisers). The first `n_train`
# INRs train it; the next `n_val` stop it on its plateau -- the loop's plateau rule: `patience` epochs in a
# row that do not lower their reconstruction loss by more than 1 % -- or at the `epochs` ceiling, where it
# is marked *capped* only if its last `patience` epochs still gained more than that, and the claims say so
# (a run that reaches its ceiling on its plateau has converged). The INRs
# after those are read: each snapshot's node coordinates are refined on the ball (stage 2) and the
# reconstruction is measured on them, beside the baselines a decoder must beat (link AUC 0.5, the per-block majority sign, the block-mean magnitude R²).

# %% tags=[]
t0 = time.time()
run = ex.training_geometry(zoo, cfg, seed=seed, device=device)
display(table(ex.encoder_table(run), index=False))
print("learnability:", run.gate["reason"])
fig = ex.plot_encoder_curves(run.log, cfg.epochs, title="13-layer INRs: GTH-GMN's encoder trained by reconstruction")
save_figure(fig, out_fig, "07_encoder_curves")
plt.show()
minutes["encoder and readouts"] = (time.time() - t0) / 60

# %% [markdown] tags=[]
# ## 3. The ball at t = 11 and t = 97
#
# One read INR's parameter graph at the paper's two snapshots, mapped to our `T` (t = 11 and t = 97 of
# ~100 are the fractions 0.11 and 0.97 of the trajectory). Each dot is a neuron, each triangle the bias
# node of a layer, coloured from the input layer (dark) to the output (light). With a node dimension above
# 2 the disk is a view: every radius is exact, the directions are the two leading principal axes of the
# tangent vectors at the origin, one view for both panels.

# %% tags=[]
early, late = ex.snapshot_pair(zoo.T)
r = run.readout
fig = ex.plot_ball(
    r.z[0], r.node_layer, r.node_type, (early, late), r.steps, r.c, title="one 13-layer INR in the Poincaré ball"
)
save_figure(fig, out_fig, "07_ball")
plt.show()

# %% [markdown] tags=[]
# ## 4. Over training: per-layer radius, layer separation, and the shuffled control
#
# For every read INR and snapshot: the mean hyperbolic radius of each layer's nodes; the radial separation
# η²_r (the share of the variance of the node radii explained by the layer) and the angular separation
# η²_θ (the same for their directions); the mean radius of all nodes. The **control** reads the same INRs
# with their snapshots in one random order (plotted by read position): what a trend of training would
# show in the true order and not in the shuffled one. Dotted lines mark the paper's two snapshots.

# %% tags=[]
fig = ex.plot_layer_radius(r, early, late, title="13-layer INRs: mean radius of each layer over training")
save_figure(fig, out_fig, "07_layer_radius")
plt.show()
fig = ex.plot_readouts(r, early, late, title="13-layer INRs: layer separation and radius over training")
save_figure(fig, out_fig, "07_readouts")
plt.show()
display(table(ex.readout_table(r, early, late), index=False))
display(table(pd.DataFrame([{"section": k, "minutes": round(v, 1)} for k, v in minutes.items()]), index=False))

# %% [markdown] tags=[]
# ## 5. Claims
#
# Every statement goes through one rule (`hgutils.verdicts`): it *holds* when the change from t = 11 to
# t = 97 is above 0 and above the shuffled control's change, each by more than 2 standard errors over the
# read INRs (paired); it is *contradicted* when resolved the other way and *inconclusive* otherwise, with
# the smallest change the run could resolve. Each claim records the encoder's learnability check and
# whether its ceiling ended it while it was still improving (capped). The claim ids are those notebook 01 recorded before the figure moved here.
# At `smoke` nothing is judged.

# %% tags=[]
claims = Claims("07_training_geometry", scale)
judge = scale != "smoke"
ex.claim_layers_separate_radially(claims, run.readout, run.gate, judge)
ex.claim_layers_separate_angularly(claims, run.readout, run.gate, judge)
ex.claim_nodes_drift_outward(claims, run.readout, run.gate, judge)
claims.show()
claims.save(out_res);
# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
