"""ILNN models (ResNet flavours, genomic CNNs) and the training utilities: they learn, they are
reproducible, and the helpers (augmentation, MCC, recipes, checkpoints) do what they say."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics
import torch
import torch.nn.functional as F

from hgutils.nn.classifier_training import evaluate, mcc, random_crop_flip, train_classifier
from hgutils.nn.diagnostics import init_diagnostics
from hgutils.nn.genomics import GenomicCNN
from hgutils.nn.lorentz import PLFC
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN, LorentzFC
from hgutils.nn.ops import LorentzOptions
from hgutils.nn.resnets import FLAVOURS, resnet
from hgutils.nn.training_recipes import (
    GENOMICS_RECIPE,
    SCHEDULES,
    VISION_RECIPE,
    ScheduleRecipe,
    make_optimizer,
    make_scheduler,
)


def _overfit(model, x, y, steps, lr=1e-2):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():  # training-mode loss (batch statistics) on the fitted batch
        return float(F.cross_entropy(model(x), y))


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_resnet_overfits_a_tiny_batch(flavour):
    torch.manual_seed(0)
    x, y = torch.rand(8, 3, 8, 8), torch.arange(8) % 4
    m = resnet(flavour, 8, num_classes=4, widths=(4, 8, 8))
    with torch.no_grad():
        start = float(F.cross_entropy(m(x), y))
    end = _overfit(m, x, y, 50)
    assert end < 0.1 < start


@pytest.mark.parametrize("flavour", ["euclidean", "hcnn", "ilnn"])
def test_genomic_cnn_overfits_a_tiny_batch(flavour):
    torch.manual_seed(0)
    s = F.one_hot(torch.randint(0, 5, (8, 40)), 5).float().transpose(1, 2)
    y = torch.arange(8) % 2
    m = GenomicCNN(flavour, 2, 40, channels=8, fc_dim=8, dropout=0.0)
    assert _overfit(m, s, y, 60) < 0.1


def test_genomic_cnn_has_the_papers_architecture():
    """3 residual blocks of two k-9 convs (32 channels) without pooling, flatten -> FC 528 -> head."""
    for flavour, conv_cls, fc_cls in (
        ("euclidean", torch.nn.Conv1d, torch.nn.Linear),
        ("hcnn", None, LorentzFC),
        ("ilnn", None, PLFC),
    ):
        m = GenomicCNN(flavour, 3, 200)
        assert len(m.blocks) == 3 and [b.residual for b in m.blocks] == [False, True, True]
        convs = [b.body[0] for b in m.blocks] + [b.body[4] for b in m.blocks]
        assert all(c.out_channels == 32 for c in convs)
        if conv_cls is not None:
            assert all(isinstance(c, conv_cls) and c.kernel_size == (9,) for c in convs)
        fc = m.fc[1]
        assert isinstance(fc, fc_cls)
        assert fc.in_features == 200 * 32 and fc.out_features == 528
        m.eval()
        with torch.no_grad():
            assert m(F.one_hot(torch.randint(0, 5, (2, 200)), 5).float().transpose(1, 2)).shape == (2, 3)
    ilnn = GenomicCNN("ilnn", 2, 100)
    assert float(ilnn.fc[1].z.std()) == pytest.approx(
        (100 * 32) ** -0.5, rel=0.05
    )  # no batch norm after the FC: fan-in
    with pytest.raises(ValueError, match="length 100"):
        ilnn(torch.zeros(2, 5, 90))
    assert isinstance(GenomicCNN("ilnn", 2, 20, bn="gyrobn").blocks[0].body[1], GyroBN)
    assert isinstance(GenomicCNN("ilnn", 2, 20, bn="lbn").blocks[0].body[1], LorentzBN)


def test_resnet18_shapes_and_depths():
    m = resnet("ilnn", 18, num_classes=100, widths=(4, 4, 8, 8))
    blocks = [mod for mod in m.modules() if type(mod).__name__ == "BasicBlock"]
    assert len(blocks) == 8
    m.eval()
    with torch.no_grad():
        assert m(torch.rand(2, 3, 16, 16)).shape == (2, 100)
    with pytest.raises(ValueError, match="depth"):
        resnet("ilnn", 34)
    with pytest.raises(ValueError, match="flavour"):
        resnet("poincare", 8)


def test_models_reject_wrong_layout():
    with pytest.raises(ValueError, match=r"\[B, C, H, W\]"):
        resnet("ilnn", 8)(torch.rand(3, 32, 32))
    with pytest.raises(ValueError, match="channel-first"):
        GenomicCNN("ilnn", 2, 40)(torch.rand(2, 40, 5))  # [B, L, 5] instead of [B, 5, L]
    with pytest.raises(ValueError, match="scale_direction"):
        LorentzOptions(scale_direction="sqrt")
    with pytest.raises(ValueError, match="bn_dispersion"):
        LorentzOptions(bn_dispersion="squared")
    with pytest.raises(ValueError, match="flavour"):
        GenomicCNN("poincare", 2, 40)


def test_random_crop_flip():
    g = torch.Generator().manual_seed(0)
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.float32).view(2, 3, 6, 6) + 1
    out = random_crop_flip(x, pad=2, generator=g)
    assert out.shape == x.shape
    # every output row is a (possibly flipped, shifted) piece of an input row or zero padding
    for b in range(2):
        vals = set(x[b].flatten().tolist()) | {0.0}
        assert set(out[b].flatten().tolist()) <= vals
    # pad=0 leaves only flips: each image equals itself or its mirror
    out0 = random_crop_flip(x, pad=0, generator=g)
    for b in range(2):
        assert torch.equal(out0[b], x[b]) or torch.equal(out0[b], x[b].flip(-1))
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(random_crop_flip(x, generator=g1), random_crop_flip(x, generator=g2))
    with pytest.raises(ValueError, match="B, C, H, W"):
        random_crop_flip(x[0])


def test_mcc_matches_sklearn():
    rng = np.random.default_rng(0)
    for k in (2, 3, 9):
        yt = rng.integers(0, k, 300)
        yp = np.where(rng.random(300) < 0.6, yt, rng.integers(0, k, 300))
        assert abs(mcc(yt, yp) - sklearn.metrics.matthews_corrcoef(yt, yp)) < 1e-12
    assert mcc([0, 1, 1, 0], [0, 1, 1, 0]) == 1.0
    assert mcc([0, 1, 1, 0], [1, 1, 1, 1]) == 0.0
    with pytest.raises(ValueError):
        mcc([0, 1], [0])


def test_recipes_scale_milestones():
    assert VISION_RECIPE.milestones == (60, 120, 160) and VISION_RECIPE.epochs == 200
    r = VISION_RECIPE.scaled(10)
    assert r.milestones == (3, 6, 8) and r.epochs == 10
    assert GENOMICS_RECIPE.scaled(15).milestones == (10, 13)
    assert GENOMICS_RECIPE.optimizer == "radam"


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedules_give_the_documented_learning_rates(schedule):
    r = VISION_RECIPE.scaled(10, lr=0.1, schedule=schedule)
    want = {
        "milestones": [0.1] * 3 + [0.02] * 3 + [0.004] * 2 + [0.0008] * 2,
        "late_decay": [0.1] * 8 + [0.02] * 2,  # constant for 80 % of the epochs, then x gamma
        "cosine": [0.05 * (1 + np.cos(np.pi * e / 10)) for e in range(10)],
    }[schedule]
    assert [r.lr_at(e) for e in range(10)] == pytest.approx(want)
    model = torch.nn.Linear(2, 2)
    opt = make_optimizer(model, r)
    sched = make_scheduler(opt, r)
    seen = []
    for _ in range(10):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == pytest.approx(want)
    with pytest.raises(ValueError, match="schedule"):
        ScheduleRecipe(schedule="step")


def test_train_classifier_is_reproducible_and_resumes(tmp_path):
    torch.manual_seed(0)
    x, y = torch.rand(48, 3, 8, 8), torch.arange(48) % 3
    x = x + 0.5 * F.one_hot(y, 3).float()[:, :, None, None]  # a learnable colour cue
    rec = ScheduleRecipe(optimizer="rsgd", lr=0.05, epochs=3, milestones=(2,), batch_size=16)

    def run(ckpt=None, epochs=3):
        torch.manual_seed(1)
        m = resnet("ilnn", 8, num_classes=3, widths=(4, 4, 4))
        return train_classifier(
            m,
            x,
            y,
            x[:24],
            y[:24],
            ScheduleRecipe(**{**rec.__dict__, "epochs": epochs}),
            augment=True,
            seed=3,
            checkpoint=ckpt,
        )

    h1, h2 = run(), run()
    assert h1.train_loss == h2.train_loss and h1.test_acc == h2.test_acc
    assert len(h1.epoch_time) == 3 and h1.nonfinite_steps == 0
    assert h1.lr == pytest.approx([0.05, 0.05, 0.01]) and h1.best_epoch == 2  # no validation split: last epoch
    assert h1.train_loss[-1] < h1.train_loss[0]
    ck = tmp_path / "ck.pt"
    run(ck, epochs=2)
    h3 = run(ck, epochs=3)  # resumes at epoch 2, runs one more
    assert h3.train_loss == pytest.approx(h1.train_loss, rel=1e-5)


def test_recalibrate_bn_sets_cumulative_statistics():
    from hgutils.manifolds import lorentz as L
    from hgutils.nn.classifier_training import recalibrate_bn
    from hgutils.nn.lorentz import GyroLBN, to_lorentz

    torch.manual_seed(0)
    x = to_lorentz(torch.randn(64, 3) + 1.0, channel_dim=None)
    bn_l, bn_e = GyroLBN(3, momentum=0.1), torch.nn.BatchNorm1d(3)
    bn_l.eval()
    recalibrate_bn(bn_l, x, batch_size=64, n_batches=1)
    assert not bn_l.training and bn_l.momentum == 0.1
    assert float(L.dist(bn_l.running_mean, L.centroid(x.double()).float())) < 1e-5
    xe = torch.randn(40, 3) * 2 + 3
    recalibrate_bn(bn_e, xe, batch_size=20, n_batches=2, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(bn_e.running_mean, xe.mean(0), atol=1e-5)  # average of the two half-batch means


def test_validation_selects_the_best_epoch_identically_for_every_flavour():
    torch.manual_seed(0)
    x, y = torch.rand(64, 3, 8, 8), torch.arange(64) % 2
    x = x + 0.8 * F.one_hot(y, 3).float()[:, :, None, None]
    rec = ScheduleRecipe(optimizer="rsgd", lr=0.05, epochs=4, milestones=(3,), batch_size=16)
    for flavour in FLAVOURS:
        torch.manual_seed(1)
        m = resnet(flavour, 8, num_classes=2, widths=(4, 4, 4))
        h = train_classifier(m, x[:40], y[:40], x[48:], y[48:], rec, x_val=x[40:48], y_val=y[40:48], select="acc")
        assert len(h.val_acc) == len(h.test_acc) == 4
        best = int(np.argmax(h.val_acc))  # first best epoch on validation accuracy
        assert h.best_epoch == best and h.final("test_acc") == h.test_acc[best]
        # the model ends with the selected epoch's weights: its test accuracy is the recorded one
        acc, _, _ = evaluate(m, x[48:], y[48:])
        assert acc == pytest.approx(h.test_acc[best])
        g = h.gate(chance=0.5)
        assert g.initial_loss == h.probe_before["loss"] and g.final_loss == h.probe_after["loss"]
    with pytest.raises(ValueError, match="x_val and y_val"):
        train_classifier(m, x, y, x, y, rec, x_val=x)


def test_ilnn_resnet8_starts_inside_float32s_range():
    """Init diagnostics of the ILNN defaults on a ResNet-8 at widths 8/16/32: no layer's p99 feature
    radius above 5 and no PLFC logit at the +-10 clamp (the previous defaults broke both)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, 32, 32, generator=g)  # standardised images
    x = x + torch.randn(64, 3, 1, 1, generator=g)  # per-image colour offsets
    y = torch.arange(64) % 10
    torch.manual_seed(0)
    df = init_diagnostics(resnet("ilnn", 8, 10, (8, 16, 32)), x, y)
    convs = df[df.kind == "conv"]
    assert len(convs) == 9 and (convs.clamped == 0).all()  # stem + 2 + 3 + 3 (two shortcuts)
    assert float(df.radius_p99.max()) <= 5.0
    assert float(convs.grad_ratio.min()) > 1e-3  # 0.02 init: effective steps not shrunk
    previous = LorentzOptions(
        scale_direction="divide", plfc_init_std=None, bn_dispersion="mean", bn_scale=1.5, lift="expmap0"
    )
    torch.manual_seed(0)
    old = init_diagnostics(resnet("ilnn", 8, 10, (8, 16, 32), options=previous), x, y)
    assert float(old.radius_p99.max()) > 5.0  # the diagnostic does see the old blow-up


def test_init_diagnostics_columns_and_model_untouched():
    torch.manual_seed(0)
    m = resnet("euclidean", 8, 10, (4, 4, 4))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    df = init_diagnostics(m, torch.randn(8, 3, 8, 8), torch.arange(8))
    assert list(df.columns) == ["layer", "kind", "radius_p50", "radius_p99", "radius_max", "clamped", "grad_ratio"]
    assert set(df.kind) == {"conv", "bn", "fc"} and df.clamped.isna().all()  # nothing clamps in Euclidean layers
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items())  # running stats unchanged
    lorentz = init_diagnostics(resnet("ilnn", 8, 10, (4, 4, 4)), torch.randn(8, 3, 8, 8), torch.arange(8))
    assert lorentz[lorentz.kind == "bn"].radius_p50.between(0.2, 1.0).all()  # GyroLBN: RMS distance 0.5
    assert set(lorentz.kind) == {"conv", "bn", "head"}
    with pytest.raises(ValueError, match="at least 2"):
        init_diagnostics(m, torch.randn(1, 3, 8, 8), torch.arange(1))
