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
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] tags=[]
# # 04 · Intrinsic Lorentz neural networks: Lorentz ResNets on CIFAR and Lorentz CNNs on DNA
#
# <!-- hgutils:links -->
# **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/04_ilnn_cifar_genomics.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# **Paper.** *Intrinsic Lorentz Neural Network* (ILNN), ICLR 2026, arXiv:2602.23981 (summary in
# `shared/papers/ilnn_intrinsic-lorentz-nn.txt`; formulas and recipes in REFERENCE §2).
#
# **Claims reproduced.** Keeping every operation on the hyperboloid — point-to-hyperplane FC (PLFC),
# gyro-Lorentz batch norm (GyroLBN) with a closed-form centroid, log-radius concatenation for convolutions,
# gyro biases — (i) matches or beats an HCNN-style Lorentz ResNet and a Euclidean ResNet on CIFAR-10
# (ResNet-18: 95.36 / 95.14 / 95.14 %), (ii) beats a Euclidean CNN by a wide margin on hierarchical genomic
# data (TEB pseudogenes: +9.6 and +13.0 MCC), (iii) GyroLBN is faster than iterative GyroBN and than LBN, and
# (iv) every component reduces to its Euclidean counterpart as the curvature goes to 0.
#
# **What this notebook does.** It trains the three flavours of one ResNet trunk (`hgutils.nn.resnets`:
# Euclidean / HCNN-Lorentz / ILNN) with the same data order, recipe and seed; trains Euclidean, HCNN and ILNN
# genomic CNNs (`hgutils.nn.genomics`) on a synthetic motif-family → gene → variant task and, at medium scale,
# on the TEB tasks available here; times GyroLBN against a Karcher-mean GyroBN and HCNN's LBN; and records the
# claims with explicit criteria. The smoke preset only exercises every code path (1 epoch on a 1k-image subset):
# accuracy claims are *not tested at this scale*. Sizes per scale are in `hgutils.ilnn_experiment.ILNNConfig`.

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤3 min) | "medium" (make reproduce, ≤45 min, CPU) | "paper" (GPU, hours)
seed: int = 0  # base seed
device: str = "cpu"  # "cpu" or "cuda"
data_dir = None  # str or None: dataset folder (CIFAR zip/pickles, TEB/GUE CSVs); None means $HGUTILS_DATA, then packaged copies
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset, None = use the preset:
cifar_datasets = None  # list of str or None: "cifar10" and/or "cifar100" (paper preset: both)
cifar_train = None  # int or None: CIFAR training images (0 means full set)
cifar_epochs = None  # int or None: ResNet training epochs
genomics_tasks = None  # list of str or None: "synthetic", "teb/<task>", "gue/<task>"
genomics_epochs = None  # int or None: genomic-CNN training epochs
n_seeds = None  # int or None: seeds per configuration

# %% tags=[]
import logging
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from hgutils.experiments.nb04_ilnn_cifar_genomics import (
    PAPER_CIFAR,
    PAPER_GENOMICS_MCC,
    ILNNConfig,
    bn_comparison,
    bn_timing,
    design_rule_checks,
    genomics_task,
    load_cifar,
    plot_curves,
    plot_epoch_times,
    run_cifar,
    run_genomics,
    summary,
)
from hgutils.plotting import save_figure, use_style
from hgutils.repro import Claims, output_dirs, seed_everything

warnings.filterwarnings("ignore")
logging.getLogger().setLevel(logging.WARNING)
torch.set_num_threads(max(1, torch.get_num_threads()))

cfg = ILNNConfig.from_scale(
    scale,
    cifar_datasets=tuple(cifar_datasets) if cifar_datasets else None,
    cifar_train=cifar_train,
    cifar_epochs=cifar_epochs,
    genomics_tasks=tuple(genomics_tasks) if genomics_tasks else None,
    genomics_epochs=genomics_epochs,
    n_seeds=n_seeds,
)
seed_everything(seed)
out_res, out_fig = output_dirs("04_ilnn_cifar_genomics", scale, results_dir, figures_dir)
use_style()
seeds = [seed + i for i in range(cfg.n_seeds)]
print(cfg)

