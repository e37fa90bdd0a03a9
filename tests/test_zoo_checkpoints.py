"""Zoo.from_checkpoints: a zoo from a researcher's own state_dicts and modules, and every error path."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from hgutils.weightspace.zoo import MLPSpec, Zoo
from hgutils.weightspace.zoo.checkpoints import linear_layers, sequential_activation


def _mlp(seed: int, sizes=(4, 8, 6, 3), act=nn.ReLU) -> nn.Sequential:
    torch.manual_seed(seed)
    mods: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        if i:
            mods.append(act())
        mods.append(nn.Linear(a, b))
    return nn.Sequential(*mods)


def _trajectory(seed: int, T: int = 3, **kw) -> list[nn.Sequential]:
    """Copies of one network after 0, 1, ... SGD-like perturbations (distinct weights per snapshot)."""
    net = _mlp(seed, **kw)
    out = []
    for _ in range(T):
        out.append(copy.deepcopy(net))
        with torch.no_grad():
            for p in net.parameters():
                p.add_(0.1 * torch.randn_like(p))
    return out


class _Named(nn.Module):
    """An MLP written as a plain module with named Linear layers (keys fc1.weight, ...)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


def test_modules_round_trip_tensors_and_outputs():
    trajs = [_trajectory(s) for s in range(3)]
    zoo = Zoo.from_checkpoints(trajs, steps=[0, 10, 20])
    assert len(zoo) == 3 and zoo.T == 3 and zoo.steps.tolist() == [0, 10, 20]
    assert zoo.spec == MLPSpec((4, 8, 6, 3), "relu")
    assert zoo.params["W1"].shape == (3, 3, 6, 8) and zoo.params["b2"].shape == (3, 3, 3)
    assert zoo.info["layer_keys"] == [("0.weight", "0.bias"), ("2.weight", "2.bias"), ("4.weight", "4.bias")]
    x = torch.randn(17, 4)
    for i, tr in enumerate(trajs):
        for t, net in enumerate(tr):
            for l, j in enumerate((0, 2, 4)):
                assert torch.equal(zoo.params[f"W{l}"][i, t], net[j].weight.detach())
                assert torch.equal(zoo.params[f"b{l}"][i, t], net[j].bias.detach())
            ours = zoo.spec.forward(zoo.at(t), x)[i]  # shared inputs -> [N, P, out]
            torch.testing.assert_close(ours, net(x).detach(), rtol=1e-5, atol=1e-6)


def test_state_dicts_with_any_prefix_and_named_layers():
    nets = [_Named(s) for s in range(2)]
    sds = [[{f"model.{k}": v for k, v in n.state_dict().items()}] for n in nets]
    zoo = Zoo.from_checkpoints(sds, activation="tanh")
    assert zoo.spec == MLPSpec((4, 8, 3), "tanh") and zoo.steps.tolist() == [0]
    assert zoo.info["layer_keys"][0] == ("model.fc1.weight", "model.fc1.bias")
    x = torch.randn(5, 4)
    for i, n in enumerate(nets):
        torch.testing.assert_close(zoo.spec.forward(zoo.final(), x)[i], n(x).detach(), rtol=1e-5, atol=1e-6)
    # the plain module itself (not a Sequential) gives the same zoo; its activation must be given
    same = Zoo.from_checkpoints(nets, activation="tanh")
    assert all(torch.equal(same.params[k], zoo.params[k]) for k in zoo.params)
    with pytest.raises(ValueError, match="activation is required"):
        Zoo.from_checkpoints(nets)


def test_sequential_state_dicts_per_trajectory_steps_meta_and_float64():
    trajs = [[{k: v.double() for k, v in n.state_dict().items()} for n in _trajectory(s, T=2)] for s in range(4)]
    zoo = Zoo.from_checkpoints(trajs, steps=[[0, 5]] * 4, activation="relu", meta={"acc": [0.1, 0.2, 0.3, 0.4]})
    assert zoo.params["W0"].dtype == torch.float32 and zoo.meta["acc"].shape == (4,)
    assert zoo.steps.tolist() == [0, 5] and len(zoo.subset([1, 3])) == 2
    torch.testing.assert_close(zoo.params["W2"][3, 1], trajs[3][1]["4.weight"].float())


def test_a_single_linear_layer_needs_no_activation_and_steps_may_be_a_tensor():
    lin, moved = nn.Linear(3, 2), nn.Linear(3, 2)
    zoo = Zoo.from_checkpoints([[lin.state_dict(), moved.state_dict()]], steps=torch.tensor([0, 7]))
    assert zoo.spec == MLPSpec((3, 2), "identity") and zoo.steps.tolist() == [0, 7]
    assert zoo.info["layer_keys"] == [("weight", "bias")]


