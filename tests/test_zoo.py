"""Tests for hgutils.weightspace.zoo: zoo container, SIREN fitting, the three zoos, chunked resume."""

from __future__ import annotations

import math

import pytest
import torch

import hgutils.weightspace.zoo.inr as zoo_mod
from hgutils.weightspace.batched_training import train_stacked
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward
from hgutils.weightspace.zoo import (
    MLPSpec,
    Zoo,
    classifier_zoo,
    fit_sirens,
    image_coordinates,
    inr_image_zoo,
    inr_reconstruct,
    net_seeds,
    psnr,
    sine_zoo,
    siren_mse_value_and_grad,
)

INR_SMALL = dict(n_images=24, steps=60, T=4, chunk_size=10)


class _Sine(torch.nn.Module):
    def forward(self, z):
        return torch.sin(30.0 * z)


@pytest.mark.parametrize(
    "sizes,offset,grid",
    [((2, 8, 8, 1), 0.0, None), ((1, 6, 5, 4, 2), 0.5, None), ((2, 8, 8, 1), 0.0, (3, 5)), ((2, 7, 6, 3), 0.5, (4, 4))],
)
def test_fused_siren_gradient_matches_autograd(sizes, offset, grid):
    n, P = 3, 17 if grid is None else grid[0] * grid[1]
    g = torch.Generator().manual_seed(0)
    x = torch.rand(P, sizes[0], generator=g, dtype=torch.float64) * 2 - 1
    if grid is not None:
        x = image_coordinates(*grid).double()
    y = torch.rand(n, P, sizes[-1], generator=g, dtype=torch.float64)
    p = init_mlp(n, sizes, scheme="siren", generator=g, dtype=torch.float64)
    losses, grads = siren_mse_value_and_grad(x, y, 30.0, offset, grid=grid)(p)
    q = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    ref = ((mlp_forward(q, x, "sine", omega0=30.0, output_offset=offset) - y) ** 2).mean(dim=(1, 2))
    ref_g = torch.autograd.grad(ref.sum(), list(q.values()))
    torch.testing.assert_close(losses, ref.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grads, torch.cat([v.reshape(n, -1) for v in ref_g], 1), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "dtype,tol,grid",
    [
        (torch.float32, 1e-4, None),
        (torch.float64, 1e-10, None),
        (torch.float32, 1e-4, (6, 6)),
        (torch.float64, 1e-10, (6, 6)),
    ],
)
def test_fused_inr_in_batch_equals_alone(dtype, tol, grid):
    """A SIREN INR trained in the batch (fused gradients) = the same INR alone (nn.Sequential + Adam)."""
    n, steps = 4, 100
    x = image_coordinates(6, 6).to(dtype)
    y = torch.rand(n, 36, 1, generator=torch.Generator().manual_seed(1)).to(dtype)
    p = init_mlp(n, (2, 16, 16, 1), scheme="siren", generator=torch.Generator().manual_seed(2), dtype=dtype)
    res = train_stacked(p, None, steps=steps, lr=5e-4, value_and_grad=siren_mse_value_and_grad(x, y, 30.0, grid=grid))
    for i in range(n):
        net = torch.nn.Sequential(
            torch.nn.Linear(2, 16), _Sine(), torch.nn.Linear(16, 16), _Sine(), torch.nn.Linear(16, 1)
        ).to(dtype)
        with torch.no_grad():
            for l in range(3):
                net[2 * l].weight.copy_(p[f"W{l}"][i])
                net[2 * l].bias.copy_(p[f"b{l}"][i])
        opt = torch.optim.Adam(net.parameters(), lr=5e-4)
        for _ in range(steps):
            opt.zero_grad()
            ((net(x) - y[i]) ** 2).mean().backward()
            opt.step()
        for l in range(3):
            ref = net[2 * l].weight.detach()
            assert torch.linalg.norm(res.params[f"W{l}"][i] - ref) <= tol * torch.linalg.norm(ref)
        assert not torch.allclose(res.params["W1"][i], p["W1"][i], atol=1e-5)


