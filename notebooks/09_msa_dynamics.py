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
# # 09 · Metric similarity analysis on recurrent dynamics: RNNs vs state-space models
#
# <!-- hgutils:links -->
# **Medium-scale run:** [09_msa_dynamics.ipynb](../results/medium/09_msa_dynamics.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/09_msa_dynamics.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** N. A. Cayco-Gajic & A. Pellegrino, *Geometry-aware similarity metrics for neural
# representations on Riemannian and statistical manifolds*, arXiv **2603.28764** (2026), §5 and Fig. 7.
# The paper released no code for this experiment; notebook 05 reproduces its first experiment.
#
# **Method.** For a dynamical system the input manifold is extended by a time coordinate: the hidden
# state $h(\theta, t)$ is a map of the input-time manifold, and its pullback metric
# $G = J^\top J$, $J = [\partial_\theta h \mid \partial_t h]$, carries both the geometric deformation of
# the inputs and their temporal evolution. Two networks are compared point by point with the spectral
# ratio $d_{SR}(G_1, G_2) = 1 - \sqrt{\lambda_{min}/\lambda_{max}}$ of $G_1 v = \lambda G_2 v$, averaged over
# the manifold (MSA).
#
# **Claims tested** (§5, Fig. 7 — a figure without numbers, so every paper value below is qualitative):
# 1. RNNs and structured state-space models (SSMs) can both be trained to solve a sequential
#    angle-memory task (Fig. 7a–b);
# 2. with time as a coordinate of the manifold, MSA clusters the architectures and clearly separates
#    trained from untrained models (Fig. 7c–d);
# 3. RSA, which sees only extrinsic geometry, cannot separate the training stages, and DSA, which
#    compares only dynamics, rates all models almost alike (Fig. 7e);
# 4. over the memory period an RNN's intrinsic geometry stays very stable while an SSM's changes
#    markedly (Fig. 7f).
#
# The experiment lives in `hgutils.experiments.nb09_msa_dynamics`; the task, the models and their
# training in `hgutils.dynamics`, the input-time metrics in `hgutils.similarity.input_time`, DSA (through
# its authors' package, `dsa-metric`) in `hgutils.similarity.dynamical`. Every number below is computed
# in this run.

# %% tags=["parameters"]
scale: str = "smoke"  # smoke (CI, under 3 min) | medium (make reproduce, about 22 min on 2 CPU cores) | paper (GPU)
seed: int = 0  # base seed of the angles, the initialisations and the input noise
device: str = "cpu"  # cpu or cuda (64-unit recurrent networks: this notebook runs on the CPU)
data_dir = None  # str or None: unused, the task is generated
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# learnability, fixed before any result is seen:
max_error_deg: float = 10.0  # every trained network's held-out mean circular report error must be below this
# optional per-field overrides of the preset, None means use the preset:
n_seeds = None  # int or None: trained networks per architecture (as many untrained ones)
hidden = None  # int or None: RNN units, SSM layer width and modes
delay_steps = None  # int or None: steps of the input-free memory period
max_epochs = None  # int or None: epoch cap of the training (early stopping on the validation trials)
grid = None  # int or None: held-out angles per item (grid^2 points: MSA's reference measure)
dsa_iters = None  # int or None: DSA's Procrustes optimisation steps
robustness = None  # list or None: robustness runs (ex.ROBUSTNESS) beside the protocol

# %% tags=[]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from hgutils.experiments import nb09_msa_dynamics as ex
from hgutils.ledger import Claims, paper_table
from hgutils.notebook_tools.tables import table
from hgutils.plotting import save_figure, use_style
from hgutils.repro import cached, output_dirs, seed_everything