def test_activation_is_read_from_sequentials_nested_and_with_dropout():
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 5), nn.Sequential(nn.GELU(), nn.Dropout(0.1)), nn.Linear(5, 2))
    assert sequential_activation(net) == "gelu"
    assert sequential_activation(nn.Sequential(nn.Linear(3, 1))) == "identity"
    assert Zoo.from_checkpoints([net, net]).spec == MLPSpec((4, 5, 2), "gelu")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Linear(4, 2)),
            "module '0' is nn.Conv2d, an unsupported layer",
        ),
        (
            nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 2)),
            "module '1' is nn.Sigmoid, an unsupported activation",
        ),
        (
            nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2), nn.Tanh()),
            "module '3' is an activation after the last",
        ),
        (nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2)), "modules '0' and '1' are two nn.Linear in a row"),
        (nn.Sequential(nn.ReLU(), nn.Linear(4, 2)), "must start with an nn.Linear; module '0'"),
        (nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)), "mixes activations"),
        (nn.Sequential(nn.Linear(4, 4), nn.GELU(approximate="tanh"), nn.Linear(4, 2)), "only the exact GELU"),
    ],
)
def test_sequential_errors_name_the_module(bad, message):
    with pytest.raises(ValueError, match=message) as e:
        Zoo.from_checkpoints([[bad]])
    assert str(e.value).startswith("trajectory 0, snapshot 0: ")


def _sd(**shapes):
    return {k: torch.randn(*s) for k, s in shapes.items()}


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (
            _sd(**{"0.weight": (8, 1, 3, 3), "0.bias": (8,)}),
            r"key '0.weight' has shape \(8, 1, 3, 3\); a Linear weight is 2-D",
        ),
        (
            _sd(**{"0.weight": (8, 4), "0.bias": (8,), "1.running_mean": (8,)}),
            "key '1.running_mean' is not a Linear weight or bias",
        ),
        (_sd(**{"fc1.weight": (8, 4), "fc2.weight": (3, 8), "fc2.bias": (3,)}), "key 'fc1.bias' is missing"),
        (_sd(**{"0.weight": (8, 4), "0.bias": (7,)}), "key '0.bias' has 7 entries; '0.weight' has 8 outputs"),
        (
            _sd(**{"0.weight": (8, 4), "0.bias": (8,), "2.weight": (3, 9), "2.bias": (3,)}),
            "key '2.weight' takes 9 inputs but the previous layer '0.weight' gives 8 outputs",
        ),
        ({"0.weight": torch.full((2, 2), float("nan")), "0.bias": torch.zeros(2)}, "key '0.weight' holds non-finite"),
        (
            {"0.weight": torch.ones(2, 2, dtype=torch.long), "0.bias": torch.zeros(2)},
            "key '0.weight' must be a floating",
        ),
    ],
)
def test_state_dict_errors_name_the_first_offending_key(state, message):
    good = _sd(**{"0.weight": (8, 4), "0.bias": (8,)})
    with pytest.raises(ValueError, match=message) as e:
        Zoo.from_checkpoints([[good], [state]], activation="relu")
    assert str(e.value).startswith("trajectory 1, snapshot 0: ")
    with pytest.raises(ValueError, match=message):
        linear_layers(state)


def test_networks_of_different_shapes_or_activations_are_refused():
    a, b = _trajectory(0, T=2), _trajectory(1, T=2, sizes=(4, 9, 6, 3))
    with pytest.raises(ValueError, match=r"trajectory 1, snapshot 0: key '0.weight' has shape \(9, 4\); layer 0 of"):
        Zoo.from_checkpoints([a, b])
    deeper = _trajectory(2, T=2, sizes=(4, 8, 6, 6, 3))
    with pytest.raises(ValueError, match="trajectory 1, snapshot 0: 4 linear layers .* has 3 .*different shapes"):
        Zoo.from_checkpoints([a, deeper])
    tanh = _trajectory(3, T=2, act=nn.Tanh)
    with pytest.raises(ValueError, match="trajectory 1, snapshot 0: the nn.Sequential uses 'tanh'; .* uses 'relu'"):
        Zoo.from_checkpoints([a, tanh])
    with pytest.raises(ValueError, match="uses 'relu' but activation='tanh' was given"):
        Zoo.from_checkpoints([a], activation="tanh")
    with pytest.raises(ValueError, match="activation must be one of"):
        Zoo.from_checkpoints([a], activation="sigmoid")


