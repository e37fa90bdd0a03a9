"""Notebook 04's runs: every flavour trained on the same data, data order, seed, budget and schedule
(:func:`run_cifar`, :func:`run_genomics`, :func:`bn_comparison`; :func:`genomic_model` builds the genomic
CNN), the batch-norm timing (:func:`bn_timing`, :func:`timing_table`), the init diagnostics
(:func:`init_table`, :func:`init_summary`) and the numbers behind the design rules
(:func:`design_rule_checks`)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from hgutils.experiments.nb04_ilnn_cifar_genomics.data import Split
from hgutils.experiments.nb04_ilnn_cifar_genomics.preset import ILNNConfig, lorentz_options
from hgutils.manifolds import lorentz as L
from hgutils.nn.classifier_training import History, train_classifier
from hgutils.nn.diagnostics import init_diagnostics
from hgutils.nn.genomics import GenomicCNN
from hgutils.nn.lorentz import PLFC, GyroLBN, space_to_lorentz
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN
from hgutils.nn.ops import FLAVOURS
from hgutils.nn.resnets import resnet
from hgutils.nn.training_recipes import GENOMICS_RECIPE, VISION_RECIPE


def run_cifar(
    cfg: ILNNConfig,
    data: Split,
    seed: int = 0,
    device: str = "cpu",
    flavours: tuple[str, ...] = FLAVOURS,
    ablation: str | None = None,
) -> dict[str, History]:
    """Train each ResNet flavour on ``data`` (same trunk, recipe, schedule, data order and seed);
    ``ablation`` changes the Lorentz options (:data:`ABLATIONS`). No selection: the final epoch counts."""
    recipe = VISION_RECIPE.scaled(cfg.cifar_epochs, cfg.batch_size, cfg.cifar_lr, cfg.cifar_schedule)
    out = {}
    for fl in flavours:
        torch.manual_seed(seed)
        model = resnet(fl, cfg.depth, data.num_classes, cfg.widths, options=lorentz_options(cfg, ablation))
        out[fl] = train_classifier(
            model,
            data.x_train,
            data.y_train,
            data.x_test,
            data.y_test,
            recipe,
            augment=cfg.augment,
            seed=seed,
            device=device,
            desc=f"cifar {fl}" + (f" ({ablation})" if ablation else ""),
        )
    return out


def genomic_model(cfg: ILNNConfig, flavour: str, data: Split, bn: str | None = None) -> GenomicCNN:
    """The genomic CNN of ``flavour`` for ``data`` (sequence length and classes), sized by ``cfg``."""
    return GenomicCNN(
        flavour,
        data.num_classes,
        data.x_train.shape[-1],
        channels=cfg.channels,
        fc_dim=cfg.fc_dim,
        dropout=cfg.genomics_dropout,
        options=lorentz_options(cfg),
        bn=bn,
    )


def run_genomics(
    cfg: ILNNConfig,
    data: Split,
    seed: int = 0,
    device: str = "cpu",
    flavours: tuple[str, ...] | None = None,
    bn: str | None = None,
    epochs: int | None = None,
) -> dict[str, History]:
    """Train each genomic-CNN flavour (default ``cfg.genomics_flavours``; RiemannianAdam,
    ``genomics_schedule``), up to ``epochs`` (default ``genomics_epochs``; see
    :meth:`ILNNConfig.epochs_for`) with early stopping after ``genomics_patience`` epochs without a
    better validation MCC; every flavour ends with the weights of its best epoch on validation MCC,
    which is scored on the test split. Batch-norm statistics are re-estimated on ``genomics_bn_batches``
    training batches after each epoch (every flavour alike)."""
    flavours = cfg.genomics_flavours if flavours is None else flavours
    recipe = GENOMICS_RECIPE.scaled(
        epochs or cfg.genomics_epochs, cfg.genomics_batch, cfg.genomics_lr, cfg.genomics_schedule, cfg.genomics_wd
    )
    out = {}
    for fl in flavours:
        torch.manual_seed(seed)
        out[fl] = train_classifier(
            genomic_model(cfg, fl, data, bn),
            data.x_train,
            data.y_train,
            data.x_test,
            data.y_test,
            recipe,
            x_val=data.x_val,
            y_val=data.y_val,
            select="mcc",
            patience=cfg.genomics_patience or None,
            seed=seed,
            bn_recalibration=cfg.genomics_bn_batches,
            device=device,
            desc=f"genomics {fl}" + (f" ({bn})" if bn else ""),
        )
    return out


def bn_comparison(
    cfg: ILNNConfig,
    data: Split,
    seed: int = 0,
    device: str = "cpu",
    gyrolbn: History | None = None,
    epochs: int | None = None,
) -> dict[str, History]:
    """The ILNN genomic CNN trained with each batch norm (GyroLBN / GyroBN / LBN), same budget, data and
    seed. GyroLBN is ILNN's default batch norm, so ``gyrolbn`` may pass the ILNN run of the same task and
    seed (the identical configuration) instead of training it again."""
    out = {"gyrolbn": gyrolbn} if gyrolbn is not None else {}
    for bn in ("gyrolbn", "gyrobn", "lbn"):
        if bn not in out:
            out[bn] = run_genomics(cfg, data, seed, device, ("ilnn",), bn=bn, epochs=epochs)["ilnn"]
    return out


def bn_timing(cfg: ILNNConfig, seed: int = 0) -> dict[str, list[float]]:
    """CPU seconds (``time.process_time``: robust on a shared machine) of forward+backward of GyroLBN,
    GyroBN (Karcher mean, 10 iterations) and HCNN's LBN on ``[bn_points, bn_dim + 1]`` points, one
    value per repetition (``bn_reps``), repetitions interleaved so that they pair up."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(cfg.bn_points, cfg.bn_dim, generator=g) / cfg.bn_dim**0.5
    x = L.expmap0(F.pad(u, (1, 0))).requires_grad_()
    mods = {"GyroLBN": GyroLBN(cfg.bn_dim), "GyroBN": GyroBN(cfg.bn_dim, iters=10), "LBN": LorentzBN(cfg.bn_dim)}
    times: dict[str, list[float]] = {k: [] for k in mods}
    for m in mods.values():
        m(x).sum().backward()
    for _ in range(cfg.bn_reps):
        for k, m in mods.items():
            t0 = time.process_time()
            m(x).sum().backward()
            times[k].append(time.process_time() - t0)
    return times