cfg = ex.CONFIG.from_scale(
    scale,
    max_error_deg=max_error_deg,
    n_seeds=n_seeds,
    hidden=hidden,
    delay_steps=delay_steps,
    max_epochs=max_epochs,
    grid=grid,
    dsa_iters=dsa_iters,
    robustness=None if robustness is None else tuple(robustness),
)
seed_everything(seed)
out_res, out_fig = output_dirs("09_msa_dynamics", scale, results_dir, figures_dir)
use_style()
pd.set_option("display.max_colwidth", None)
for k, v in cfg.to_dict().items():
    print(f"{k:>16}: {v:.6g}" if isinstance(v, float) else f"{k:>16}: {v}")

# %% [markdown] tags=[]
# ## 1 · The task, the networks and their training
#
# **Task** (`hgutils.dynamics.AngleMemoryTask`; the paper's summary names a "sequential angle-memory
# task" and nothing more, so the timing is our declared choice). Two angles $\theta_1, \theta_2$ are
# shown one after the other, each for `stim_steps` steps as $(\cos\theta_k, \sin\theta_k)$ on its own
# pair of input channels, `gap_steps` apart; then a `delay_steps` delay with no input; then a
# `report_steps` report, signalled by a go cue, in which the four outputs must give
# $(\cos\theta_1, \sin\theta_1, \cos\theta_2, \sin\theta_2)$ (squared error on the report only). This is the
# delayed-report layout of the working-memory literature — a sequence of locations on a ring, as in the
# sequence working-memory task of Xie et al. (2022) — with fixed durations, so that the hidden state is a
# function $h(\theta_1, \theta_2, t)$. Two angles rather than one because the per-time reading of Fig. 7f
# compares the coded geometry between time steps, and a one-dimensional manifold's metric is a
# $1\times1$ scale that the spectral ratio cannot tell from any other.
#
# **Networks** (`hgutils.dynamics.models`). A vanilla RNN, $h_t = \tanh(W h_{t-1} + U u_t + b)$ with
# `hidden` units and $W \sim \mathcal N(0, g^2/H)$, $g$ = `rnn_gain`; and one LRU layer (Orvieto et al.
# 2023), the S4D-style diagonal complex recurrence $x_t = \lambda \odot x_{t-1} + \gamma \odot B u_t$ with
# `hidden` modes in LRU's ring initialisation ($|\lambda| \in$ [`ssm_r_min`, `ssm_r_max`], phases in
# [0, `ssm_max_phase`]), read out nonlinearly, $z_t = \mathrm{GELU}(\mathrm{Re}(C x_t) + D u_t + b)$, width
# `hidden`. Both read the four outputs linearly from their representation ($h_t$, $z_t$), which is what
# every measure compares. `n_seeds` networks of each architecture train at once (a stacked parameter
# axis), with Adam (`lr`), input noise (`input_noise`), per-network gradient clipping, minibatches of
# `batch_size` of `n_train` random angle pairs, through the library's one training loop with early
# stopping on `n_val` validation trials (`patience`, at most `max_epochs`). Their initialisations are the
# **untrained** controls (the same networks before training).
#
# **Learnability, fixed before any result** (`hgutils.dynamics.learnability`): a network *trained* when
# its report loss on a fixed probe set fell by at least 5 % and its mean circular error on the held-out
# angle grid (`grid` angles per item, offset by half a grid step: never a training angle) is below
# `max_error_deg` (chance: 90°). A claim that judges an architecture with a network that did not train
# reads "inconclusive (did not train)".

# %% tags=[]
key = {"cfg": cfg, "seed": seed, "offset": 0, "version": ex.EXPERIMENT_VERSION}
exp = cached("09_msa_dynamics", key, lambda: ex.run_experiment(cfg, seed))
meta, stacks = exp["meta"], exp["stacks"]
rows = []
for arch, st in stacks.items():
    rows.append(
        {
            "architecture": ex.ARCH_NAMES[arch],
            "epochs": len(st.log.history),
            "stopped": st.log.describe(),
            "val. loss (best, mean)": float(st.val_loss[st.log.best_epoch].mean()),
            "held-out error ° (mean)": float(st.heldout_error.mean()),
            "held-out error ° (max)": float(st.heldout_error.max()),
            "passed": f"{sum(g.trained for g in st.gates)}/{len(st.gates)}",
        }
    )