def test_inr_zoo_snapshots_init_final_and_psnr(tmp_path):
    z = inr_image_zoo("digits", cache_root=tmp_path, **INR_SMALL)
    assert len(z) == 24 and z.T == 4 and z.steps.tolist() == [0, 20, 40, 60]
    assert z.spec == MLPSpec((2, 32, 32, 1), "sine", 30.0, 0.0)
    assert z.params["W1"].shape == (24, 4, 32, 32)
    init = init_mlp(24, (2, 32, 32, 1), scheme="siren", seeds=net_seeds(0, 0, 24))
    for k in init:  # snapshot 0 is the initialisation, exactly
        assert torch.equal(z.params[k][:, 0], init[k])
    # last snapshot = the final weights of the same fit run alone (batch of 2, other batch layout)
    x = image_coordinates(8, 8)
    imgs = inr_reconstruct(z, 0)
    assert imgs.shape == (24, 1, 8, 8)
    from hgutils.data import load_images

    target = load_images("digits", "train", limit=24).images.flatten(2).transpose(1, 2)
    alone = fit_sirens(
        x,
        target[5:7],
        z.spec,
        init="siren",
        seeds=net_seeds(0, 5, 7),
        steps=60,
        snapshot_steps=[0, 60],
        lr=5e-4,
        batch_size=2,
    )
    for k in init:
        torch.testing.assert_close(z.params[k][5:7, -1], alone[k][:, -1], rtol=1e-5, atol=1e-6)
    # INRs reconstruct their targets: final PSNR is the PSNR of the rendered image
    rec = inr_reconstruct(z).flatten(2).transpose(1, 2)
    torch.testing.assert_close(psnr(((rec - target) ** 2).mean(dim=(1, 2))), z.meta["psnr"], rtol=1e-3, atol=1e-2)
    q = z.meta["psnr"].quantile(torch.tensor([0.1, 0.5, 0.9]))
    print(f"\nINR zoo (digits, 60 steps) PSNR dB: p10 {q[0]:.1f}  median {q[1]:.1f}  p90 {q[2]:.1f}")
    assert q[1] > 25.0
    assert torch.all(z.meta["final_loss"] < ((imgs.flatten(2).transpose(1, 2) - target) ** 2).mean(dim=(1, 2)))
    assert z.meta["label"].shape == (24,) and z.meta["label"].unique().numel() == 10
    # the cache returns the same zoo
    z2 = inr_image_zoo("digits", cache_root=tmp_path, **INR_SMALL)
    assert all(torch.equal(z.params[k], z2.params[k]) for k in z.params)


def test_forked_chunk_workers_give_the_same_zoo_and_resume(tmp_path):
    small = dict(INR_SMALL, chunk_size=6)  # 4 chunks of 6 INRs
    torch.set_num_threads(1)  # the workers' thread count, so both sides run the same kernels
    reference = inr_image_zoo("digits", cache=False, **small)
    forked = inr_image_zoo("digits", cache=False, workers=2, **small)
    for k in reference.params:
        assert torch.equal(forked.params[k], reference.params[k])
    for k in reference.meta:
        assert torch.equal(forked.meta[k], reference.meta[k])
    # a chunk already on disk is loaded, not recomputed, when the others run in workers
    key_dir = tmp_path / "inr_zoo"
    with pytest.raises(KeyboardInterrupt):
        real = zoo_mod.fit_sirens
        calls = []

        def second_dies(*a, **kw):
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt("simulated kill")
            return real(*a, **kw)

        zoo_mod.fit_sirens = second_dies
        try:
            inr_image_zoo("digits", cache_root=tmp_path, **small)
        finally:
            zoo_mod.fit_sirens = real
    assert len(list(key_dir.glob("*.chunks/chunk_*.pt"))) == 1
    resumed = inr_image_zoo("digits", cache_root=tmp_path, workers=2, **small)
    for k in reference.params:
        assert torch.equal(resumed.params[k], reference.params[k])


