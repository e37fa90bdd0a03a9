"""GTH-GMN as the paper trains it: self-supervised reconstruction, Riemannian refinement, frozen head."""

from __future__ import annotations

import pytest
import torch
from test_training_loop import make_zoo

from hgutils.loop import Budget, train
from hgutils.weightspace.metanets import build_metanet, random_hidden_perms
from hgutils.weightspace.tasks import ReconstructionTask, TrainConfig, fit

SMALL = dict(dim=8, heads=2, head_dim=4, gru_hidden=8, aux_edges=32)
SIZES = (2, 4, 4, 1)


def _model(zoo, **kw):
    torch.manual_seed(0)
    return build_metanet("GTH-GMN", zoo, "classification", 2, **{**SMALL, **kw})


def test_reconstruction_stage_beats_an_uninformative_decoder():
    zoo = make_zoo(12, T=2)
    m = _model(zoo, refine_steps=0)
    data = m.prepare(zoo)
    before = m.recon_metrics(data[torch.arange(8, 12)])
    cfg = TrainConfig(steps=150, batch_size=8, lr=3e-3, patience=1000)
    log = train(ReconstructionTask(m, data, None, torch.arange(8), torch.arange(8, 12), cfg), cfg.budget())
    after = m.recon_metrics(data[torch.arange(8, 12)])
    assert log.gate().trained, log.gate().reason
    assert after["link_bce"] < 2 * torch.log(torch.tensor(2.0)).item() < before["link_bce"] + 1.0
    assert after["link_auc"] > 0.6 and after["link_auc"] > before["link_auc"]
    assert after["mag_r2"] > 0.0 > before["mag_r2"] - 1.0


def test_refinement_stays_in_the_ball_and_lowers_the_reconstruction_loss():
    zoo = make_zoo(4, T=3, dtype=torch.float64)
    m = _model(zoo).double()
    g = m.prepare(zoo)
    z0, _ = m.node_states(g)
    z1 = m.refine(z0, g, steps=40, lr=0.05)
    assert z1.shape == z0.shape and float(z1.norm(dim=-1).max()) < 1.0  # c = 1: the unit ball

    def loss(z):
        with torch.no_grad():
            terms = m.full_recon_terms(z, g, z_features=z0)
        return float(sum(terms.values()))

    assert loss(z1) < 0.9 * loss(z0)
    assert torch.equal(m.refine(z0, g, steps=0), z0)
    # the refinement changes no model parameter and leaves none of them frozen
    assert all(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("kw", [{}, {"euclidean": True}, {"use_gru": False}, {"snapshots": 1}])
def test_two_stage_embedding_is_invariant_to_hidden_permutations_of_every_snapshot(kw):
    zoo = make_zoo(3, T=3, dtype=torch.float64)
    perms = random_hidden_perms(SIZES, torch.Generator().manual_seed(4))
    zp = zoo._replace(dict(zoo.params), zoo.steps, dict(zoo.meta))
    for i, p in enumerate(perms):  # permute hidden layer i of every network and every snapshot
        zp.params[f"W{i}"] = zp.params[f"W{i}"][:, :, p]
        zp.params[f"b{i}"] = zp.params[f"b{i}"][:, :, p]
        zp.params[f"W{i + 1}"] = zp.params[f"W{i + 1}"][:, :, :, p]
    m = _model(zoo, refine_steps=10, **kw).double()
    e, ep = m.embed(m.prepare(zoo)), m.embed(m.prepare(zp))
    assert e.shape == (3, m.emb_mu.shape[0])
    assert torch.allclose(e, ep, atol=1e-6), float((e - ep).abs().max())


def test_two_stage_fit_trains_the_head_on_frozen_embeddings_and_records_both_gates():
    zoo = make_zoo(24, T=2)
    y = zoo.meta["label"]
    m = _model(zoo, refine_steps=5)
    data = m.prepare(zoo)
    enc0 = m.encoder.feat_in.weight.detach().clone()
    res = fit(
        m,
        data,
        y,
        torch.arange(16),
        torch.arange(16, 20),
        torch.arange(20, 24),
        TrainConfig(steps=60, batch_size=8, lr=3e-3, patience=1000),
    )
    assert set(res.gates) == {"reconstruction", "task"} and res.pretrain_log.steps == 60
    assert not torch.equal(m.encoder.feat_in.weight.detach(), enc0)  # stage 1 trained the encoder
    enc1 = {k: v.clone() for k, v in m.state_dict().items() if not k.startswith("head.")}
    # the head stage never touches the encoder: refit only the head on the same embeddings
    assert all(torch.equal(v, m.state_dict()[k]) for k, v in enc1.items())
    assert res.metrics["train"]["accuracy"] >= 0.75 and {"link_auc", "sign_acc"} <= set(res.recon)
    assert torch.allclose(m.emb_sd, m.emb_sd.clamp_min(1e-6))
    summary = res.gate_summary()
    assert summary["trained"] == res.trained and "reconstruction:" in summary["reason"]


def test_protocols_and_bad_configs():
    zoo = make_zoo(4, T=2)
    with pytest.raises(ValueError, match="protocol"):
        _model(zoo, protocol="three_stage")
    with pytest.raises(ValueError, match="recon_weights"):
        _model(zoo, recon_weights=(("link", 1.0), ("bogus", 1.0)))
    with pytest.raises(ValueError, match="refine"):
        _model(zoo, refine_lr=0.0)
    m = _model(zoo, protocol="finetune")
    res = fit(
        m,
        m.prepare(zoo),
        zoo.meta["label"],
        torch.arange(3),
        torch.arange(3, 4),
        cfg=TrainConfig(steps=4, batch_size=2, patience=100),
    )
    assert set(res.gates) == {"reconstruction", "task"} and res.steps == 4
    assert Budget(max_steps=4).total_steps(2) == 4


def test_a_fresh_model_loads_the_state_of_a_sized_frozen_head():
    from hgutils.weightspace.metanets.gth_gmn.model import ProjectedLinearHead
    from hgutils.weightspace.tasks import predict_outputs

    zoo = make_zoo(24, T=2)
    y = zoo.meta["label"]
    kw = dict(protocol="two_stage", head_networks_per_param=2.0, refine_steps=2)
    m = _model(zoo, **kw)
    data = m.prepare(zoo)
    cfg = TrainConfig(steps=20, batch_size=8, lr=3e-3, patience=1000)
    fit(m, data, y, torch.arange(16), torch.arange(16, 20), torch.arange(20, 24), cfg)
    assert isinstance(m.head, ProjectedLinearHead)  # the sized head replaced the default one
    fresh = _model(zoo, **kw)
    assert not isinstance(fresh.head, ProjectedLinearHead)
    fresh.load_state_dict(m.state_dict())
    test = torch.arange(20, 24)
    assert torch.equal(predict_outputs(fresh, data, test), predict_outputs(m, data, test))
    with pytest.raises(RuntimeError, match="Missing key"):  # anything else missing is still refused
        _model(zoo, **kw).load_state_dict({k: v for k, v in m.state_dict().items() if k != "head.net.0.bias"})
