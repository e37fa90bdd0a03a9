"""A real training run's checkpoint folders loaded into a zoo (docs/your-own-networks.md, "A folder of
checkpoints"). Runs as is: ``python docs/examples/checkpoint_folder.py``, a few seconds of CPU time.
"""

import shutil
import tempfile
from pathlib import Path

import torch
from sklearn.datasets import make_moons
from torch import nn

from hgutils.weightspace.zoo import Zoo

# -- your training run (plain PyTorch): each network saves its state_dict every 25 steps into its own folder
X, y = (torch.tensor(a) for a in make_moons(256, noise=0.1, random_state=0))
X = X.float()
runs = Path(tempfile.mkdtemp(prefix="my-runs-"))  # your checkpoint folder, e.g. Path("runs")
for seed in range(3):
    folder = runs / f"seed_{seed}"
    folder.mkdir()
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    torch.save(net.state_dict(), folder / "step_00000.pt")  # the initialisation
    for step in range(1, 101):
        opt.zero_grad()
        nn.functional.cross_entropy(net(X), y).backward()
        opt.step()
        if step % 25 == 0:
            torch.save(net.state_dict(), folder / f"step_{step:05d}.pt")  # a file is a copy: no clone() needed

# -- the library: one folder per network, its files sorted by the step in their names
folders = sorted(runs.iterdir())  # [runs/seed_0, runs/seed_1, runs/seed_2]
zoo = Zoo.from_checkpoints(folders, activation="relu")  # read with torch.load(..., weights_only=True)
print("steps read from the file names:", zoo.steps.tolist())
print("W0 [networks, snapshots, out, in]:", tuple(zoo.params["W0"].shape))
with torch.no_grad():
    same = torch.allclose(zoo.spec.forward(zoo.final(), X)[-1], net(X), atol=1e-5)
print("the zoo's last network at its last step computes the trained net:", same)
early = Zoo.from_checkpoints(folders, steps=[0, 50], activation="relu")  # steps= picks the files of those steps
print("the files of steps 0 and 50:", early.steps.tolist())
shutil.rmtree(runs)