# %% [markdown] tags=[]
# ## 1 · The design rule: flat limits and GyroLBN statistics
#
# ILNN's components are built so that as the curvature $-c \to 0$ they become their Euclidean versions.
# For PLFC with normals $z$, offsets $a$ and gyro-bias $b$ the exact limit is $y_s \to z\,x_s - a\|z\| + b$
# (an affine map; the reference code clamps logits to $|v| \le 10$, beyond which PLFC saturates). GyroLBN
# centres the batch at its closed-form Lorentzian centroid by gyro-translation (an isometry), rescales
# distances to the centre by one factor so the mean distance equals the target $s$, and moves the result to
# the bias point. The centroid of the rescaled batch lands on the bias point only approximately (gyro-scaling
# is not an isometry). The unit tests check these limits and statistics; here are the numbers.

# %% tags=[]
rules = design_rule_checks(seed)
pd.Series(rules, name="value").to_frame()

# %% [markdown] tags=[]
# ## 2 · CIFAR: three ResNet flavours on one trunk
#
# Euclidean (`Conv2d`/`BatchNorm2d`/`Linear`), HCNN-Lorentz (`LorentzConv2dHCNN` = direct concatenation +
# linear map over the full vector, tangent-space `LorentzBN`, Lorentz MLR head) and ILNN (`LorentzConv2d` =
# log-radius concatenation + PLFC, `GyroLBN`, Lorentz MLR head) share `hgutils.nn.resnets.ResNet`. Recipe:
# RiemannianSGD (lr 0.1, momentum 0.9, Nesterov, wd 5e-4), milestones at 30/60/80 % of training (γ 0.2),
# random crop (pad 4) + horizontal flip. If no CIFAR copy is found (e.g. on Binder) a clearly labelled
# stand-in is used: scikit-learn digits upsampled to 32×32 RGB.
#
# The `cifar_datasets` parameter selects CIFAR-10 and/or CIFAR-100 (both at `paper` scale, where the paper
# reports 95.14 / 95.14 / 95.36 % and 77.72 / 78.07 / 78.41 %); this folder's CIFAR-10 copy is a JPEG
# re-encoding of the official images, so numbers on it are close to, not identical with, numbers on the pickles.
#
# Caveat observed while sizing the presets: with budgets of a few epochs the two Lorentz trunks learn CIFAR
# much more slowly than the Euclidean one, although every flavour fits a tiny batch (unit tests). The paper
# compares the flavours after 200 epochs; short CPU runs say little about that comparison. A component swap
# (`benchmarks/ilnn_component_swap.py --train 2000 --test 500 --epochs 4`, run once on the JPEG CIFAR-10 copy,
# not re-run by this notebook: ResNet-8 widths 8/16/32, the recipe above without augmentation, seed 0;
# training loss after 4 epochs, chance = 2.30) locates most of the ILNN–HCNN gap in
# the convolution, not the batch norm, the head or the optimiser:
#
# | trunk | train loss | test acc (%) |
# |---|---|---|
# | Euclidean | 1.80 | 31.4 |
# | HCNN conv + LBN (HCNN) | 2.11 | 22.6 |
# | HCNN conv + GyroLBN | 2.13 | 21.6 |
# | ILNN conv + GyroLBN (ILNN) | 2.24 | 15.4 |
# | ILNN conv + LBN | 2.26 | 15.6 |
# | ILNN, GyroLBN target scale 2.0 instead of 1.5 | 2.23 | 16.2 |
# | ILNN, Euclidean linear head on log₀ features | 2.25 | 19.2 |
# | ILNN, RiemannianAdam (lr 3·10⁻³) instead of RiemannianSGD | 2.23 | 17.8 |
# | ILNN conv *multiplying* the concatenation by the log-radius scale s (reference code's direction) | 2.09 | 18.4 |
# | ILNN conv without the log-radius scale (s = 1) | 2.13 | 21.6 |
#
# Our `log_radius_concat` divides by s because that keeps the expected log radius of concatenated Gaussian
# patches (unit-tested); the reference code is reported to multiply (REFERENCE §2, unconfirmed). Multiplying
# trains fastest of all Lorentz variants here, so the direction of s — not GyroLBN — is the first thing to
# revisit; this notebook still uses the division.
#

