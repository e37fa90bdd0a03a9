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
# # 02 · Sine-wave INR regression (DWSNets self-supervised protocol, GTH-GMN)
#
# <!-- hgutils:links -->
# **Medium-scale run:** [02_sine_regression.ipynb](../results/medium/02_sine_regression.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/02_sine_regression.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** *Temporal Geometry of Deep Networks: Hyperbolic Representations of Training Dynamics for
# Intrinsic Explainability* (ICLR 2026, OpenReview [Xq64xkQCak](https://openreview.net/forum?id=Xq64xkQCak); no arXiv id, no public code).
#
# **Claim reproduced.** On INRs of y = a·sin(bx), GTH-GMN's embedding predicts (a, b) best on average —
# test MSE 1.06 ± 0.24 versus GMN 1.13 ± 0.08 and DWSNets 1.39 ± 0.06 — but with a larger variance,
# which the paper attributes to the effective Riemannian step growing with the radius (and suggests
# a more conservative Riemannian step as a remedy).
#
# **Protocol (DWSNets, Navon et al. 2023, arXiv:2301.12780).** a, b ~ U(0, 10); one SIREN 1 → 32 → 32 → 1
# (ω₀ = 30) per function, Adam lr 10⁻³, weight decay 10⁻⁴, full batch, stopping at loss 10⁻⁴; each
# encoder is trained **self-supervised**, then a **linear** least-squares regression (scikit-learn's
# `LinearRegression` in DWSNets' code) from the frozen 16-d encoder output to (a, b) gives the test MSE.
# Every probe reads the same width, 16: an encoder's 16-d output, or the leading 16 principal components of
# an embedding that is wider (GTH-GMN's frozen reconstruction embedding); the results record it
# (`probe_dim`), and a wider probe, where one is shown, is labelled as such and judges no claim.
# The baselines' self-supervised objective is DWSNets' InfoNCE: each network is paired with **one**
# augmented view of itself (the weights shifted by 0.2 standard deviations of Gaussian noise and masked
# with dropout p = 0.5, applied before normalisation); the loss reads a projection head that the probe
# does not see. GTH-GMN's objective is its own — reconstructing the weight graphs (stage 1), then the
# Riemannian refinement of the node coordinates (stage 2) with step size `refine_lr`. Whether the
# paper's GTH-GMN regresses (a, b) or only the frequency is not stated; every encoder is probed for
# both, and the MSE is the mean over the two. The floor is the test MSE of predicting the training
# mean of (a, b) (≈ 8.3, the variance of U(0, 10)).
#
# **What this notebook does.** Builds the sine zoo with trajectories, splits it once, trains every
# encoder with the shared loop and budget over several seeds, shows that each trained, reports mean ±
# std test MSE, plots the embedding against (a, b), and analyses the variance across seeds — including
# the paper's remedy, a 10× smaller Riemannian step (which now acts on the node coordinates, as the
# paper's stage 2 does). Supervised gradient-boosted trees on weight statistics (final checkpoint, and
# every snapshot) give a yardstick of how much of (a, b) the weights carry.
#
# Scales: `smoke` (CI: 64 INRs, 2 epochs — runs every code path, judges no claim),
# `medium` (1,000 INRs split 800 / 100 / 100, T = 10 log-spaced snapshots, every encoder to its plateau within
# a 150-epoch ceiling, 3 seeds, two one-thread workers; the measured time is the preset's `COST_MINUTES`),
# `paper` (12,000 INRs, T = 80, up to 500 epochs, 5 seeds, GPU).

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤ 3 min) | "medium" (make reproduce, ≤ 150 min, CPU) | "paper" (GPU, hours)
seed: int = 0  # base seed (model seeds are seed, seed+1, ...; zoo and split use it too)
device: str = "cpu"  # "cpu" or "cuda": where the sine INRs are fitted and the encoders trained
data_dir = None  # str or None: dataset folder (this notebook generates its data)
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset, None = use the preset:
n_seeds = None  # int or None: encoder seeds
epochs = None  # int or None: epoch ceiling per encoder and seed (the plateau rule ends runs before it)
refine_lr = None  # float or None: GTH-GMN's stage-2 Riemannian step size
inputs = None  # str or None: standardize | delta | rms | none (how every model's inputs are prepared)

