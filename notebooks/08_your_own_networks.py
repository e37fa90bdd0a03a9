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
# # 08 — Your own networks: GTH-GMN, MSA and PE lifts on checkpoints you trained
#
# <!-- hgutils:links -->
# **Medium-scale run:** [08_your_own_networks.ipynb](../results/medium/08_your_own_networks.ipynb) (executed, outputs kept; the numbers of the README's claims table) · **Run it yourself:** [open in JupyterLab on Binder](https://mybinder.org/v2/gh/hgutils/hgutils/HEAD?urlpath=lab/tree/notebooks/08_your_own_networks.ipynb) (smoke preset)
# <!-- /hgutils:links -->
#
# The other notebooks reproduce the papers on zoos the library builds. This one starts where a
# researcher starts: with their own training run. We train a few small MLPs with plain PyTorch on
# scikit-learn's 8×8 digits, keeping a checkpoint every few steps, exactly as one would without this
# library, and then
#
# 1. load the checkpoints into a zoo with `Zoo.from_checkpoints`;
# 2. train GTH-GMN's node embedding by reconstruction (GTH-GMN paper, ICLR 2026, OpenReview
#    Xq64xkQCak, stage 1) and draw each layer of a network it never saw in the Poincaré ball over
#    training;
# 3. compare two of the networks with MSA (arXiv 2603.28764), linear CKA and Procrustes;
# 4. define a positional encoding of our own and print which plane symmetries it lifts
#    (arXiv:2607.03108, Proposition 1).
#
# Swap the training cell for your own run: any list of `state_dict`s (or `nn.Sequential` MLPs) per
# network, all of the same shape and recorded at the same steps, works.

# %% tags=["parameters"]
scale: str = "smoke"  # "smoke" (CI, ≤ 3 min) | "medium" (make reproduce, CPU) | "paper" (GPU, hours)
seed: int = 0  # base seed: network k is trained from seed + k
device: str = "cpu"  # "cpu" or "cuda": where GTH-GMN trains (the MLPs train on the CPU)
data_dir = None  # str or None: unused (scikit-learn ships the digits)
results_dir = None  # str or None: None means <repo>/results
figures_dir = None  # str or None: None means <repo>/figures
# optional per-field overrides of the preset, None = use the preset:
n_networks = None  # int or None: MLPs to train
train_steps = None  # int or None: Adam steps per MLP
epochs = None  # int or None: GTH-GMN stage-1 epoch cap

# %% [markdown] tags=[]
# ## Setup

# %% tags=[]
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

from hgutils.experiments import nb08_your_own_networks as ex
from hgutils.ledger import Claims
from hgutils.loop import train
from hgutils.plotting import save_figure
from hgutils.repro import output_dirs, seed_everything
from hgutils.symmetry import DyadicAxisPE, FourierPE, candidate_elements, lift_table, reflection, rotation
from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.tasks import ReconstructionTask, TrainConfig
from hgutils.weightspace.zoo import Zoo

cfg = ex.CONFIG.from_scale(scale, n_networks=n_networks, train_steps=train_steps, epochs=epochs)
seed_everything(seed)
out_res, out_fig = output_dirs("08_your_own_networks", scale, results_dir, figures_dir)
print(cfg)

# %% [markdown] tags=[]
# ## 1 · Your training run
#
# Plain PyTorch, nothing from `hgutils`: `cfg.n_networks` MLPs 64 → 32 → 16 → 10 with ReLU, each
# from its own seed, Adam on mini-batches of digits, a `state_dict` copy every `cfg.every` steps
# (step 0 is the initialisation).

# %% tags=[]
X, y = load_digits(return_X_y=True)
X, y = torch.tensor(X / 16.0, dtype=torch.float32), torch.tensor(y)
order = torch.randperm(len(X), generator=torch.Generator().manual_seed(seed))
train_rows, test_rows = order[:1400], order[1400:]
sizes = (64, *cfg.hidden, 10)

