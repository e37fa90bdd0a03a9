"""Zoo.from_checkpoints on files (issue 51): a folder per trajectory sorted by the step in the file
names, or lists of files; read with ``weights_only=True``; every problem names the path."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import torch
from torch import nn

from hgutils.weightspace.zoo import Zoo


def _train(folder: Path, seed: int, steps=(0, 5, 10, 100), name="step_{:05d}.pt") -> list[dict]:
    """Save a state_dict of a moving MLP at each step; return copies of what was saved."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 1))
    saved = []
    for s in steps:
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.1 * torch.randn_like(p))
        torch.save(net.state_dict(), folder / name.format(s))
        saved.append({k: v.clone() for k, v in net.state_dict().items()})
    return saved


def test_folders_are_trajectories_sorted_by_the_step_in_the_file_names(tmp_path):
    a = _train(tmp_path / "a", 0, steps=(100, 0, 10, 5))  # written out of order
    b = _train(tmp_path / "b", 1, steps=(0, 5, 10, 100))
    zoo = Zoo.from_checkpoints([tmp_path / "a", str(tmp_path / "b")], activation="tanh")
    assert zoo.steps.tolist() == [0, 5, 10, 100] and zoo.params["W0"].shape == (2, 4, 6, 2)
    order = {100: 0, 0: 1, 10: 2, 5: 3}  # a's snapshots by step
    for t, step in enumerate((0, 5, 10, 100)):
        assert torch.equal(zoo.params["W0"][0, t], a[order[step]]["0.weight"])
        assert torch.equal(zoo.params["W1"][1, t], b[t]["2.weight"])
    # steps= picks the files of those steps
    picked = Zoo.from_checkpoints([tmp_path / "a", tmp_path / "b"], steps=[5, 100], activation="tanh")
    assert picked.steps.tolist() == [5, 100] and torch.equal(picked.params["W0"][0, 1], a[0]["0.weight"])
    # a list of files is read in the order given; steps= labels it
    files = [tmp_path / "b" / "step_00000.pt", tmp_path / "b" / "step_00010.pt"]
    listed = Zoo.from_checkpoints([files], steps=[0, 10], activation="tanh")
    assert torch.equal(listed.params["b0"][0, 1], b[2]["0.bias"])
    # one file is a one-snapshot trajectory; bytes and os.PathLike paths are paths too
    single = Zoo.from_checkpoints([os.fsencode(files[0]), files[1]], activation="tanh")
    assert single.T == 1 and len(single) == 2


def test_step_numbers_in_names():
    from hgutils.weightspace.zoo.checkpoint_files import step_in_name

    assert step_in_name("step_00040.pt") == 40 and step_in_name("epoch=3-step=120.ckpt") == 120
    assert step_in_name("final.pt") is None


def test_a_file_is_read_without_running_code(tmp_path):
    ran = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(ran),))

    bad = tmp_path / "evil.pt"
    with open(bad, "wb") as fh:
        pickle.dump({"0.weight": Payload()}, fh)
    with pytest.raises(ValueError, match=r"^trajectory 0, snapshot 0: '.*evil.pt' cannot be read with torch.load"):
        Zoo.from_checkpoints([[bad]], activation="relu")
    assert not ran.exists()
    whole = tmp_path / "whole.pt"
    torch.save(nn.Sequential(nn.Linear(2, 1)), whole)  # a pickled module is refused the same way
    with pytest.raises(ValueError, match="cannot be read with torch.load\\(weights_only=True\\)"):
        Zoo.from_checkpoints([whole])


def test_every_path_problem_names_the_path(tmp_path):
    _train(tmp_path / "a", 0)
    with pytest.raises(ValueError, match="^trajectories must be a list with one entry per network; got the path"):
        Zoo.from_checkpoints(str(tmp_path / "a"), activation="tanh")  # not read character by character
    with pytest.raises(ValueError, match=r"^trajectory 1: '.*nope' does not exist"):
        Zoo.from_checkpoints([tmp_path / "a", tmp_path / "nope"], activation="tanh")
    with pytest.raises(
        ValueError, match=r"^trajectory 0, snapshot 1: the checkpoint file '.*missing.pt' does not exist"
    ):
        Zoo.from_checkpoints([[tmp_path / "a" / "step_00000.pt", tmp_path / "missing.pt"]], activation="tanh")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"^trajectory 0: folder '.*empty' holds no checkpoint file"):
        Zoo.from_checkpoints([tmp_path / "empty"], activation="tanh")
    with pytest.raises(
        ValueError, match=r"has no checkpoint for step 50 \(steps=\); its files record steps \[0, 5, 10, 100\]"
    ):
        Zoo.from_checkpoints([tmp_path / "a"], steps=[0, 50], activation="tanh")
    _train(tmp_path / "c", 0, steps=(0,), name="final{}.pt")
    torch.save({}, tmp_path / "c" / "final.pt")
    with pytest.raises(ValueError, match="cannot read a training step from the file name 'final.pt'"):
        Zoo.from_checkpoints([tmp_path / "c"], activation="tanh")
    _train(tmp_path / "d", 0, steps=(3,), name="a_{}.pt")
    _train(tmp_path / "d", 0, steps=(3,), name="b_{}.pth")
    with pytest.raises(ValueError, match="'a_3.pt' and 'b_3.pth' .* both record step 3"):
        Zoo.from_checkpoints([tmp_path / "d"], activation="tanh")
    _train(tmp_path / "e", 1, steps=(0, 5, 10, 99))
    with pytest.raises(ValueError, match=r"trajectory 1 was recorded at steps \[0, 5, 10, 99\]; trajectory 0 at"):
        Zoo.from_checkpoints([tmp_path / "a", tmp_path / "e"], activation="tanh")
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(ValueError, match="'.*list.pt' holds a list; expected a state_dict"):
        Zoo.from_checkpoints([tmp_path / "list.pt"], activation="tanh")
    torch.save({"model": torch.load(tmp_path / "a" / "step_00000.pt"), "step": torch.tensor(0)}, tmp_path / "t.pt")
    with pytest.raises(ValueError, match=r"^trajectory 0, snapshot 0 \(.*t.pt\): .*ckpt\['model'\]"):
        Zoo.from_checkpoints([tmp_path / "t.pt"], activation="tanh")