display(table(pd.DataFrame(rows), floats="{:.4g}", index=False))
for arch, g in exp["gates"].items():
    print(f"learnability {ex.ARCH_NAMES[arch]}: {'trained' if g['trained'] else 'DID NOT TRAIN'} ({g['reason']})")

# %% tags=[]
fig = ex.plot_training_curves(stacks)
save_figure(fig, out_fig, "09_training_curves")
plt.show()
example = exp["splits"]["grid"][len(exp["splits"]["grid"]) // 3]
outs = {a: ex.example_outputs(st, cfg.task, example[None])[0] for a, st in stacks.items()}
fig = ex.plot_task(cfg.task, example, outs)
save_figure(fig, out_fig, "09_task")
plt.show()

# %% [markdown] tags=[]
# **What training moved.** The relative change $\|p_1 - p_0\|_F / \|p_0\|_F$ of each parameter tensor from
# its initialisation (median over the seeds; tensors that start at zero, the biases, left out). The SSM's
# eigenvalues are log-parametrised, $|\lambda| = e^{-e^{\nu}}$ and $\arg\lambda = e^{\phi}$: a small change of
# $\nu$ and $\phi$ means its modes keep the decay rates and rotation speeds they were initialised with. The
# readout sits downstream of the representation every measure compares, so changes there are invisible to
# all of them.

# %% tags=[]
display(table(ex.weight_change(stacks), floats="{:.3f}", index=False))

# %% [markdown] tags=[]
# ## 2 · MSA on the input-time manifold, against RSA, CKA and DSA
#
# Every network — trained and untrained, both architectures — is compared on the **delay** (no input,
# the memory held), the window the paper's claims are about.
#
# - **MSA**: the manifold is the torus of held-out angles × the delay steps. Time is discrete, so the
#   trajectory is made a function of continuous $t$ by its piecewise-linear interpolant, whose Jacobian at
#   the midpoint of step $k \to k+1$ is $J = [\tfrac12(\partial_\theta h_k + \partial_\theta h_{k+1}) \mid
#   h_{k+1} - h_k]$ ($\partial_\theta h$ by forward-mode automatic differentiation,
#   `hgutils.similarity.input_time`); the spectral ratio is invariant to the time unit (a change of chart),
#   and the reference measure is uniform over the grid × midpoints. Similarity $1 - d_{MSA}$.
# - **RSA** (Euclidean RDMs, Pearson) and linear **CKA** on the hidden states at the same grid points,
#   every `time_stride`-th delay step.
# - **DSA** from its authors' package (`dsa-metric`, Ostrow et al. 2023): each network's delay
#   trajectories on `dsa_trials` held-out angle pairs are delay-embedded (`dsa_delays` delays), a rank
#   `dsa_rank` HAVOK operator is fitted, and two operators are compared by the angular Procrustes
#   analysis over vector fields, optimised for `dsa_iters` steps (the package's `DSA` default is 1500; the
#   class that does the optimisation defaults to 200). Similarity $1 - \text{angle}/\pi$.
#
# Separation is scored for each measure on two splits (`hgutils.similarity.scoring`): *architecture*
# (RNN vs SSM among trained networks) and *training* (trained vs untrained, pairs of one architecture), by
# the **AUC** (P(a between-group pair is more dissimilar than a within-group pair): 0.5 blind, 1
# separated) and the scale-free **ratio** of mean between- to mean within-group dissimilarity (1 = no
# separation). Standard errors are leave-one-seed-out jackknife. The table also splits the training
# stages within each architecture (*training (RNN)*, *training (SSM)*) and compares the architectures
# before training (*architecture (untrained)*).

# %% tags=[]
scores = ex.score_measures(exp["mats"], meta)
jack = ex.jackknife_scores(exp["mats"], meta)  # every score with one seed index left out
display(table(scores, floats="{:.3f}"))
fig = ex.plot_similarity_panels(exp["mats"], meta, scores)
save_figure(fig, out_fig, "09_similarity_matrices")
plt.show()

# %% [markdown] tags=[]
# **Each measure's ceiling.** The similarity of each architecture's first trained network with itself
# composed with a random rotation and a scaling by 2 of its hidden space: every measure here is invariant
# to both, so 1 is the answer. MSA, RSA and CKA reach it up to rounding; DSA reaches what its Procrustes
# optimisation finds in `dsa_iters` gradient steps (the authors' package starts it away from the identity),
# which is also the floor of its within-group dissimilarity.

# %% tags=[]
display(table(pd.DataFrame(ex.ceilings(exp, cfg, seed)).T.rename(index=ex.ARCH_NAMES), floats="{:.4f}"))

# %% [markdown] tags=[]
# The same matrices, each on its own colour range $[\min S, 1]$ (where a measure's similarities all lie
# near 1, this shows which blocks its small differences follow), and the separation scores with their
# jackknife standard errors.

# %% tags=[]
fig = ex.plot_similarity_panels(exp["mats"], meta, scores, own_scale=True)
save_figure(fig, out_fig, "09_similarity_matrices_own_scale")
plt.show()
fig = ex.plot_separation(scores, jack, "AUC")
save_figure(fig, out_fig, "09_separation_auc")
plt.show()
fig = ex.plot_separation(scores, jack, "ratio")
save_figure(fig, out_fig, "09_separation_ratio")
plt.show()

# %% [markdown] tags=[]
# ## 3 · The coded geometry over time (Fig. 7f)
#
# At each delay step $t_k$ the angle block of the metric, $G^\theta_k(\theta) = \partial_\theta h_k^\top
# \partial_\theta h_k$ ($2\times2$ on the torus of the two remembered angles), is the intrinsic geometry of
# the memory at that time. For each network, MSA between every two delay steps gives a time × time matrix
# $D_{kl}$ (0: the same geometry up to a scale, point by point); its mean over pairs of steps is the
# network's **drift**. An attractor that holds the memory in place keeps $D \approx 0$; a memory carried by
# rotating modes read through a fixed projection changes its geometry as the modes turn.

# %% tags=[]
drifts = ex.drift(exp["temporal"])
display(table(ex.drift_table(exp["temporal"], meta), floats="{:.4f}"))
fig = ex.plot_drift(exp["temporal"], meta, drifts)
save_figure(fig, out_fig, "09_geometry_over_time")
plt.show()

# %% [markdown] tags=[]
# ## 4 · Robustness: a second seed set and a second hidden size
#
# The whole experiment again (`ex.ROBUSTNESS`): with every seed shifted (new initialisations, angles and
# noise), and with `robust_hidden` units and modes instead of `hidden`. One row per run: training, every
# measure's architecture and training AUC, DSA's ratios and the mean drift of each architecture.

# %% tags=[]
def run_robustness(name):
    c, offset = ex.robustness_config(cfg, name)
    k = {"cfg": c, "seed": seed, "offset": offset, "version": ex.EXPERIMENT_VERSION}
    return cached("09_msa_dynamics", k, lambda: ex.run_experiment(c, seed, offset))


robust = {name: run_robustness(name) for name in cfg.robustness}
rows = [ex.separation_row("protocol", exp)] + [ex.separation_row(n, e) for n, e in robust.items()]
display(table(pd.DataFrame(rows), floats="{:.3f}", index=False))
for name, e in robust.items():
    for arch, g in e["gates"].items():
        if not g["trained"]:
            print(f"{name}: {ex.ARCH_NAMES[arch]} did not train ({g['reason']})")

# %% [markdown] tags=[]
# ## 5 · Paper vs ours
#
# The paper reports this experiment as a figure; its statements are quoted with their place in the
# paper, ours are the scores measured above.

# %% tags=[]
d_rnn = float(np.mean(ex.group_values(drifts, meta, "rnn trained")))
d_ssm = float(np.mean(ex.group_values(drifts, meta, "ssm trained")))
display(table(paper_table(ex.paper_rows(scores, d_rnn, d_ssm)), index=False))

# %% [markdown] tags=[]
# ### What may differ from the paper
#
# The paper's summary gives the task's name and the architectures' kinds, not the task's timing, the
# sizes, the SSM variant, the window of the analysis, the reference measure or DSA's settings. The choices
# here are declared in the preset and above: two angles in sequence with a fixed delay, 64-unit networks at
# the medium scale, one LRU layer with a GELU readout as the SSM, the delay as the analysis window, the
# uniform measure on a regular grid of held-out angles, the piecewise-linear time coordinate, and DSA with a
# 5-step embedding and rank 10. The SSM's representation is its layer's output $z_t$; its internal diagonal
# state $x_t$ rotates each mode in its own plane, an isometry, so the geometry of $x_t$ itself would change
# only through the decay of its modes — a change of geometry over time comes from the fixed readout $C$ of
# modes turning at different speeds, the non-normal rotational dynamics the paper points to.

# %% [markdown] tags=[]
# ### Reading the verdicts
#
# - **msa_separates_training** pools the two architectures, as the paper's statement does. The score
#   table's *training (RNN)* and *training (SSM)* columns show which architecture decides it, and the
#   weight-change table why an architecture can fail it: a network whose training leaves its recurrent
#   dynamics where they started (an SSM whose eigenvalues hardly move, its task solved by the input and
#   output projections) keeps the input-time geometry of its initialisation, and no measure of the
#   representation can then tell it from its untrained self.
# - **dsa_rates_alike** reads "almost alike" as a between/within dissimilarity ratio below 1.25. DSA's raw
#   similarities sit in a narrow band near its ceiling (the table of ceilings above: its Procrustes
#   optimisation does not reach 1 even for a rotated copy of one network), which is what the paper's
#   figure shows; the ratio asks whether the differences inside that band still follow the groups.
# - **msa_separates_best** compares scale-free ratios; a measure with high raw similarities everywhere can
#   still have the larger ratio.
# - **rnn_stable_ssm_changes** compares trained networks of the two architectures. The untrained rows of
#   the drift table are the reference: how much the coded geometry drifts before any training.
# - **robust_separation** repeats the four absolute separation criteria on each robustness run; the
#   robustness table shows which of them moved.

# %% [markdown] tags=[]
# ## 6 · Claims
#
# Criteria fixed before the results (`ex.CRITERIA`): a measure *separates* two groups when its AUC is at
# least 0.9, *cannot separate* them when it is below 0.75, and *rates the models almost alike* when its
# mean between-group dissimilarity is less than 1.25 times its mean within-group dissimilarity on both
# splits. The comparison of MSA with the baselines is judged with jackknife standard errors, the RNN–SSM
# drift with the standard error over seeds: *holds* beyond 2 se in the paper's direction, *contradicted*
# beyond 2 se against it, *inconclusive* in between. Each claim on trained networks carries both
# architectures' learnability checks.

# %% tags=[]
claims = Claims("09_msa_dynamics", scale)
ex.claim_both_architectures_learn(claims, exp, cfg)
ex.claim_msa_separates_architectures(claims, scores, exp)
ex.claim_msa_separates_training(claims, scores, exp)
ex.claim_rsa_blind_to_training(claims, scores, exp)
ex.claim_dsa_rates_alike(claims, scores, exp)
ex.claim_msa_separates_best(claims, scores, jack, cfg, exp)
ex.claim_rnn_stable_ssm_changes(claims, exp)
ex.claim_robust_separation(claims, robust)
claims.show()
claims.save(out_res);

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
