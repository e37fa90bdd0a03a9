"""Tests for hgutils.weightspace.stacked_mlp and batched_training: batched MLP init, forward and training."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.weightspace.batched_training import snapshot_schedule, train_stacked
from hgutils.weightspace.stacked_mlp import WEIGHT_INITS, init_mlp, init_weights, mlp_forward

SIZES = (3, 16, 16, 2)


def _sequential(params: dict, i: int, act: torch.nn.Module) -> torch.nn.Sequential:
    """nn.Sequential copy of network ``i`` of a stacked parameter dict."""
    L = len(params) // 2
    mods: list[torch.nn.Module] = []
    for l in range(L):
        W = params[f"W{l}"][i]
        lin = torch.nn.Linear(W.shape[1], W.shape[0], dtype=W.dtype)
        with torch.no_grad():
            lin.weight.copy_(W)
            lin.bias.copy_(params[f"b{l}"][i])
        mods.append(lin)
        if l < L - 1:
            mods.append(act)
    return torch.nn.Sequential(*mods)


class _Sine(torch.nn.Module):
    def forward(self, z):
        return torch.sin(30.0 * z)


def _regression_task(N: int, P: int = 40, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, P, SIZES[0], generator=g)
    y = torch.randn(N, P, SIZES[-1], generator=g)
    return x, y


@pytest.mark.parametrize(
    "optimizer,act_name,act,dtype,tol",
    [
        ("adam", "tanh", torch.nn.Tanh(), torch.float32, 1e-4),
        ("adam", "relu", torch.nn.ReLU(), torch.float64, 1e-10),
        ("sgd", "tanh", torch.nn.Tanh(), torch.float32, 1e-4),
        ("sgd", "relu", torch.nn.ReLU(), torch.float64, 1e-10),
    ],
)
def test_batch_equals_alone(optimizer, act_name, act, dtype, tol):
    """Each network of a batch trains exactly as it would alone with torch.optim (100 steps).

    float32 to 1e-4 relative; in float64 the arithmetic is the same to 1e-10 (in float32, ReLU
    nets amplify last-bit rounding differences to ~3e-4 after 100 Adam steps, so float64 is the
    sharper check of "same arithmetic").
    """
    N, steps = 5, 100
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(1), dtype=dtype)
    x, y = (t.to(dtype) for t in _regression_task(N))
    lr = torch.tensor([1e-3, 3e-3, 1e-2, 2e-3, 5e-3], dtype=dtype) if optimizer == "adam" else 0.05
    wd = 1e-3

    def loss_fn(p):
        return ((mlp_forward(p, x, act_name) - y) ** 2).mean(dim=(1, 2))

    res = train_stacked(params, loss_fn, steps=steps, optimizer=optimizer, lr=lr, weight_decay=wd, momentum=0.9)
    for i in range(N):
        net = _sequential(params, i, act)
        lr_i = float(lr[i]) if isinstance(lr, torch.Tensor) else lr
        if optimizer == "adam":
            opt = torch.optim.Adam(net.parameters(), lr=lr_i, weight_decay=wd)
        else:
            opt = torch.optim.SGD(net.parameters(), lr=lr_i, weight_decay=wd, momentum=0.9)
        for _ in range(steps):
            opt.zero_grad()
            ((net(x[i]) - y[i]) ** 2).mean().backward()
            opt.step()
        for l in range(len(SIZES) - 1):
            ref_w, ref_b = net[2 * l].weight.detach(), net[2 * l].bias.detach()
            ours_w, ours_b = res.params[f"W{l}"][i], res.params[f"b{l}"][i]
            assert torch.linalg.norm(ours_w - ref_w) <= tol * torch.linalg.norm(ref_w)
            assert torch.linalg.norm(ours_b - ref_b) <= tol * torch.linalg.norm(ref_b)
        # the test can fail: the networks actually moved from their init
        assert not torch.allclose(res.params["W0"][i], params["W0"][i], atol=1e-4)


@pytest.mark.parametrize(
    "optimizer,cls", [("adamw", torch.optim.AdamW), ("adam", torch.optim.Adam), ("sgd", torch.optim.SGD)]
)
def test_per_network_weight_decay_equals_alone(optimizer, cls):
    """A per-network weight-decay tensor trains each network as torch.optim would with that network's
    float decay (float64, 60 steps); decay 0 in the ladder leaves that network undecayed."""
    N, steps = 3, 60
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    x, y = (t.double() for t in _regression_task(N, seed=3))
    wd = torch.tensor([0.0, 0.1, 1.0], dtype=torch.float64)
    lr = 0.05 if optimizer == "sgd" else 1e-2

    def loss_fn(p):
        return ((mlp_forward(p, x, "tanh") - y) ** 2).mean(dim=(1, 2))

    res = train_stacked(params, loss_fn, steps=steps, optimizer=optimizer, lr=lr, weight_decay=wd)
    for i in range(N):
        net = _sequential(params, i, torch.nn.Tanh())
        opt = cls(net.parameters(), lr=lr, weight_decay=float(wd[i]))
        for _ in range(steps):
            opt.zero_grad()
            ((net(x[i]) - y[i]) ** 2).mean().backward()
            opt.step()
        for l in range(len(SIZES) - 1):
            ref = net[2 * l].weight.detach()
            assert torch.linalg.norm(res.params[f"W{l}"][i] - ref) <= 1e-10 * torch.linalg.norm(ref)
    # the decays differ in effect: the strongest decay gives the smallest first layer
    norms = res.params["W0"].flatten(1).norm(dim=1)
    assert norms[2] < norms[1] < norms[0]
    # an all-zero ladder is the undecayed run
    zero = train_stacked(params, loss_fn, steps=5, optimizer=optimizer, lr=lr, weight_decay=torch.zeros(N))
    plain = train_stacked(params, loss_fn, steps=5, optimizer=optimizer, lr=lr)
    assert torch.equal(zero.params["W0"], plain.params["W0"])


@pytest.mark.parametrize(
    "alpha,eps,momentum,wd,lr",
    [
        (0.99, 1e-8, 0.0, 0.0, torch.tensor([1e-3, 3e-3, 1e-2], dtype=torch.float32)),  # torch defaults
        (0.9, 1e-7, 0.0, 1e-3, 2e-3),  # Keras defaults (rho 0.9, eps 1e-7) with an L2 term
        (0.9, 1e-7, 0.5, 0.0, 2e-3),  # with momentum
    ],
)
def test_rmsprop_equals_torch_rmsprop(alpha, eps, momentum, wd, lr):
    """Stacked RMSProp is torch.optim.RMSprop on each network alone (float32, 8 steps, atol 1e-6)."""
    N, steps = 3, 8
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(5))
    x, y = _regression_task(N, seed=6)

    def loss_fn(p):
        return ((mlp_forward(p, x, "tanh") - y) ** 2).mean(dim=(1, 2))

    res = train_stacked(
        params,
        loss_fn,
        steps=steps,
        optimizer="rmsprop",
        lr=lr,
        alpha=alpha,
        eps=eps,
        momentum=momentum,
        weight_decay=wd,
    )
    for i in range(N):
        net = _sequential(params, i, torch.nn.Tanh())
        lr_i = float(lr[i]) if isinstance(lr, torch.Tensor) else lr
        opt = torch.optim.RMSprop(net.parameters(), lr=lr_i, alpha=alpha, eps=eps, momentum=momentum, weight_decay=wd)
        for _ in range(steps):
            opt.zero_grad()
            ((net(x[i]) - y[i]) ** 2).mean().backward()
            opt.step()
        for l in range(len(SIZES) - 1):
            torch.testing.assert_close(res.params[f"W{l}"][i], net[2 * l].weight.detach(), rtol=0, atol=1e-6)
            torch.testing.assert_close(res.params[f"b{l}"][i], net[2 * l].bias.detach(), rtol=0, atol=1e-6)
        # the check can fail: RMSProp's first steps move every weight by about lr
        assert (res.params["W0"][i] - params["W0"][i]).abs().max() > 0.5 * lr_i
    with pytest.raises(ValueError, match="alpha"):
        train_stacked(params, loss_fn, steps=1, optimizer="rmsprop", alpha=1.0)


@pytest.mark.parametrize("scheme", WEIGHT_INITS)
def test_keras_weight_init_statistics(scheme):
    """Each Keras initialiser's std matches its formula (He: sqrt(2/fan_in), Glorot:
    sqrt(2/(fan_in+fan_out)), random normal: std, truncated normal: 0.8796 std) and its support
    (uniform bounds, truncation at 2 pre-truncation sd)."""
    fan_in, fan_out, std = 144, 16, 0.3
    w = init_weights(scheme, (200, 16, 16, 3, 3), fan_in, fan_out, std=std, generator=torch.Generator().manual_seed(0))
    want = {
        "he_normal": math.sqrt(2 / fan_in),
        "he_uniform": math.sqrt(2 / fan_in),
        "glorot_normal": math.sqrt(2 / (fan_in + fan_out)),
        "glorot_uniform": math.sqrt(2 / (fan_in + fan_out)),
        "random_normal": std,
        "truncated_normal": 0.87962566 * std,
    }[scheme]
    assert w.shape == (200, 16, 16, 3, 3) and w.dtype == torch.float32
    assert abs(w.std().item() - want) < 0.01 * want  # 460k draws: sampling error ~0.1 %
    assert abs(w.mean().item()) < 0.01 * want
    if scheme.endswith("_uniform"):
        assert w.abs().max() <= want * math.sqrt(3) and w.abs().max() > 0.999 * want * math.sqrt(3)
    elif scheme == "random_normal":
        assert w.abs().max() > 4 * std  # untruncated tails
    else:
        pre = want / 0.87962566
        assert w.abs().max() <= 2 * pre + 1e-6 and w.abs().max() > 1.99 * pre
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert torch.equal(
        init_weights(scheme, (4, 5), 5, 4, generator=g1), init_weights(scheme, (4, 5), 5, 4, generator=g2)
    )


def test_keras_weight_init_errors():
    with pytest.raises(ValueError, match="unknown weight init"):
        init_weights("lecun_normal", (3, 3), 3, 3)
    with pytest.raises(ValueError, match="fan_in and fan_out"):
        init_weights("he_normal", (3, 3), 0, 3)
    with pytest.raises(ValueError, match="positive std"):
        init_weights("random_normal", (3, 3), 3, 3, std=0.0)


def test_weight_decay_errors():
    params = init_mlp(2, SIZES, generator=torch.Generator().manual_seed(0))

    def loss_fn(p):
        return mlp_forward(p, torch.zeros(2, 1, SIZES[0])).pow(2).mean(dim=(1, 2))

    with pytest.raises(ValueError, match=r"weight_decay must be a float or a \[N=2\] tensor"):
        train_stacked(params, loss_fn, steps=1, weight_decay=torch.zeros(3))
    with pytest.raises(ValueError, match="weight_decay must be >= 0"):
        train_stacked(params, loss_fn, steps=1, weight_decay=torch.tensor([0.1, -0.1]))
    with pytest.raises(ValueError, match="weight_decay must be >= 0"):
        train_stacked(params, loss_fn, steps=1, weight_decay=-1.0)


def test_training_reduces_loss_and_history():
    N = 4
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(0))
    x, y = _regression_task(N)

    def loss_fn(p):
        return ((mlp_forward(p, x, "tanh") - y) ** 2).mean(dim=(1, 2))

    res = train_stacked(params, loss_fn, steps=60, lr=1e-2)
    assert res.history.shape == (60, N)
    assert torch.all(res.losses < res.history[0])
    torch.testing.assert_close(res.history[0], loss_fn(params).detach())
    assert torch.all(res.stopped_at == -1)


def test_snapshots_first_is_init_last_is_final():
    N, steps = 3, 30
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(2))
    x, y = _regression_task(N)
    sched = snapshot_schedule(steps, 7, "log")
    res = train_stacked(
        params,
        lambda p: ((mlp_forward(p, x, "relu") - y) ** 2).mean(dim=(1, 2)),
        steps=steps,
        lr=1e-2,
        snapshot_steps=sched,
    )
    assert res.steps.tolist() == sched
    for k in params:
        assert res.snapshots[k].shape == (N, 7, *params[k].shape[1:])
        torch.testing.assert_close(res.snapshots[k][:, 0], params[k], rtol=0, atol=0)
        torch.testing.assert_close(res.snapshots[k][:, -1], res.params[k], rtol=0, atol=0)
    # intermediate snapshot = training stopped after that many steps
    mid = sched[3]
    res_mid = train_stacked(
        params, lambda p: ((mlp_forward(p, x, "relu") - y) ** 2).mean(dim=(1, 2)), steps=mid, lr=1e-2
    )
    torch.testing.assert_close(res.snapshots["W1"][:, 3], res_mid.params["W1"], rtol=0, atol=0)
    half = train_stacked(
        params,
        lambda p: ((mlp_forward(p, x, "relu") - y) ** 2).mean(dim=(1, 2)),
        steps=steps,
        lr=1e-2,
        snapshot_steps=sched,
        snapshot_dtype=torch.float16,
    )
    assert half.snapshots["W0"].dtype == torch.float16


def test_freezing_keeps_stopped_networks_fixed():
    N, steps = 4, 50
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(3))
    x, y = _regression_task(N)

    def loss_fn(p):
        return ((mlp_forward(p, x, "tanh") - y) ** 2).mean(dim=(1, 2))

    free = train_stacked(params, loss_fn, steps=steps, lr=1e-2, snapshot_steps=list(range(steps + 1)))
    # stop network 1 at step 10 and network 2 at step 25; 0 and 3 never stop
    calls = {"n": 0}

    def stop_fn(p, losses):
        s = calls["n"]
        calls["n"] += 1
        return torch.tensor([False, s >= 10, s >= 25, False])

    res = train_stacked(params, loss_fn, steps=steps, lr=1e-2, stop_fn=stop_fn, snapshot_steps=list(range(steps + 1)))
    assert res.stopped_at.tolist() == [-1, 10, 25, -1]
    for k in params:
        # unaffected networks: identical to the run without stopping
        torch.testing.assert_close(res.params[k][[0, 3]], free.params[k][[0, 3]], rtol=0, atol=0)
        # stopped networks: parameters of their stop step, unchanged afterwards
        torch.testing.assert_close(res.params[k][1], free.snapshots[k][1, 10], rtol=0, atol=0)
        torch.testing.assert_close(res.params[k][2], free.snapshots[k][2, 25], rtol=0, atol=0)
        assert torch.equal(res.snapshots[k][1, 10:], res.snapshots[k][1, 10:11].expand_as(res.snapshots[k][1, 10:]))
    assert not torch.equal(res.params["W0"][1], free.params["W0"][1])


def test_all_stopped_ends_early():
    N = 2
    params = init_mlp(N, SIZES, generator=torch.Generator().manual_seed(4))
    x, y = _regression_task(N)
    res = train_stacked(
        params,
        lambda p: ((mlp_forward(p, x, "tanh") - y) ** 2).mean(dim=(1, 2)),
        steps=20,
        lr=1e-2,
        snapshot_steps=[0, 5, 20],
        stop_fn=lambda p, losses: torch.ones(N, dtype=torch.bool),
    )
    assert res.stopped_at.tolist() == [0, 0]
    for k in params:
        torch.testing.assert_close(res.params[k], params[k], rtol=0, atol=0)
        torch.testing.assert_close(res.snapshots[k][:, 2], params[k], rtol=0, atol=0)


def test_forward_shared_inputs_layer_and_net():
    N = 3
    params = init_mlp(N, SIZES, scheme="siren", generator=torch.Generator().manual_seed(5))
    x = torch.randn(11, SIZES[0])
    out = mlp_forward(params, x, "sine")
    assert out.shape == (N, 11, SIZES[-1])
    torch.testing.assert_close(out, mlp_forward(params, x.expand(N, -1, -1), "sine"))
    for i in range(N):
        ref = _sequential(params, i, _Sine())(x)
        torch.testing.assert_close(mlp_forward(params, x, "sine", net=i), ref)
        torch.testing.assert_close(out[i], ref)
    h = mlp_forward(params, x, "sine", layer=1)
    assert h.shape == (N, 11, SIZES[2])
    ref_h = _sequential(params, 0, _Sine())[:4](x)
    torch.testing.assert_close(h[0], ref_h)
    torch.testing.assert_close(mlp_forward(params, x, "sine", output_offset=0.5), out + 0.5)
    # per-network Jacobian through net=
    J = torch.func.jacrev(lambda xx: mlp_forward(params, xx, "sine", net=1))(x[:2])
    assert J.shape == (2, SIZES[-1], 2, SIZES[0])


@pytest.mark.parametrize("scheme", ["kaiming_uniform", "normal", "siren", "siren_dwsnets"])
def test_init_schemes_statistics(scheme):
    N, sizes, w0 = 400, (2, 32, 32, 1), 30.0
    p = init_mlp(
        N,
        sizes,
        scheme=scheme,
        gain=2.0 if scheme == "normal" else 1.0,
        omega0=w0,
        generator=torch.Generator().manual_seed(0),
    )
    W0, W1, b1 = p["W0"], p["W1"], p["b1"]
    if scheme == "kaiming_uniform":
        assert W1.abs().max() <= 1 / math.sqrt(32) and W1.abs().max() > 0.95 / math.sqrt(32)
    elif scheme == "normal":
        assert abs(W1.std().item() - 2.0 / math.sqrt(32)) < 0.01
        assert torch.all(b1 == 0)
    elif scheme == "siren":
        assert W0.abs().max() <= 1 / 2 and W0.abs().max() > 0.45
        assert W1.abs().max() <= math.sqrt(6 / 32) / w0 and W1.abs().max() > 0.95 * math.sqrt(6 / 32) / w0
    else:  # dwsnets: first layer NOT the SIREN first-layer init, zero hidden biases
        bound = math.sqrt(6 / 2) / w0
        assert W0.abs().max() <= bound and W0.abs().max() > 0.95 * bound
        assert torch.all(p["b0"] == 0) and torch.all(b1 == 0)
        assert p["W2"].abs().max() > 0.9 / math.sqrt(32)  # plain nn.Linear output layer


def test_init_seeds_independent_of_batch():
    a = init_mlp(3, SIZES, seeds=[7, 8, 9])
    b = init_mlp(2, SIZES, seeds=[8, 9])
    for k in a:
        torch.testing.assert_close(a[k][1:], b[k], rtol=0, atol=0)
    assert not torch.equal(a["W0"][0], a["W0"][1])


@settings(max_examples=40, deadline=None)
@given(steps=st.integers(1, 500), T=st.integers(2, 60), kind=st.sampled_from(["uniform", "log"]))
def test_snapshot_schedule_properties(steps, T, kind):
    if T > steps + 1:
        with pytest.raises(ValueError, match="training steps"):
            snapshot_schedule(steps, T, kind)
        return
    s = snapshot_schedule(steps, T, kind)
    assert len(s) == T and s[0] == 0 and s[-1] == steps
    assert all(b > a for a, b in zip(s, s[1:]))


def test_errors():
    params = init_mlp(2, SIZES)
    x = torch.randn(5, SIZES[0])
    with pytest.raises(ValueError, match="training steps"):
        snapshot_schedule(5, 7)
    with pytest.raises(ValueError, match="training steps"):
        train_stacked(params, lambda p: mlp_forward(p, x).sum(dim=(1, 2)), steps=3, snapshot_steps=[0, 1, 2, 3, 4])
    with pytest.raises(ValueError, match="strictly increasing"):
        train_stacked(params, lambda p: mlp_forward(p, x).sum(dim=(1, 2)), steps=3, snapshot_steps=[0, 5])
    with pytest.raises(ValueError, match="unknown activation"):
        mlp_forward(params, x, "swish")
    with pytest.raises(ValueError, match="input width"):
        mlp_forward(params, torch.randn(5, 4))
    with pytest.raises(ValueError, match="N=2"):
        mlp_forward(params, torch.randn(3, 5, SIZES[0]))
    bad = dict(params)
    bad["W1"] = torch.randn(2, 16, 15)
    with pytest.raises(ValueError, match="W1 must be"):
        mlp_forward(bad, x)
    with pytest.raises(ValueError, match="keys"):
        mlp_forward({"W0": params["W0"]}, x)
    with pytest.raises(ValueError, match="per-network losses"):
        train_stacked(params, lambda p: mlp_forward(p, x).sum(), steps=2)
    with pytest.raises(ValueError, match="lr must be"):
        train_stacked(params, lambda p: mlp_forward(p, x).sum(dim=(1, 2)), steps=2, lr=torch.ones(3))
    with pytest.raises(ValueError, match="unknown optimizer"):
        train_stacked(params, lambda p: mlp_forward(p, x).sum(dim=(1, 2)), steps=2, optimizer="lbfgs")
    with pytest.raises(ValueError, match="init scheme"):
        init_mlp(2, SIZES, scheme="xavier")
    with pytest.raises(ValueError, match="sizes"):
        init_mlp(2, (3,))
    with pytest.raises(ValueError, match="hidden layer"):
        mlp_forward(params, x, layer=2)