# %% tags=[]
FLAVOURS = ("euclidean", "hcnn", "ilnn")
cifar_data, cifar_runs, cifar_acc, cifar_time = {}, {}, {}, {}
for name in cfg.cifar_datasets:
    cifar_data[name] = data = load_cifar(cfg, data_dir, seed, dataset=name)
    print(f"{name} data: {data.source}\n   protocol: {data.protocol}")
    cifar_runs[name] = runs = {s: run_cifar(cfg, data, s, device) for s in seeds}
    cifar_acc[name] = {fl: float(np.mean([summary(r)[fl] for r in runs.values()])) for fl in FLAVOURS}
    cifar_time[name] = {fl: float(np.mean([np.mean(r[fl].epoch_time) for r in runs.values()])) for fl in FLAVOURS}
pd.concat(
    {
        name: pd.DataFrame(
            {
                "test acc (%)": {k: 100 * v for k, v in cifar_acc[name].items()},
                "s / epoch": cifar_time[name],
                "cost vs Euclidean": {k: v / cifar_time[name]["euclidean"] for k, v in cifar_time[name].items()},
            }
        )
        for name in cfg.cifar_datasets
    }
).round(2)

# %% tags=[]
for name in cfg.cifar_datasets:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    plot_curves(axes[0], cifar_runs[name][seeds[0]], "test_acc", f"{name} test accuracy (seed {seeds[0]})")
    plot_epoch_times(axes[1], cifar_time[name], f"{name}: ResNet training time per epoch")
    fig.tight_layout()
    save_figure(fig, out_fig, "04_cifar_accuracy_and_time" if name == "cifar10" else f"04_{name}_accuracy_and_time")
    plt.show()

# %% [markdown] tags=[]
# ## 3 · Genomics: Euclidean vs Lorentz CNNs on hierarchical sequences
#
# Model: one-hot ACGTN, 3 conv blocks (32 channels, kernel 9, batch norm, ReLU, 2× pooling), global pooling,
# an FC layer and the head; RiemannianAdam with the paper's weight decay (5e-3) and milestones scaled to the
# epoch budget. Metric: Matthews correlation (MCC, %).
#
# * **synthetic** (every scale): `hgutils.data.hierarchical_sequences` — 4 motif families → genes → variants,
#   label = family; a controlled check of "hyperbolic helps when data is hierarchical".
# * **GUE** (medium/paper, when a copy of the DNABERT-2 GUE release is given via `data_dir`): the two tasks the
#   paper reports, Covid variant classification and core-promoter (TATA) detection, train → test; skipped with a
#   note otherwise (no copy ships with this repository).
# * **TEB** (medium/paper, when the CSVs are found): CMC-EnSpm has train/valid/test; the two pseudogene tasks
#   ship only *valid* and *test* files in this copy, so they use a **reduced protocol: train on the valid split
#   (1,046 / 766 sequences), evaluate on the test split** — far less data than the paper's 17,956 / 12,938
#   training sequences, so absolute MCCs are not comparable with the paper's.

# %% tags=[]
geno, geno_prot = {}, {}
for task in cfg.genomics_tasks:
    try:
        data = genomics_task(cfg, task, data_dir, seed)
    except FileNotFoundError as err:
        print(f"{task}: skipped ({type(err).__name__}: no copy found)")
        continue
    print(data.protocol)
    geno_prot[task] = data.protocol
    geno[task] = {s: run_genomics(cfg, data, s, device) for s in seeds}
    if task == "synthetic":
        synth = data