def test_trajectory_and_steps_errors():
    a, b = _trajectory(0, T=3), _trajectory(1, T=2)
    with pytest.raises(ValueError, match="trajectory 1 has 2 snapshots; trajectory 0 has 3"):
        Zoo.from_checkpoints([a, b])
    with pytest.raises(
        ValueError, match=r"trajectory 1 was recorded at steps \[0, 5, 9\]; trajectory 0 at \[0, 5, 10\]"
    ):
        Zoo.from_checkpoints([a, a], steps=[[0, 5, 10], [0, 5, 9]])
    with pytest.raises(ValueError, match=r"^steps: expected 3 steps, one per snapshot; got 2 \(\[0, 5\]\)"):
        Zoo.from_checkpoints([a], steps=[0, 5])
    with pytest.raises(ValueError, match="^steps of trajectory 1: expected 3 steps"):
        Zoo.from_checkpoints([a, a], steps=[[0, 1, 2], [0, 1]])
    with pytest.raises(ValueError, match="^steps: expected whole numbers of training steps; got 0.5"):
        Zoo.from_checkpoints([a], steps=[0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="^steps: must increase strictly"):
        Zoo.from_checkpoints([a], steps=[0, 5, 5])
    with pytest.raises(ValueError, match="one list per trajectory"):
        Zoo.from_checkpoints([a, a, a], steps=[[0, 1, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match="trajectories must be a list"):
        Zoo.from_checkpoints(a[0])
    with pytest.raises(ValueError, match="trajectories is empty"):
        Zoo.from_checkpoints([])
    with pytest.raises(ValueError, match="a checkpoint is a state_dict, an nn.Module or the path of a file"):
        Zoo.from_checkpoints([[3]])
    with pytest.raises(ValueError, match=r"meta\['acc'\] must have one value per network"):
        Zoo.from_checkpoints([a, a], meta={"acc": [0.5]})


# --------------------------------------------------------------------------------------------
# issue 51: the layers in the order forward() applies them, or a refusal naming them
# --------------------------------------------------------------------------------------------
class _Backwards(nn.Module):
    """Registers its output layer first: ``fc2`` (16 -> 2) before ``fc1`` (2 -> 16)."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.fc2 = nn.Linear(16, 2)
        self.fc1 = nn.Linear(2, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class _SquareSwapped(nn.Module):
    """Square layers registered ``b`` then ``a``; ``forward()`` applies ``a`` first."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.b = nn.Linear(8, 8)
        self.a = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x)))


@pytest.mark.parametrize(("cls", "act", "width"), [(_Backwards, "relu", 2), (_SquareSwapped, "tanh", 8)])
def test_a_module_is_read_in_the_order_its_forward_applies_the_layers(cls, act, width):
    nets = [cls(s) for s in range(2)]
    zoo = Zoo.from_checkpoints(nets, activation=act)
    first = "fc1" if cls is _Backwards else "a"
    assert zoo.info["layer_keys"][0] == (f"{first}.weight", f"{first}.bias")
    assert zoo.spec.sizes[0] == width and zoo.spec.sizes[-1] == (2 if cls is _Backwards else 8)
    x = torch.randn(9, width)
    for i, net in enumerate(nets):  # the zoo holds the function the module computes
        torch.testing.assert_close(zoo.spec.forward(zoo.final(), x)[i], net(x).detach(), rtol=1e-5, atol=1e-6)
    assert all(net.training for net in nets)  # the trace leaves the module's mode as it was


class _Calls(nn.Module):
    """A two-layer module whose ``forward()`` is given."""

    def __init__(self, forward) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 2)
        self._forward = forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._forward(self, x)


@pytest.mark.parametrize(
    ("forward", "activation", "message"),
    [
        (lambda m, x: m.b(m.a(torch.relu(m.a(x)))), "relu", "layer 'a' is applied 2 times by forward()"),
        (lambda m, x: torch.relu(m.a(x)), "relu", "layer 'b' is not applied by forward()"),
        (lambda m, x: m.b(torch.relu(m.a(x[:, :, 0]))), "relu", r"cannot tell in which order forward\(\) applies"),
        (lambda m, x: m.b(torch.relu(m.a(x)) + x), "relu", r"does not compute what forward\(\) computes"),
        (lambda m, x: m.b(torch.relu(m.a(x))), "tanh", r"activation 'tanh'\) does not compute"),
        (lambda m, x: torch.sigmoid(m.b(torch.relu(m.a(x)))), "relu", "an output nonlinearity"),
    ],
    ids=["twice", "unused", "not-vectors", "skip", "wrong-activation", "output-sigmoid"],
)
def test_a_module_whose_function_a_zoo_cannot_hold_is_refused_naming_the_layers(forward, activation, message):
    with pytest.raises(ValueError, match=message) as e:
        Zoo.from_checkpoints([_Calls(forward)], activation=activation)
    assert str(e.value).startswith("trajectory 0, snapshot 0: ")