trajectories, test_acc = [], []
for k in range(cfg.n_networks):
    torch.manual_seed(seed + k)
    layers = [m for a, b in zip(sizes, sizes[1:]) for m in (nn.Linear(a, b), nn.ReLU())][:-1]
    net = nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    checkpoints = []
    for step in range(cfg.train_steps + 1):
        if step % cfg.every == 0:
            checkpoints.append({name: w.detach().clone() for name, w in net.state_dict().items()})
        if step < cfg.train_steps:
            rows = train_rows[torch.randint(len(train_rows), (cfg.batch,))]
            loss = F.cross_entropy(net(X[rows]), y[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
    trajectories.append(checkpoints)
    with torch.no_grad():
        test_acc.append(float((net(X[test_rows]).argmax(1) == y[test_rows]).float().mean()))
steps = list(range(0, cfg.train_steps + 1, cfg.every))
acc = f"test accuracy {min(test_acc):.3f} to {max(test_acc):.3f}"
print(f"{len(trajectories)} networks x {len(steps)} checkpoints; {acc}")

# %% [markdown] tags=[]
# ## 2 · Into a zoo
#
# `Zoo.from_checkpoints` finds the linear layers in order (`0.weight`, `2.weight`, … here; any prefix
# such as `net.0.weight` or `fc1.weight` works) and stacks them: `params["W{l}"]` is
# `[networks, snapshots, out, in]`, `params["b{l}"]` `[networks, snapshots, out]`, `steps` the
# training step of each snapshot. A `state_dict` does not say which nonlinearity sits between the
# layers, so we name it (an `nn.Sequential` would tell). Anything that is not an MLP, or networks of
# different shapes, stop here with an error naming the first offending key.

# %% tags=[]
zoo = Zoo.from_checkpoints(trajectories, steps=steps, activation="relu", meta={"test_acc": test_acc})
print(zoo.spec)
print({k: tuple(v.shape) for k, v in zoo.params.items()}, "steps", zoo.steps.tolist())

# %% [markdown] tags=[]
# ## 3 · GTH-GMN by reconstruction
#
# GTH-GMN reads each network as a graph with one node per neuron (and one bias node per layer) and
# places the nodes in the Poincaré ball, snapshot after snapshot. Its first stage learns that
# embedding without labels, by reconstructing the weights from the node positions: which connections
# are strong (a link decoder on hyperbolic distances), how large they are and their signs. We train it
# on the first networks, stop early on the next `cfg.n_val`, and read the last `cfg.n_read`, which it
# never saw.

# %% tags=[]
split = ex.network_split(cfg)
seed_everything(seed)
model = build_metanet(
    "GTH-GMN", zoo, "classification", 10, dim=cfg.gth_dim, refine_steps=cfg.refine_steps, refine_lr=cfg.refine_lr
)
data = model.prepare(zoo)  # the temporal parameter graphs of every network
tcfg = TrainConfig(
    epochs=cfg.epochs, batch_size=cfg.gth_batch, lr=cfg.gth_lr, patience=cfg.patience, seed=seed, device=device
)
log = train(ReconstructionTask(model, data, None, split["train"], split["val"], tcfg), tcfg.budget(), desc="stage 1")
gate = ex.stage1_gate(log)
print(f"stage 1: {log.stopped} (best epoch {log.best_epoch}); trained: {gate['trained']} ({gate['reason']})")

# %% [markdown] tags=[]
# How well do the positions of a held-out network's nodes reconstruct its weights? Each metric is
# followed by the baseline it must beat: link AUC by chance (0.5), sign accuracy by the majority sign
# of each layer block, the R² of log-magnitudes by predicting each block's mean. The second table
# judges each metric against its baseline over the held-out networks (a paired difference beyond 2
# standard errors), and the sentence under it says which metrics beat their baseline and which do not:
# a reconstruction that learned nothing reads at or below its baselines.

# %% tags=[]
recon = ex.reconstruction_table(model, data, split["read"])
print(recon.round(3).to_string(index=False))
versus, verdict = ex.reconstruction_report(recon)
print()
print(versus.drop(columns="beats").to_string(index=False))
print(verdict)

# %% [markdown] tags=[]
# ### Each layer in the ball over training
#
# One held-out network at four points of its training run, nodes coloured from the input layer
# (dark) to the output layer (light). With a node dimension above 2 the disk shows one shared
# projection of all snapshots that keeps every node's exact distance to the origin. The table gives
# the same picture as numbers, averaged over the held-out networks: how much of the spread of radii
# and of directions the layer explains (0 to 1), and the mean hyperbolic radius.

# %% tags=[]
z = model.embed_nodes(data[split["read"]], refine_steps=cfg.refine_steps).detach().cpu()
c = float(model.c)
show = sorted({round(i * (zoo.T - 1) / 3) for i in range(4)})
fig = ex.plot_layers_in_ball(z[0], data.node_layer, data.node_type, steps, show, c)
save_figure(fig, out_fig, "08_layers_in_ball")
plt.show()
print(ex.geometry_table(z, data.node_layer, steps, c).round(3).to_string(index=False))

# %% [markdown] tags=[]
# ## 4 · Two networks compared: MSA, CKA, Procrustes
#
# For each layer, MSA compares the geometry each network's layer map induces on a manifold of inputs
# (the pullback metric $G = J^\top J$ of the layer map, arXiv 2603.28764); here the plane of the
# digits' first `cfg.msa_dims` principal components, at the test digits' coordinates in it. (On all
# 64 input dimensions a layer of width 10 has a rank-10 metric and MSA would read 1 for any pair: the
# manifold must be no wider than the layer.) CKA and Procrustes compare the layer's activations on
# the test digits themselves. All three are similarities, 1 = the same. We compare two trained
# networks from different seeds, and one network with its own initialisation.

# %% tags=[]
a, b = split["read"][:2].tolist()
x = X[test_rows[: cfg.msa_points]]
pairs = {f"net {a} vs net {b}, trained": ((a, -1), (b, -1)), f"net {a}: init vs trained": ((a, 0), (a, -1))}
print(ex.similarity_table(zoo, x, pairs, cfg.msa_dims).round(3).to_string(index=False))

# %% [markdown] tags=[]
# ## 5 · The lift table of your own positional encoding
#
# A network that reads coordinates through a positional encoding $\varphi$ can only show a plane
# symmetry $g$ in its weights if $\varphi$ lifts it: $\varphi(gx) = \rho(g)\,\varphi(x)$ for a linear
# $\rho(g)$ (arXiv:2607.03108, Proposition 1). Any Fourier encoding
# $\varphi(x) = [\sin(\omega_i^\top x + b_i), \cos(\omega_i^\top x + b_i)]_i$ is a `FourierPE` of its
# frequencies $\omega_i$ and phases $b_i$. Ours: four octaves on four axes 45° apart. Beside the
# library's dyadic encoding (two axes), it should lift the 45° rotation as well.

# %% tags=[]
octaves = 2.0 ** torch.arange(4) * math.pi
directions = torch.tensor([[math.cos(t), math.sin(t)] for t in (0, math.pi / 4, math.pi / 2, 3 * math.pi / 4)])
my_pe = FourierPE((octaves[:, None, None] * directions).reshape(-1, 2), name="my 8-axis PE")
elements = [*candidate_elements(), rotation(45), reflection(22.5)]
lifts = lift_table([DyadicAxisPE(K=4), my_pe], elements)
marks = lifts.pivot(index="encoding", columns="element", values="liftable")[[g.name for g in elements]]
print(marks.map(lambda ok: "yes" if ok else "·").to_string())
for pe in (DyadicAxisPE(K=4), my_pe):
    print(f"G_lift({pe.name}) among these: {[g.name for g in pe.liftable_set(elements)]}")

# %% [markdown] tags=[]
# ## Claims
#
# One statement of the GTH-GMN paper is checked here on your networks: stage 1 learns to reconstruct
# the weight graphs. Each part is judged on the held-out networks against its trivial baseline, a
# paired difference over networks that must exceed 2 standard errors.

# %% tags=[]
claims = Claims("08_your_own_networks", scale)
ex.reconstruction_claims(claims, recon, gate)
claims.show()
claims.save(out_res);

# %% tags=[]
# NBVAL_CHECK_OUTPUT
claims.print_verdicts()