geno_mcc = {
    t: {
        fl: 100 * float(np.mean([summary(r, "test_mcc")[fl] for r in runs.values()]))
        for fl in ("euclidean", "hcnn", "ilnn")
    }
    for t, runs in geno.items()
}
pd.DataFrame(geno_mcc).T.round(2).rename_axis("test MCC (%)")

# %% tags=[]
fig, axes = plt.subplots(1, len(geno), figsize=(4.2 * len(geno), 3.4), squeeze=False)
for ax, (task, runs) in zip(axes[0], geno.items()):
    plot_curves(ax, {k: h for k, h in runs[seeds[0]].items()}, "test_mcc", task)
fig.tight_layout()
save_figure(fig, out_fig, "04_genomics_mcc")
plt.show()

# %% [markdown] tags=[]
# ## 4 · Batch norms: GyroLBN vs GyroBN (iterative Fréchet mean) vs LBN
#
# Speed: forward+backward on one batch of Lorentz points (medians of interleaved repetitions). Accuracy: the
# ILNN genomic CNN on the synthetic task with each batch norm swapped in (same seed and budget).

# %% tags=[]
bn_t = bn_timing(cfg, seed)
bn_runs = bn_comparison(cfg, synth, seed, device)
pd.DataFrame(
    {
        "fwd+bwd (ms)": {k: 1e3 * v for k, v in bn_t.items()},
        "vs GyroLBN": {k: v / bn_t["GyroLBN"] for k, v in bn_t.items()},
        "synthetic MCC (%)": {
            "GyroLBN": 100 * bn_runs["gyrolbn"].test_mcc[-1],
            "GyroBN": 100 * bn_runs["gyrobn"].test_mcc[-1],
            "LBN": 100 * bn_runs["lbn"].test_mcc[-1],
        },
        "s / epoch": {
            "GyroLBN": np.mean(bn_runs["gyrolbn"].epoch_time),
            "GyroBN": np.mean(bn_runs["gyrobn"].epoch_time),
            "LBN": np.mean(bn_runs["lbn"].epoch_time),
        },
    }
).round(3)

# %% [markdown] tags=[]
# ## 5 · Paper vs ours

# %% tags=[]
LABEL = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100"}
rows = []
for name, acc in cifar_acc.items():
    for fl, fl_name in (("euclidean", "Euclidean"), ("hcnn", "HCNN-Lorentz"), ("ilnn", "ILNN")):
        rows.append(
            (
                f"{LABEL[name]} acc, {fl_name}",
                PAPER_CIFAR[name][fl],
                100 * acc[fl],
                "ILNN Table (ResNet-18, 200 epochs)",
                cifar_data[name].protocol,
            )
        )
for task, (p_euc, p_ilnn) in PAPER_GENOMICS_MCC.items():
    ours = geno_mcc.get(task, {})
    protocol = geno_prot.get(task, "not run: no copy found")
    src_row = "ILNN TEB table (full train split)" if task.startswith("teb/") else "ILNN GUE table"
    rows.append((f"{task} MCC, Euclidean", p_euc, ours.get("euclidean"), src_row, protocol))
    rows.append((f"{task} MCC, ILNN", p_ilnn, ours.get("ilnn"), src_row, protocol))
for fl, fl_name in (("euclidean", "Euclidean"), ("ilnn", "ILNN")):
    rows.append((f"synthetic hierarchy MCC, {fl_name}", None, geno_mcc["synthetic"][fl], "—", "§3 synthetic"))
table = pd.DataFrame(rows, columns=["quantity", "paper", "ours", "paper source", "ours: protocol"])
table.round(2)

# %% [markdown] tags=[]
# ## 6 · Claims
#
# Verdicts come from the criteria printed with each claim. At smoke scale (1 epoch on 1k images, tiny
# widths, a small synthetic task) accuracy comparisons and wall-clock orderings are not robust, so those claims
# are *not tested at this scale*; the design-rule claims are deterministic and tested at every scale.