def test_generate_chunked_refuses_bad_workers():
    from hgutils.weightspace.zoo.cache import generate_chunked

    with pytest.raises(ValueError, match="workers"):
        generate_chunked("x", {}, 4, 2, lambda a, b: {"v": torch.zeros(b - a)}, persist=False, workers=0)


def test_interrupted_generation_resumes_identically(tmp_path, monkeypatch):
    small = dict(INR_SMALL, chunk_size=6)  # 4 chunks of 6 INRs
    reference = inr_image_zoo("digits", cache=False, **small)
    calls = []
    real_fit = zoo_mod.fit_sirens
    kill_on_call = {"n": 3}

    def fit_or_die(*a, **kw):
        calls.append(1)
        if len(calls) == kill_on_call["n"]:  # killed in the middle of chunk 2's training
            raise KeyboardInterrupt("simulated kill")
        return real_fit(*a, **kw)

    monkeypatch.setattr(zoo_mod, "fit_sirens", fit_or_die)
    with pytest.raises(KeyboardInterrupt):
        inr_image_zoo("digits", cache_root=tmp_path, **small)
    chunk_files = sorted((tmp_path / "inr_zoo").glob("*.chunks/chunk_*.pt"))
    assert len(chunk_files) == 2  # chunks 0 and 1 finished and saved; chunk 2 was lost
    # also corrupt chunk 0 (a torn write): it must be detected and redone
    chunk_files[0].write_bytes(chunk_files[0].read_bytes()[:-100])
    kill_on_call["n"] = -1
    calls.clear()
    resumed = inr_image_zoo("digits", cache_root=tmp_path, **small)
    assert len(calls) == 3  # chunks 0 (corrupt), 2 and 3 computed; chunk 1 loaded from disk
    for k in reference.params:
        assert torch.equal(resumed.params[k], reference.params[k])
    for k in reference.meta:
        assert torch.equal(resumed.meta[k], reference.meta[k])
    assert not list((tmp_path / "inr_zoo").glob("*.chunks"))  # chunks removed once assembled


def test_zoo_container_operations():
    z = inr_image_zoo("digits", cache=False, n_images=12, steps=6, T=3, chunk_size=12)
    sub = z.subset([3, 1])
    assert len(sub) == 2 and torch.equal(sub.params["W0"][0], z.params["W0"][3])
    assert torch.equal(sub.meta["label"], z.meta["label"][[3, 1]])
    mask = torch.zeros(12, dtype=torch.bool)
    mask[[0, 5]] = True
    assert len(z.subset(mask)) == 2
    last = z.snapshots([-1])
    assert last.T == 1 and last.steps.tolist() == [6]
    assert torch.equal(last.params["b1"][:, 0], z.params["b1"][:, -1])
    ws = z.weights()
    assert len(ws) == 3 and ws[1][0].shape == (12, 3, 32, 32) and ws[2][1].shape == (12, 3, 1)
    a, b, c = z.split([0.5, 0.25, 0.25], seed=1)
    assert (len(a), len(b), len(c)) == (6, 3, 3)
    idx = torch.cat([a.meta["index"], b.meta["index"], c.meta["index"]])
    assert sorted(idx.tolist()) == list(range(12))
    a2, _, _ = z.split([0.5, 0.25, 0.25], seed=1)
    assert torch.equal(a.meta["index"], a2.meta["index"])
    half = z.to(torch.float16)
    assert half.nbytes() * 2 == z.nbytes()
    both = Zoo.concat([a, b])
    assert len(both) == 9
    with pytest.raises(ValueError, match="sum to <= 1"):
        z.split([0.8, 0.5])
    with pytest.raises(ValueError, match="snapshot indices"):
        z.snapshots([3])
    with pytest.raises(ValueError, match="do not match spec"):
        Zoo(MLPSpec((2, 16, 32, 1), "sine", 30.0), z.params, z.steps)
    with pytest.raises(ValueError, match="steps must be"):
        Zoo(z.spec, z.params, torch.arange(4))
    with pytest.raises(ValueError, match=r"meta\['x'\]"):
        Zoo(z.spec, z.params, z.steps, {"x": torch.zeros(5)})