def test_a_state_dict_out_of_order_is_refused_naming_the_keys():
    # no forward() to trace: the keys' order is the layers' order, and these do not chain
    sd = _sd(**{"out.weight": (3, 8), "out.bias": (3,), "fc1.weight": (8, 4), "fc1.bias": (8,)})
    with pytest.raises(ValueError, match="key 'fc1.weight' takes 4 inputs but the previous layer 'out.weight'") as e:
        Zoo.from_checkpoints([sd], activation="relu")
    assert "pass the module itself" in str(e.value)
    ordered = {k: sd[k] for k in ("fc1.weight", "fc1.bias", "out.weight", "out.bias")}
    assert Zoo.from_checkpoints([ordered], activation="relu").spec.sizes == (4, 8, 3)


# --------------------------------------------------------------------------------------------
# issue 51: state_dict() appended without clone() every epoch
# --------------------------------------------------------------------------------------------
def _run(seed: int, clone: bool) -> list[dict[str, torch.Tensor]]:
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    out = []
    for _ in range(4):
        sd = net.state_dict()
        out.append({k: v.detach().clone() for k, v in sd.items()} if clone else sd)
        opt.zero_grad()
        net(torch.randn(16, 2)).pow(2).mean().backward()
        opt.step()
    return out


def test_snapshots_appended_without_clone_are_warned_about_in_one_line():
    with pytest.warns(UserWarning) as record:
        zoo = Zoo.from_checkpoints([_run(0, True), _run(1, False), _run(2, False)], activation="relu")
    messages = [str(w.message) for w in record if "identical" in str(w.message)]
    assert len(messages) == 1 and "\n" not in messages[0]
    assert messages[0].startswith("Zoo.from_checkpoints: trajectories 1, 2 (of 3): consecutive snapshots")
    assert "all 4 snapshots are the same" in messages[0] and "v.detach().clone()" in messages[0]
    assert record[0].filename == __file__  # pointed at the caller's line
    assert zoo.movement()["all"] >= 0  # the zoo is still built: a frozen run is legal
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Zoo.from_checkpoints([_run(0, True), _run(1, True)], activation="relu")  # copies: no warning


# --------------------------------------------------------------------------------------------
# issue 51: every argument error names the argument and what was expected
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("01", "steps: expected one int per snapshot (a list of ints, or one list per trajectory); got the str '01'"),
        ([0, 2**70], "steps: 1180591620717411303424 does not fit in a 64-bit integer"),
        ([0, "a"], "steps: expected one int per snapshot; got 'a' (str)"),
        ([0, None], "steps: expected one int per snapshot; got None (NoneType)"),
        ([[0, 1], 2], "steps: expected one int per snapshot .*; got a mix of numbers and lists"),
        ([], "steps: expected one int per snapshot .*; got an empty list"),
        (5, "steps: expected one int per snapshot .*; got int"),
        ([0, float("nan")], "steps: expected whole numbers of training steps; got nan"),
    ],
)
def test_bad_steps_are_named_with_what_was_expected(steps, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", "\\(").replace(")", "\\)")):
        Zoo.from_checkpoints([_trajectory(0, T=2)], steps=steps)


def test_meta_device_tensors_and_training_checkpoints_are_named():
    with torch.device("meta"):
        lazy = nn.Sequential(nn.Linear(4, 3))
    with pytest.raises(ValueError, match="key '0.weight' is on the meta device .* load its weights"):
        Zoo.from_checkpoints([lazy])
    net = _mlp(0)
    opt = torch.optim.Adam(net.parameters())
    ckpt = {"model": net.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}
    with pytest.raises(
        ValueError, match=r"a training checkpoint holding \['epoch', 'model', 'optimizer'\].*ckpt\['model'\]"
    ):
        Zoo.from_checkpoints([ckpt], activation="relu")
    with pytest.raises(ValueError, match="^meta: expected a mapping of names to per-network values; got list"):
        Zoo.from_checkpoints([net], meta=[1])
    with pytest.raises(ValueError, match=r"^meta\['name'\]: expected numbers, one per network"):
        Zoo.from_checkpoints([net], meta={"name": ["a"]})
    with pytest.raises(ValueError, match="^info: expected a mapping"):
        Zoo.from_checkpoints([net], info="digits")
