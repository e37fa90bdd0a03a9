"""ILNN models (ResNet flavours, genomic CNNs) and the training utilities: they learn, they are
reproducible, and the helpers (augmentation, MCC, recipes, checkpoints) do what they say."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics
import torch
import torch.nn.functional as F

from hgutils.nn.genomics import GenomicCNN
from hgutils.nn.resnets import FLAVOURS, resnet
from hgutils.nn.training import (
    GENOMICS_RECIPE,
    VISION_RECIPE,
    Recipe,
    mcc,
    random_crop_flip,
    train_classifier,
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
    m = GenomicCNN(flavour, 2, channels=8, hidden=8, dropout=0.0)
    assert _overfit(m, s, y, 60) < 0.1


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
        GenomicCNN("ilnn", 2)(torch.rand(2, 40, 5))  # [B, L, 5] instead of [B, 5, L]


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


def test_train_classifier_is_reproducible_and_resumes(tmp_path):
    torch.manual_seed(0)
    x, y = torch.rand(48, 3, 8, 8), torch.arange(48) % 3
    x = x + 0.5 * F.one_hot(y, 3).float()[:, :, None, None]  # a learnable colour cue
    rec = Recipe(optimizer="rsgd", lr=0.05, epochs=3, milestones=(2,), batch_size=16)

    def run(ckpt=None, epochs=3):
        torch.manual_seed(1)
        m = resnet("ilnn", 8, num_classes=3, widths=(4, 4, 4))
        return train_classifier(
            m, x, y, x[:24], y[:24], Recipe(**{**rec.__dict__, "epochs": epochs}), augment=True, seed=3, checkpoint=ckpt
        )

    h1, h2 = run(), run()
    assert h1.train_loss == h2.train_loss and h1.test_acc == h2.test_acc
    assert len(h1.epoch_time) == 3 and h1.nonfinite_steps == 0
    assert h1.train_loss[-1] < h1.train_loss[0]
    ck = tmp_path / "ck.pt"
    run(ck, epochs=2)
    h3 = run(ck, epochs=3)  # resumes at epoch 2, runs one more
    assert h3.train_loss == pytest.approx(h1.train_loss, rel=1e-5)


def test_recalibrate_bn_sets_cumulative_statistics():
    from hgutils.manifolds import lorentz as L
    from hgutils.nn.lorentz import GyroLBN, to_lorentz
    from hgutils.nn.training import recalibrate_bn

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