def test_sine_zoo_targets_and_fit():
    z = sine_zoo(cache=False, n_nets=6, n_points=64, steps=60, T=3, chunk_size=4)
    a, b = z.meta["target"].unbind(1)
    assert z.spec.sizes == (1, 32, 32, 1) and z.spec.output_offset == 0.5
    assert torch.all((a >= 0) & (a <= 10) & (b >= 0) & (b <= 10)) and a.unique().numel() == 6
    x = z.info["x"]
    assert x.shape == (64, 1) and x.min() == -math.pi and x.max() < math.pi
    y = a[:, None, None] * torch.sin(b[:, None, None] * x)
    loss0 = ((z.spec.forward(z.at(0), x) - y) ** 2).mean(dim=(1, 2))
    lossT = ((z.spec.forward(z.at(-1), x) - y) ** 2).mean(dim=(1, 2))
    torch.testing.assert_close(lossT, z.meta["final_loss"], rtol=1e-4, atol=1e-6)
    assert torch.all(lossT < loss0)
    # same (a, b) and init for network i whatever the chunking
    z2 = sine_zoo(cache=False, n_nets=6, n_points=64, steps=60, T=3, chunk_size=6)
    assert torch.equal(z2.meta["target"], z.meta["target"])
    assert torch.equal(z2.params["W0"][:, 0], z.params["W0"][:, 0])


def test_classifier_zoo_mlp_and_cnn():
    z = classifier_zoo("digits", cache=False, n_nets=8, steps=40, n_train=200, n_test=100, T=3, batch_size=16)
    assert z.spec.sizes == (64, 32, 32, 10)
    acc = z.meta["test_acc"]
    assert acc.shape == (8,) and torch.all((acc >= 0) & (acc <= 1))
    assert acc.max() > 0.3  # at least one classifier learned something in 40 steps
    cfg = z.info["config"]
    assert torch.all((z.meta["lr"] >= cfg["lr_range"][0]) & (z.meta["lr"] <= cfg["lr_range"][1]))
    allowed = torch.tensor(cfg["train_fractions"])
    assert torch.isclose(z.meta["train_fraction"][:, None], allowed).any(1).all()
    assert torch.all(z.params["b0"][:, 0] == 0)
    c = classifier_zoo(
        "digits",
        cache=False,
        arch="cnn",
        n_nets=3,
        steps=86,
        n_train=60,
        n_test=40,
        T=9,
        schedule="cnn_zoo",
        batch_size=8,
    )
    assert c.params["W0"].shape == (3, 9, 16, 1, 3, 3) and c.params["W3"].shape == (3, 9, 10, 16)
    assert c.steps.tolist() == [0, 1, 2, 3, 20, 40, 60, 80, 86]  # the Small CNN Zoo checkpoint epochs
    assert torch.all((c.meta["test_acc"] >= 0) & (c.meta["test_acc"] <= 1))
    with pytest.raises(ValueError, match="too few"):
        classifier_zoo("digits", cache=False, arch="cnn", steps=20, T=9, schedule="cnn_zoo")


