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
# # 00 — Template: the cell layout of every notebook
#
# <!-- hgutils:links -->
# **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/00_template.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# This notebook is the starting point for a new one. It follows the layout every numbered notebook
# uses (docs/contributing.md, *Notebook cell layout*), on a small check that is real and quick: the
# Poincaré-ball maps $\exp_0$ and $\log_0$ are inverse to each other (Ganea, Bécigneul & Hofmann 2018,
# *Hyperbolic Neural Networks*, arXiv:1805.09112, Lemma 2), and we measure how well float32 keeps
# that promise as the tangent vector grows.
#
# **To add notebook NN:** copy this file to `notebooks/NN_<name>.ipynb` and
# `hgutils/experiments/nb00_template.py` to `hgutils/experiments/nbNN_<name>.py` (a package
# `nbNN_<name>/` with `preset`, runs, `claims` and `figures` modules once it outgrows one file); put the
# preset, the paper's numbers with their source, the run functions, the rows of the paper-vs-ours table,
# one function per claim id and the figures in the driver and everything reusable in the library; add
# `tests/test_nbNN_<name>.py`. The runner (`python -m hgutils reproduce --only NN`), nbval and the claims
# table pick the notebook up by its `NN_` prefix.

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤ 3 min) | "medium" (make reproduce, ≤ 45 min, CPU) | "paper" (GPU, hours)
seed: int = 0  # base seed of every random draw
device: str = "cpu"  # "cpu" or "cuda" (this check runs on the CPU)
data_dir = None  # str or None: dataset folder (this notebook needs none)
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset, None = use the preset:
n_points = None  # int or None: random tangent vectors per norm
max_norm = None  # float or None: largest tangent norm sqrt(c)|v| tested

# %% [markdown] tags=[]
# ## Setup
#
# The preset of the chosen scale, with any override from the parameters cell; seeds; where results and
# figures go.

# %% tags=[]
from hgutils.experiments import nb00_template as ex
from hgutils.ledger import Claims, paper_table
from hgutils.plotting import save_figure
from hgutils.repro import output_dirs, seed_everything

cfg = ex.CONFIG.from_scale(scale, n_points=n_points, max_norm=max_norm)
seed_everything(seed)
out_res, out_fig = output_dirs("00_template", scale, results_dir, figures_dir)
print(cfg)

# %% [markdown] tags=[]
# ## The measurement
#
# For norms $\sqrt{c}\,\|v\|$ from 0 to `max_norm`, draw random directions, map them to the ball with
# $\exp_0$ and back with $\log_0$, and record the relative error. The driver function lives in the
# experiment module; the maps in `hgutils.manifolds.poincare`.

# %% tags=[]
errors = ex.roundtrip_errors(cfg, seed)
print(errors.to_string(index=False, formatters={"median": "{:.2e}".format, "max": "{:.2e}".format}))

# %% tags=[]
fig = ex.plot_errors(errors)
save_figure(fig, out_fig, "00_roundtrip_error");

# %% [markdown] tags=[]
# ## Paper vs ours
#
# The paper states an identity; we report the largest relative error measured in float32. The driver
# builds the rows (`ex.paper_rows`: what is compared, the paper's value and its source, ours);
# `hgutils.ledger.paper_table` lays them out.

# %% tags=[]
rows = ex.paper_rows(errors)  # what is compared, the paper's value and its source, ours
print(paper_table(rows, what="claim", ours="ours (max relative error, float32)").to_string(index=False))

# %% [markdown] tags=[]
# ## Claims
#
# Each claim is one function of the driver (`ex.claim_<id>`), called below on one line, in ledger
# order, with an explicit criterion computed from the numbers above. The error grows with the norm
# because $1 - \tanh(\sqrt{c}\,\|v\|)$ loses relative precision in float32 near the boundary, so the
# identity is judged where float32 can hold it ($\sqrt{c}\,\|v\| \le 4$) and the breaking point is reported.

# %% tags=[]
claims = Claims("00_template", scale)
ex.claim_roundtrip_float32(claims, errors)
ex.claim_roundtrip_breakdown(claims, errors)
claims.show()
claims.save(out_res);

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
