"""hgutils on your own MLP checkpoints: a zoo, GTH-GMN by reconstruction, MSA, and a PE's lift table.

Run: ``python docs/examples/quickstart.py`` (about 10 s of CPU time on one thread). Notebook 08 is the long
version: ``notebooks/08_your_own_networks.ipynb``.
"""

import torch
from sklearn.datasets import make_moons
from torch import nn

from hgutils.loop import train
from hgutils.similarity import mlp_layer_fn, msa
from hgutils.symmetry import FourierPE, candidate_elements, lift_table
from hgutils.weightspace.metanets import build_metanet
from hgutils.weightspace.tasks import ReconstructionTask, TrainConfig
from hgutils.weightspace.zoo import Zoo

# -- your training run (plain PyTorch): 6 MLPs on two moons, a state_dict every 20 steps
X, y = (torch.tensor(a) for a in make_moons(256, noise=0.1, random_state=0))
X = X.float()
trajectories = []
for seed in range(6):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    opt, checkpoints = torch.optim.Adam(net.parameters(), lr=1e-2), []
    for step in range(101):
        if step % 20 == 0:
            checkpoints.append({k: v.detach().clone() for k, v in net.state_dict().items()})
        opt.zero_grad()
        nn.functional.cross_entropy(net(X), y).backward()
        opt.step()
    trajectories.append(checkpoints)

# -- the library
zoo = Zoo.from_checkpoints(trajectories, steps=range(0, 101, 20), activation="relu")  # W0: [6, 6, 16, 2]
model = build_metanet("GTH-GMN", zoo, "classification", 2, dim=8)  # GTH-GMN sized for the zoo
data = model.prepare(zoo)  # one temporal parameter graph per network
cfg = TrainConfig(epochs=10, batch_size=2, seed=0)
train(ReconstructionTask(model, data, None, torch.arange(4), torch.arange(4, 6), cfg), cfg.budget())
held_out = data[torch.arange(4, 6)]
recon = model.recon_metrics(held_out)  # link AUC vs 0.5, sign accuracy vs majority, magnitude R² vs block mean
print("reconstruction of the 2 networks held out of training:", {k: round(v, 3) for k, v in recon.items()})
print("node coordinates in the Poincaré ball:", tuple(model.embed_nodes(held_out).shape))  # [2, T, nodes, 8]
f0, f1 = (mlp_layer_fn(zoo.final(), 1, net=i, activation="relu") for i in (0, 1))
print(f"MSA distance between networks 0 and 1 (hidden layer 2): {msa(f0, f1, X[:100]):.3f}")
my_pe = FourierPE(torch.tensor([[3.1416, 0.0], [0.0, 3.1416], [6.2832, 6.2832]]), name="my PE")
print("symmetries my PE lifts:", lift_table([my_pe], candidate_elements()).query("liftable")["element"].tolist())