# %% tags=[]
import logging

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from hgutils.experiments import gth_selection as gsel
from hgutils.experiments import nb02_sine_regression as ex
from hgutils.experiments import weightspace_protocol as cmp
from hgutils.experiments.weightspace_protocol.recipe_deviations import as_the_authors_run_it, deviations
from hgutils.ledger import Claims, paper_table
from hgutils.notebook_tools.tables import table
from hgutils.plotting import plot_results_bars, plot_training_curves, save_figure
from hgutils.repro import output_dirs, seed_everything
from hgutils.weightspace.in_zoo_baselines import in_zoo_references

logging.getLogger("hgutils").setLevel(logging.WARNING)
pd.set_option("display.max_colwidth", None)
pd.set_option("display.width", 250)
cfg = ex.CONFIG.from_scale(scale, n_seeds=n_seeds, epochs=epochs, refine_lr=refine_lr, inputs=inputs)
seed_everything(seed)
out_res, out_fig = output_dirs("02_sine_regression", scale, results_dir, figures_dir)
seeds = [seed + i for i in range(cfg.n_seeds)]
print(cfg)
print("encoder seeds:", seeds)

# %% [markdown] tags=[]
# ## 1. The sine zoo
#
# Each network's (a, b) and initialisation depend only on its index and the seed; T snapshots are
# recorded log-spaced over the fit, step 0 included (DWSNets stored only the final INR; the trajectory
# is what GTH-GMN adds). The final fit loss shows how well the SIRENs represent their functions.
#
# **Deviation at `medium`: the zoo's size.** DWSNets' sine set holds 12,000 INRs (1,000 test, 1,000
# validation), and `paper` keeps that. `medium` uses 1,000 (800 training, 100 validation, 100 test):
# at 2,000 (1,600 training), DWSNet and GMN cost about 29 CPU-s per epoch each on this machine and were still
# improving at epoch 25, which projected the notebook to about 4 h on 2 cores, above its 150-minute budget.
# The claims below are judged on this smaller zoo; the line under the zoo says which size ran.

# %% tags=[]
zoo = ex.sine_inr_zoo(cfg, scale=scale, seed=seed, device=device)
target = zoo.meta["target"]
print(f"{len(zoo)} sine INRs x T={zoo.T} snapshots (steps {zoo.steps.tolist()})")
paper_nets = ex.CONFIG.PRESETS["paper"]["n_nets"]
if scale != "paper" and len(zoo) < paper_nets:
    print(f"zoo size: {len(zoo):,} INRs, a deviation from the {paper_nets:,} of DWSNets' sine set (the paper preset)")
print(
    f"a in [{target[:, 0].min():.2f}, {target[:, 0].max():.2f}], b in [{target[:, 1].min():.2f}, {target[:, 1].max():.2f}]"
)
fl = zoo.meta["final_loss"]
print(f"final fit MSE: median {fl.median():.2e}, 90th percentile {fl.quantile(0.9):.2e}")

# %% [markdown] tags=[]
# ## 2. Self-supervised encoders on one split
#
# **Protocol shared with notebooks 01 and 03** (`hgutils.experiments.weightspace_protocol`): one split; the same
# inputs for every model (per-entry standardisation with training-set statistics, constant snapshots
# dropped), except GMN, which standardises inside the model per weight and bias tensor as Neural Graphs
# does; every model trained to its **plateau** through the one training loop: an epoch counts as better
# only when it lowers the validation loss by more than 1 % of it (`hgutils.loop.DEFAULT_MIN_DELTA`), and a
# run stops after `patience` epochs in a row that do not, never before `min_epochs`; a run that reaches the
# `epochs` ceiling is marked *capped* only when its last `patience` epochs still gained more than that (a
# verdict resting on it then says so), one that reaches it on its plateau has converged; a run whose loss
# goes non-finite stops there, keeps its best validated epoch and is counted as *diverged*. Each baseline
# trains with its authors' optimiser settings and weight-space augmentations (`recipe` column: DWSNet as
# DWSNets' self-supervised trainer — AdamW 5·10⁻³, weight decay 5·10⁻⁴, AMSGrad, batch 512; GMN as Neural
# Graphs, batch 128, a 1,000-step warm-up, with one named deviation: no dropout inside the model (Neural Graphs' classification script uses 0.2;
# DWSNets' self-supervised trainer none): each InfoNCE view draws its own mask, and with it GMN sat at the
# chance value on most seeds, its embeddings of different networks starting almost equal); StatNN as NFN's StatNet, its statistics standardised on the
# training split), under two stated rules that make a budget count optimiser steps: a reference batch that
# would leave a run's ceiling fewer optimiser steps than the shared batch's is halved until it does not
# (its learning rate by the square-root rule), and a warm-up longer than 5 % of the run's planned steps is
# cut to 5 % (the recipe column and the "as the authors run it" table name both); the other models get a
# learning rate chosen from a small grid on the validation split; and the learnability gate —
# a model whose training loss never left its plateau is reported, and any claim that uses it reads
# "inconclusive (did not train)". The table lists the learning rate used, the epochs spent and the gate
# per model.