def test_classifier_zoo_samples_small_cnn_zoo_hyperparameters_and_labels_on_the_whole_test_split():
    """Every network keeps its sampled hyperparameters; RMSProp and the Keras initialisers are among
    them; the label uses every test image, and the two half accuracies average to it."""
    from hgutils.data import load_images
    from hgutils.weightspace.stacked_mlp import init_weights
    from hgutils.weightspace.zoo.classifier import _fans, split_test_halves

    n = 30
    z = classifier_zoo("digits", cache=False, n_nets=n, steps=30, n_train=200, T=2, batch_size=16)
    n_te = len(load_images("digits", split="test"))
    assert z.info["n_test_images"] == n_te  # n_test=None: the whole test split
    assert z.info["optimizers"] == ["adam", "rmsprop", "sgd"]
    for k in ("lr", "l2", "dropout", "init_std", "train_fraction", "activation", "optimizer", "w_init"):
        assert z.meta[k].shape == (n,)
    assert set(z.meta["optimizer"].tolist()) == {0, 1, 2}  # 30 draws: every optimiser sampled
    assert len(set(z.meta["w_init"].tolist())) >= 4
    # the half accuracies are accuracies on n_te // 2 images each and average to the label
    a, b = z.meta["test_acc_a"], z.meta["test_acc_b"]
    h = n_te // 2
    for acc, m in ((a, h), (b, h), (z.meta["test_acc"], n_te)):
        torch.testing.assert_close(acc * m, (acc * m).round(), rtol=0, atol=1e-3)
    if n_te % 2 == 0:
        torch.testing.assert_close((a + b) / 2, z.meta["test_acc"])
    else:
        assert torch.all(((a + b) / 2 - z.meta["test_acc"]).abs() <= 1.0 / n_te + 1e-6)
    ha, hb = split_test_halves(n_te, 0)
    assert len(set(ha.tolist()) | set(hb.tolist())) == 2 * h and not set(ha.tolist()) & set(hb.tolist())
    # snapshot 0 is each network's init drawn with its own w_init / init_std (biases zero)
    for i in range(6):
        scheme = z.info["w_inits"][int(z.meta["w_init"][i])]
        g = torch.Generator().manual_seed(int(net_seeds(0, i, i + 1)[0]))
        ref = init_weights(scheme, (32, 64), *_fans((32, 64)), std=float(z.meta["init_std"][i]), generator=g)
        torch.testing.assert_close(z.params["W0"][i, 0], ref)
    assert torch.all(z.params["b1"][:, 0] == 0)
    assert (z.params["W0"][:, 1] != z.params["W0"][:, 0]).any()  # trained


def test_classifier_zoo_init_std_matches_the_schemes_formulas():
    """Over many networks, each scheme's first-layer std at init is its formula (He sqrt(2/64),
    Glorot sqrt(2/(64+32)); random / truncated normal follow init_std)."""
    from hgutils.weightspace.zoo.classifier import ClassifierZooConfig, _init_classifiers, _sample_hparams

    cfg = ClassifierZooConfig(n_nets=200)
    spec = MLPSpec((64, 32, 32, 10), "relu")
    hp = _sample_hparams(cfg, 0, 200)
    p = _init_classifiers(cfg, spec, hp, net_seeds(0, 0, 200))
    std = p["W0"].flatten(1).std(1)
    for j, scheme in enumerate(cfg.w_inits):
        sel = hp["w_init"] == j
        assert sel.sum() > 10
        if scheme in ("he_normal", "glorot_normal", "glorot_uniform"):
            want = math.sqrt(2 / 64) if scheme == "he_normal" else math.sqrt(2 / 96)
            assert abs(std[sel].mean().item() - want) < 0.02 * want
        else:
            ratio = std[sel] / hp["init_std"][sel]
            want = 1.0 if scheme == "random_normal" else 0.8796
            assert torch.all((ratio - want).abs() < 0.1)


def test_classifier_zoo_errors():
    with pytest.raises(ValueError, match="optimizers must be among"):
        classifier_zoo("digits", cache=False, optimizers=("adagrad",))
    with pytest.raises(ValueError, match="w_inits must be among"):
        classifier_zoo("digits", cache=False, w_inits=("orthogonal",))
    with pytest.raises(ValueError, match="n_test must be None"):
        classifier_zoo("digits", cache=False, n_test=1)
    with pytest.raises(ValueError, match="test images"):
        classifier_zoo("digits", cache=False, n_test=100_000)