def timing_table(times: dict[str, list[float]]) -> pd.DataFrame:
    """Median forward+backward time per batch norm (ms) and its ratio to GyroLBN's."""
    med = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
    out = pd.DataFrame({"fwd+bwd (ms, median)": med})
    out["vs GyroLBN"] = out["fwd+bwd (ms, median)"] / med["GyroLBN"]
    out["repetitions"] = [len(v) for v in times.values()]
    return out


def init_table(
    cfg: ILNNConfig, data: Split, seed: int = 0, models: dict[str, str | None] | None = None, kind: str = "cifar"
) -> pd.DataFrame:
    """Init diagnostics (:func:`hgutils.nn.diagnostics.init_diagnostics`) of each model on the first
    ``diag_batch`` training examples. ``models`` maps a label to ``"flavour"`` or ``"flavour:ablation"``
    (default: the three flavours and, for CIFAR, the ILNN ablations of the preset); ``kind`` is
    ``"cifar"`` (ResNet) or ``"genomics"`` (genomic CNN)."""
    if models is None:
        models = {fl: fl for fl in FLAVOURS}
        if kind == "cifar":
            models.update({f"ilnn ({a})": f"ilnn:{a}" for a in cfg.cifar_ablations})
    x, y = data.x_train[: cfg.diag_batch], data.y_train[: cfg.diag_batch]
    frames = []
    for label, spec in models.items():
        fl, _, abl = spec.partition(":")
        torch.manual_seed(seed)
        if kind == "cifar":
            model = resnet(fl, cfg.depth, data.num_classes, cfg.widths, options=lorentz_options(cfg, abl or None))
        else:
            model = genomic_model(cfg, fl, data)
        df = init_diagnostics(model, x, y)
        df.insert(0, "model", label)
        df.insert(2, "index", range(len(df)))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def init_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per model of :func:`init_table`: the largest p99 radius, the largest fraction of clamped PLFC
    logits and the range of the gradient-to-weight ratios over its layers."""
    g = table.groupby("model", sort=False)
    return pd.DataFrame(
        {
            "max p99 radius": g.radius_p99.max(),
            "max radius": g.radius_max.max(),
            "max clamped logits": g.clamped.max(),
            "min |g|/|W|": g.grad_ratio.min(),
            "max |g|/|W|": g.grad_ratio.max(),
        }
    )


def design_rule_checks(seed: int = 0) -> dict[str, float]:
    r"""Numbers behind the paper's design rules, computed in float64.

    * ``plfc_flat_error``: :math:`\max |\mathrm{PLFC}(x)_s - (z x_s - a\lVert z\rVert + b)|` at c = 1e-6 (flat
      limit; logits inside the ``|v| <= 10`` clamp of the reference code, beyond which PLFC saturates).
    * ``gyrolbn_rms_error``: the absolute difference between the RMS distance of GyroLBN's output to its bias
      point and s (Fréchet mode: the output's Fréchet variance about the bias point is s²).
    * ``gyrolbn_centroid_dist``: distance between the output's centroid and the bias point (gyro-scaling
      is not an isometry, so this is small but not zero).
    """
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(64, 8, generator=g, dtype=torch.float64)
    m = PLFC(8, 6, c=1e-6).double()
    with torch.no_grad():  # logits stay inside the reference code's clamp |v| <= 10
        for p in m.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g, dtype=torch.float64))
        want = xs @ m.z.T - m.a * m.z.norm(dim=-1) + m.b
        flat_err = float((m(space_to_lorentz(xs, 1e-6))[:, 1:] - want).abs().max())
    bn = GyroLBN(8, c=1.0, dispersion="frechet", init_scale=0.5).double()
    with torch.no_grad():
        bn.w.copy_(0.3 * torch.randn(8, generator=g, dtype=torch.float64))
        x = L.expmap0(F.pad(0.5 * torch.randn(512, 8, generator=g, dtype=torch.float64) + 0.3, (1, 0)))
        y = bn(x)
    b = L.expmap0(F.pad(bn.w.detach(), (1, 0)))
    return {
        "plfc_flat_error": flat_err,
        "gyrolbn_rms_error": abs(float(L.dist(y, b).pow(2).mean().sqrt()) - 0.5),
        "gyrolbn_centroid_dist": float(L.dist(L.centroid(y), b)),
    }