# %% tags=[]
claims = Claims("04_ilnn_cifar_genomics", scale)
judge = scale != "smoke"
src = "ILNN (arXiv 2602.23981), ICLR 2026"
claims.add(
    "plfc_flat_limit",
    "PLFC reduces to the Euclidean affine map z x - a|z| + b as c -> 0",
    paper="design rule",
    ours=rules["plfc_flat_error"],
    criterion="max |PLFC - affine| at c=1e-6 < 1e-4",
    holds=rules["plfc_flat_error"] < 1e-4,
    source=src,
)
claims.add(
    "gyrolbn_statistics",
    "GyroLBN output has the target dispersion about its bias point, centroid near it",
    paper="design rule",
    ours={"dispersion error": rules["gyrolbn_dispersion_error"], "centroid dist": rules["gyrolbn_centroid_dist"]},
    criterion="|mean dist - s| < 1e-5 and centroid-to-bias distance < 0.05",
    holds=rules["gyrolbn_dispersion_error"] < 1e-5 and rules["gyrolbn_centroid_dist"] < 0.05,
    source=src,
)
for name, acc in cifar_acc.items():
    ilnn, hcnn, euc = (100 * acc[k] for k in ("ilnn", "hcnn", "euclidean"))
    standin = "STAND-IN" in cifar_data[name].source
    claims.add(
        "cifar_order" if name == "cifar10" else f"{name}_order",
        f"{LABEL[name]}: ILNN >= HCNN-Lorentz >= Euclidean ResNet",
        paper=[PAPER_CIFAR[name][k] for k in ("ilnn", "hcnn", "euclidean")],
        ours=[ilnn, hcnn, euc],
        criterion=f"acc_ILNN >= acc_HCNN >= acc_Euclid (final epoch, mean of {len(seeds)} seed(s))"
        + ("; digits stand-in, not judged" if standin else ""),
        holds=(ilnn >= hcnn >= euc) if judge and not standin else None,
        source=src,
    )
for task, (p_euc, p_ilnn) in PAPER_GENOMICS_MCC.items():
    gain = round(p_ilnn - p_euc, 2)
    key = f"genomics_{task.split('/')[1]}"
    if task in geno_mcc:
        d = geno_mcc[task]["ilnn"] - geno_mcc[task]["euclidean"]
        claims.add(
            key,
            f"{task}: ILNN MCC well above Euclidean",
            paper=f"+{gain}",
            ours=d,
            criterion=f"MCC_ILNN - MCC_Euclid > 0 ({geno_prot[task]})",
            holds=(d > 0) if judge else None,
            source=src,
        )
    elif task in cfg.genomics_tasks or task.startswith("teb/"):
        claims.add(
            key,
            f"{task}: ILNN MCC well above Euclidean",
            paper=f"+{gain}",
            ours=None,
            criterion=f"MCC_ILNN - MCC_Euclid > 0 (needs the {task.split('/')[0].upper()} CSVs)",
            holds=None,
            source=src,
        )
d_syn = geno_mcc["synthetic"]["ilnn"] - geno_mcc["synthetic"]["euclidean"]
claims.add(
    "genomics_synthetic_hierarchy",
    "hierarchical synthetic DNA: ILNN MCC >= Euclidean",
    paper="(motivation)",
    ours=d_syn,
    criterion="MCC_ILNN - MCC_Euclid >= 0",
    holds=(d_syn >= 0) if judge else None,
    source=src,
)
claims.add(
    "gyrolbn_speed",
    "GyroLBN is faster than GyroBN (iterative mean) and LBN",
    paper="faster than both",
    ours={k: v / bn_t["GyroLBN"] for k, v in bn_t.items()},
    criterion="t_GyroLBN < t_GyroBN and t_GyroLBN < t_LBN (fwd+bwd medians)",
    holds=(bn_t["GyroLBN"] < bn_t["GyroBN"] and bn_t["GyroLBN"] < bn_t["LBN"]) if judge else None,
    source=src,
)
claims.show()
claims.save(out_res)

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