def test_errors():
    with pytest.raises(ValueError, match="unknown dataset"):
        inr_image_zoo("imagenet", cache=False)
    with pytest.raises(ValueError, match="training steps"):
        inr_image_zoo("digits", cache=False, steps=3, T=10)
    with pytest.raises(ValueError, match="init must be"):
        inr_image_zoo("digits", cache=False, init="xavier")
    with pytest.raises(ValueError, match="has no field"):
        sine_zoo(cache=False, n_sines=3)
    with pytest.raises(ValueError, match="arch must be"):
        classifier_zoo("digits", cache=False, arch="resnet")
    with pytest.raises(ValueError, match="same P"):
        siren_mse_value_and_grad(torch.zeros(5, 2), torch.zeros(2, 4, 1), 30.0)
    with pytest.raises(ValueError, match="image_coordinates"):
        siren_mse_value_and_grad(torch.zeros(6, 2), torch.zeros(2, 6, 1), 30.0, grid=(2, 3))
    with pytest.raises(ValueError, match="snapshot_dtype"):
        sine_zoo(cache=False, snapshot_dtype="bfloat16")


def test_shared_init_zoo_starts_every_inr_from_one_initialisation():
    z = inr_image_zoo("digits", cache=False, n_images=6, steps=8, T=2, chunk_size=4, shared_init=True)
    ind = inr_image_zoo("digits", cache=False, n_images=6, steps=8, T=2, chunk_size=4)
    for k, v in z.params.items():
        assert torch.equal(v[:, 0], v[:1, 0].expand_as(v[:, 0]))  # one init, across chunks too
        assert torch.equal(v[0, 0], ind.params[k][0, 0])  # it is network 0's init of the per-network zoo
        assert not torch.equal(v[:, -1], v[:1, -1].expand_as(v[:, -1]))  # fitted to different images
    assert not torch.equal(ind.params["W1"][0, 0], ind.params["W1"][1, 0])


def test_rescaled_zoo_has_unit_rms_on_the_reference_networks_and_commutes_with_permutation():
    z = inr_image_zoo("digits", cache=False, n_images=10, steps=6, T=3, chunk_size=10)
    train = torch.tensor([0, 2, 3, 5, 7])
    scales = z.rms_scales(train)
    assert scales["W1"] < scales["W0"] / 5  # the SIREN's hidden layer is much smaller than its first layer
    r = z.rescaled(scales)
    assert r.info["param_scale"] == scales
    for k, v in r.params.items():
        assert abs(float(v[train].pow(2).mean().sqrt()) - 1.0) < 1e-5
        assert torch.equal(torch.sign(v), torch.sign(z.params[k]))
    # scales come from the reference networks only: changing another network leaves them alone
    z2 = z.subset(torch.arange(10))
    z2.params["W1"][1] *= 100.0
    assert z2.rms_scales(train) == scales and z2.rms_scales() != scales
    # a hidden-neuron permutation commutes with the rescaling (one scalar per tensor)
    perm = torch.randperm(32)

    def permute(zz):
        p = dict(zz.params)
        p["W0"], p["b0"], p["W1"] = p["W0"][:, :, perm], p["b0"][:, :, perm], p["W1"][:, :, :, perm]
        return Zoo(zz.spec, p, zz.steps, zz.meta, dict(zz.info))

    a, b = permute(r), permute(z).rescaled(scales)
    assert all(torch.equal(a.params[k], b.params[k]) for k in a.params)
    with pytest.raises(ValueError, match="every parameter tensor"):
        z.rescaled({"W0": 1.0})
    with pytest.raises(ValueError, match="finite and positive"):
        z.rescaled({**scales, "b2": 0.0})
    zero = z.subset(torch.arange(10))
    zero.params["b2"] = torch.zeros_like(zero.params["b2"])
    with pytest.raises(ValueError, match="all zero"):
        zero.rms_scales()