# %% tags=[]
splits = cmp.make_splits(len(zoo), cfg.val_fraction, cfg.test_fraction, seed=cfg.split_seed)
print("split sizes:", splits.sizes())

# %% [markdown] tags=[]
# ### GTH-GMN's configuration, chosen on validation
#
# Before the comparison, GTH-GMN's training protocol, size and learning rate are chosen on the first seed's
# validation split from a declared grid (`hgutils.experiments.gth_selection`). On this task the grid holds
# the two protocols that train the same InfoNCE objective as the baselines (the network and one augmented
# view of it) through the encoder, the reconstruction terms as auxiliary losses: `finetune` (reconstruction
# pretraining first) and `joint`; sizes `default` (today's) and `large` (dim 32, 2 attention layers, 4 heads
# x 8, GRU 32); at `medium` only `default` (`large` lost each of the three earlier grids, validation probe MSE
# 4.95–5.74 against 2.77–4.23 for `default`, and its cells were about 10 of the notebook's minutes; `paper`
# keeps both). The paper's literal reading -- a frozen reconstruction embedding, never trained on InfoNCE,
# and a linear probe -- is not a cell but its own row, "GTH-GMN (two-stage, frozen)", at the chosen size and
# learning rate (`ex.SINE_GTH_PROTOCOLS`).
# The table lists every cell's validation score, steps, whether it hit its budget and its CPU seconds; the
# chosen configuration trains every seed and is the base of every GTH-GMN ablation. The test labels never
# enter the choice.
# A cell that did not pass the learnability gate is never chosen over one that did (its validation score is
# noise around chance); when no cell did, the declared first cell (`finetune`, `default`, the first learning
# rate) is kept, and the line under the table says so.

# %% tags=[]
selection, run = gsel.select_and_compare(
    cfg, zoo, "infonce", target, cfg.emb_dim, splits, seeds, device, "sine", out_res
)
display(Markdown(selection.caption), table(selection.table, index=False), Markdown(selection.summary()))
display(Markdown(f"inputs: {run.inputs}"), cmp.protocol_table(run))

# %% [markdown] tags=[]
# ## 3. Did every encoder train?
#
# Self-supervised loss per epoch (solid: InfoNCE for the baselines, the reconstruction loss for
# GTH-GMN's stage 1) and its validation value (dashed); a red title marks an encoder that failed the
# learnability gate in at least one seed.

# %% tags=[]
trained = {n: run.gate(n)["trained"] for n in cfg.variants}
curves = {n: cv for n, cv in run.curves.items() if not n.endswith("(stage 1)")}  # GTH-GMN: its stage 1

fig = plot_training_curves(curves, "train_loss", "val_loss", trained, title="self-supervised training curves")
save_figure(fig, out_fig, "02_curves")
plt.show()

# %% [markdown] tags=[]
# ## 4. Results: linear-probe test MSE on (a, b), mean ± std over seeds
#
# Beside every encoder: the width its probe read (`probe_dim`, the same for every row), the floor
# (predicting the training mean) and the epochs each run used. Where a frozen embedding's sizing rule
# gives a wider probe, its MSE is shown beside, labelled with its width; no claim reads it. Below them, the
# supervised trees on weight statistics — not a probe of a frozen embedding, but a measure of how much of
# (a, b) the weights carry under the same split.

# %% tags=[]
summary = cmp.summarize(run.table, ["test_mse", "test_mean_mse"])
run.table.to_csv(out_res / "results.csv", index=False)
used = cmp.run_lengths(run.table)
display(table(ex.probe_table(run, summary).merge(used, left_on="model", right_index=True), index=False))
refs = in_zoo_references(zoo, "regression", target, splits, seeds)
refs.table.to_csv(out_res / "references.csv", index=False)
display(table(cmp.summarize(refs.table, ["test_mse"])[["model", "n_seeds", "test_mse"]], index=False))
fig = plot_results_bars(
    summary, "test_mse", title="sine regression: linear-probe test MSE (lower is better)", higher_is_better=False
)
save_figure(fig, out_fig, "02_mse")
plt.show()

# %% [markdown] tags=[]
# **The baselines as their authors run them.** Each encoder with a reference training script (DWSNet:
# DWSNets' self-supervised trainer; GMN: Neural Graphs' INR recipe, which has no self-supervised run;
# StatNN: NFN's StatNet), its recipe beside how this run trained it, and every setting that still
# differs, with what this run measured about it (whether an epoch cap bound, how far a warm-up gets in
# the steps a run took); "not measured at this scale" where nothing here measured it.

# %% tags=[]
authors = as_the_authors_run_it(run, cfg, "infonce")
display(table(authors, index=False))
print(f"{len(deviations(authors))} settings still differ from the references")

# %% [markdown] tags=[]
# ## 5. The paper's table beside ours
#
# The paper's DWSNets and GMN rows are the numbers those papers reported on the DWSNets sine set (final
# INRs, no trajectories); its GTH-GMN row is on its own trajectory zoo. Our column is every model on
# our zoo, same split and budget.

# %% tags=[]
rows = cmp.paper_rows(ex.PAPER["sine_mse"], summary, "test_mse", sources=ex.PAPER_ROW_SOURCES)
display(table(paper_table(rows, what="model", ours="ours (same zoo)"), index=False))

# %% [markdown] tags=[]
# ## 6. What the embedding encodes
#
# GTH-GMN's reconstruction quality (validation INRs, after the stage-2 refinement) beside an
# uninformative decoder, then the first-seed GTH-GMN and DWSNet embeddings of the test networks on
# their first two principal components, coloured by amplitude a and by frequency b.

# %% tags=[]
display(cmp.recon_table(run))
for name in ["GTH-GMN", "DWSNet"]:
    y, emb = run.outputs[name]
    fig = ex.plot_sine_embedding(emb, y, title=f"{name}: test embeddings (PCA) vs (a, b)")
    save_figure(fig, out_fig, f"02_embedding_{name.replace('-', '').lower()}")
    plt.show()

# %% [markdown] tags=[]
# ## 7. Variance across seeds
#
# The paper reports GTH-GMN's standard deviation (0.24) as 3–4× the baselines' (0.06, 0.08) and suggests
# a more conservative Riemannian step. Here: each encoder's test-MSE standard deviation over our seeds,
# and whether the 10× smaller stage-2 step (same stage-1 encoder per seed as "GTH-GMN (two-stage, frozen)", the
# reading the step belongs to, refined with `refine_lr` / 10)
# narrows that spread by at least 20 %.

# %% tags=[]
var = summary.set_index("model")[["test_mse_mean", "test_mse_std"]].round(4)
display(var)

# %% [markdown] tags=[]
# ## 8. Claims
#
# Every comparison goes through one rule (`hgutils.verdicts`): a difference of mean test MSE *holds* when it is
# resolved in the paper's direction (more than 2 standard errors over seeds), is *contradicted* when resolved
# against it, and is *inconclusive* otherwise, with the smallest difference these seeds resolve. An ordering is
# judged pairwise along the order. A comparison of spreads uses the ratio of standard deviations with its
# F-based 95 % interval (a bootstrap over 3–5 seeds has too few resamples). Where the paper reports sizes, the
# power column says whether they would be resolved at these seeds, or how many seeds they need at the measured
# spread. Every claim records the learnability check of the encoders it judges. At `smoke` (64 INRs, a few
# steps) no comparison is meaningful; every claim is "not tested at this scale" with the measured values shown.

# %% tags=[]
claims = Claims("02_sine_regression", scale)
judge = scale != "smoke"
mse = ex.mse_by_seed(run)  # test MSE of every encoder, per seed: the claims' input
ex.claim_mse_order(claims, run, mse, judge)
ex.claim_gth_best_mean(claims, run, mse, judge)
ex.claim_gth_higher_variance(claims, run, mse, judge)
ex.claim_small_step_narrows(claims, run, mse, judge)
claims.show()
claims.save(out_res);
# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
