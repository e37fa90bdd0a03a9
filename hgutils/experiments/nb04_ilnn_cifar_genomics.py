r"""Notebook 04 (ILNN) experiment: presets, data preparation and the three comparisons.

* :class:`ILNNConfig` -- smoke / medium / paper sizes (the notebook's preset).
* :func:`load_cifar` -- CIFAR-10 (or CIFAR-100) subset; if no CIFAR copy is found, a clearly
  named stand-in (scikit-learn 8x8 digits upsampled to 32x32 RGB) so the smoke run works anywhere.
* :func:`genomics_task` -- a synthetic hierarchical-sequence task (``"synthetic"``) or a TEB task
  (``"teb/<task>"``). TEB pseudogene tasks ship only ``valid`` + ``test`` files here, so the reduced
  protocol is: **train on the valid split, evaluate on the test split** (documented in the notebook);
  tasks with a ``train`` file use train → test.
* :func:`run_cifar`, :func:`run_genomics`, :func:`bn_comparison` -- train every flavour with the
  same trunk, budget and seed, return per-epoch histories.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from hgutils.data import DataNotFoundError, hierarchical_sequences, load_images, load_sequences, one_hot_dna
from hgutils.data.resolve import stratified_split
from hgutils.manifolds import lorentz as L
from hgutils.nn.genomics import GenomicCNN
from hgutils.nn.lorentz import GyroLBN
from hgutils.nn.lorentz_baselines import GyroBN, LorentzBN
from hgutils.nn.resnets import resnet
from hgutils.nn.training import GENOMICS_RECIPE, VISION_RECIPE, History, train_classifier
from hgutils.presets import Preset

__all__ = [
    "CONFIG",
    "GUE_TASKS",
    "ILNNConfig",
    "PAPER_CIFAR",
    "PAPER_GENOMICS_MCC",
    "Split",
    "load_cifar",
    "genomics_task",
    "run_cifar",
    "run_genomics",
    "bn_comparison",
    "bn_timing",
    "summary",
    "design_rule_checks",
    "plot_curves",
    "plot_epoch_times",
]

log = logging.getLogger(__name__)


#: The GUE tasks the ILNN paper reports (DNABERT-2 release names: ``GUE/virus/covid``,
#: ``GUE/prom/prom_core_tata``); used when a GUE copy is found, skipped with a note otherwise.
GUE_TASKS: tuple[str, ...] = ("gue/covid", "gue/prom_core_tata")

#: The paper's numbers quoted by the notebook (ILNN, ICLR 2026, arXiv:2602.23981, Tables 2-3):

#: CIFAR accuracy (%) per flavour, ResNet-18 200 epochs; genomics MCC (%) Euclidean -> ILNN.
PAPER_CIFAR: dict[str, dict[str, float]] = {
    "cifar10": {"euclidean": 95.14, "hcnn": 95.14, "ilnn": 95.36},
    "cifar100": {"euclidean": 77.72, "hcnn": 78.07, "ilnn": 78.41},
}
PAPER_GENOMICS_MCC: dict[str, tuple[float, float]] = {
    "teb/processed_pseudogenes": (60.66, 70.26),
    "teb/unprocessed_pseudogenes": (51.94, 64.90),
    "gue/covid": (36.71, 64.76),
    "gue/prom_core_tata": (79.87, 83.90),
}


@dataclass(frozen=True)
class ILNNConfig(Preset):
    """Sizes of notebook 04. Field defaults are the smoke values; the medium preset is sized to the
    45-minute CPU budget from the per-step costs the notebook's §0 measures (README, status table)."""

    # --- CIFAR ResNets (Euclidean / HCNN-Lorentz / ILNN, one trunk)
    cifar_datasets: tuple[str, ...] = ("cifar10",)  # "cifar10" and/or "cifar100" (paper: both)
    cifar_train: int = 1000  # class-balanced training subset (0 = full)
    cifar_test: int = 300  # test images
    depth: int = 8  # ResNet depth: 8, 10 or 18
    widths: tuple[int, ...] = (4, 8, 16)  # channels per stage
    cifar_epochs: int = 1
    batch_size: int = 100
    cifar_lr: float = 0.1  # RiemannianSGD lr (paper 0.1, momentum 0.9, nesterov, wd 5e-4)
    augment: bool = True  # random crop (pad 4) + flip
    # --- genomics (Euclidean vs ILNN; HCNN too)
    genomics_tasks: tuple[str, ...] = ("synthetic",)  # "synthetic", "teb/<task>", "gue/<task>" (GUE: skipped
    # with a note when no copy is found)
    synth_genes_per_family: int = 4  # synthetic tree: 4 families x genes x variants
    synth_variants: int = 16
    synth_length: int = 120
    synth_label: str = "family"  # label level of the synthetic tree: "family" | "gene"
    genomics_train_limit: int = 0  # 0 = all training sequences
    genomics_test_limit: int = 0  # 0 = all test sequences
    max_len: int = 200  # one-hot length (longer sequences truncated)
    genomics_epochs: int = 3
    genomics_batch: int = 32
    genomics_lr: float = 3e-3  # RiemannianAdam lr (paper ~8e-4 for 150 epochs)
    channels: int = 32  # conv channels (paper 32)
    hidden: int = 32  # FC width after pooling
    # --- batch-norm comparison
    bn_points: int = 1024  # points per timed batch
    bn_dim: int = 32  # space dimension
    bn_reps: int = 5  # timing repetitions (median)
    n_seeds: int = 1  # seeds per configuration

    PRESETS: ClassVar[dict] = {
        "smoke": {},
        "medium": {
            "cifar_train": 5000,
            "cifar_test": 2000,
            "widths": (8, 16, 32),
            "cifar_epochs": 5,
            "batch_size": 128,
            "genomics_tasks": (
                "synthetic",
                "teb/dna_cmc",
                "teb/processed_pseudogenes",
                "teb/unprocessed_pseudogenes",
                *GUE_TASKS,
            ),
            "synth_genes_per_family": 8,
            "synth_variants": 24,
            "synth_length": 200,
            "synth_label": "gene",
            "genomics_train_limit": 4000,
            "genomics_test_limit": 2000,
            "max_len": 500,
            "genomics_epochs": 8,
            "genomics_batch": 64,
            "bn_points": 8192,
            "bn_dim": 64,
            "bn_reps": 7,
        },
        "paper": {
            "cifar_datasets": ("cifar10", "cifar100"),
            "cifar_train": 0,
            "cifar_test": 0,
            "depth": 18,
            "widths": (64, 128, 256, 512),
            "cifar_epochs": 200,
            "batch_size": 128,
            "genomics_tasks": (
                "synthetic",
                "teb/processed_pseudogenes",
                "teb/unprocessed_pseudogenes",
                "teb/dna_cmc",
                *GUE_TASKS,
            ),
            "synth_genes_per_family": 8,
            "synth_variants": 32,
            "synth_length": 200,
            "synth_label": "gene",
            "max_len": 1000,
            "genomics_epochs": 150,
            "genomics_batch": 256,
            "genomics_lr": 8e-4,
            "hidden": 528,
            "bn_points": 32768,
            "bn_dim": 128,
            "n_seeds": 5,
        },
    }


CONFIG = ILNNConfig


@dataclass
class Split:
    """Tensors of one train/test task plus where they came from."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    source: str
    protocol: str


def _digits_standin(n_train: int, n_test: int, seed: int) -> Split:
    out = []
    for split, n in (("train", n_train), ("test", n_test)):
        d = load_images("digits", split, limit=n or None, seed=seed)
        x = F.interpolate(d.images, size=(32, 32), mode="bilinear", align_corners=False).repeat(1, 3, 1, 1)
        out.append((x.clamp(0, 1), d.labels))
    return Split(
        out[0][0],
        out[0][1],
        out[1][0],
        out[1][1],
        10,
        "STAND-IN (no CIFAR copy found): scikit-learn 8x8 digits upsampled to 32x32 RGB",
        "digits stand-in: train/test split of load_digits",
    )


def load_cifar(cfg: ILNNConfig, data_dir: str | None = None, seed: int = 0, dataset: str | None = None) -> Split:
    """CIFAR subset per ``cfg`` (class-stratified) of ``dataset`` (default: the first of
    ``cfg.cifar_datasets``); the digits stand-in when no copy is found."""
    name = dataset or cfg.cifar_datasets[0]
    if name not in PAPER_CIFAR:
        raise ValueError(f"CIFAR dataset must be one of {sorted(PAPER_CIFAR)}; got {name!r}")
    try:
        tr = load_images(name, "train", data_dir, limit=cfg.cifar_train or None, seed=seed)
        te = load_images(name, "test", data_dir, limit=cfg.cifar_test or None, seed=seed)
    except DataNotFoundError as err:
        log.info("no %s copy (%s); using the digits stand-in", name, err)
        return _digits_standin(cfg.cifar_train, cfg.cifar_test, seed)
    return Split(
        tr.images,
        tr.labels,
        te.images,
        te.labels,
        len(tr.classes),
        tr.source,
        f"{name}: {len(tr)} train / {len(te)} test (class-stratified subsets)",
    )


def genomics_task(cfg: ILNNConfig, task: str, data_dir: str | None = None, seed: int = 0) -> Split:
    """One-hot sequences of ``task``: ``"synthetic"`` (hierarchical families, 75/25 split by a
    stratified split) or ``"teb/<task>"`` (train → test, or valid → test when there is no train file)."""
    if task == "synthetic":
        d = hierarchical_sequences(
            4, cfg.synth_genes_per_family, cfg.synth_variants, cfg.synth_length, label_level=cfg.synth_label, seed=seed
        )
        tr, te = stratified_split(d.labels.numpy(), 0.25, seed=seed)
        x = one_hot_dna(d.seqs, cfg.synth_length)
        return Split(
            x[tr],
            d.labels[tr],
            x[te],
            d.labels[te],
            len(d.classes),
            d.source,
            f"synthetic hierarchy (4 families x {cfg.synth_genes_per_family} genes x "
            f"{cfg.synth_variants} variants, length {cfg.synth_length}, label = {cfg.synth_label}): "
            f"{len(tr)} train / {len(te)} test",
        )
    try:
        train = load_sequences(task, "train", data_dir, limit=cfg.genomics_train_limit or None, seed=seed)
        protocol = "train -> test"
    except DataNotFoundError:
        train = load_sequences(task, "valid", data_dir, limit=cfg.genomics_train_limit or None, seed=seed)
        protocol = "REDUCED: trained on the valid split (no train file), evaluated on test"
    test = load_sequences(task, "test", data_dir, limit=cfg.genomics_test_limit or None, seed=seed)
    n = min(cfg.max_len, max(len(s) for s in train.seqs + test.seqs))
    return Split(
        one_hot_dna(train.seqs, n),
        train.labels,
        one_hot_dna(test.seqs, n),
        test.labels,
        len(train.classes),
        train.source,
        f"{task}: {protocol}; {len(train)} train / {len(test)} test, one-hot length {n}",
    )


def run_cifar(
    cfg: ILNNConfig,
    data: Split,
    seed: int = 0,
    device: str = "cpu",
    flavours: tuple[str, ...] = ("euclidean", "hcnn", "ilnn"),
) -> dict[str, History]:
    """Train each ResNet flavour (same trunk, recipe, data order and seed)."""
    recipe = VISION_RECIPE.scaled(cfg.cifar_epochs, cfg.batch_size, cfg.cifar_lr)
    out = {}
    for fl in flavours:
        torch.manual_seed(seed)
        model = resnet(fl, cfg.depth, data.num_classes, cfg.widths)
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
            desc=f"cifar {fl}",
        )
    return out


def run_genomics(
    cfg: ILNNConfig,
    data: Split,
    seed: int = 0,
    device: str = "cpu",
    flavours: tuple[str, ...] = ("euclidean", "hcnn", "ilnn"),
    bn: str = "gyrolbn",
) -> dict[str, History]:
    """Train each genomic-CNN flavour with the genomics recipe (RiemannianAdam, scaled schedule)."""
    recipe = GENOMICS_RECIPE.scaled(cfg.genomics_epochs, cfg.genomics_batch, cfg.genomics_lr)
    out = {}
    for fl in flavours:
        torch.manual_seed(seed)
        model = GenomicCNN(fl, data.num_classes, channels=cfg.channels, hidden=cfg.hidden, bn=bn)
        out[fl] = train_classifier(
            model,
            data.x_train,
            data.y_train,
            data.x_test,
            data.y_test,
            recipe,
            seed=seed,
            device=device,
            desc=f"genomics {fl}",
        )
    return out


def bn_timing(cfg: ILNNConfig, seed: int = 0) -> dict[str, float]:
    """Median CPU seconds (``time.process_time``: robust on a shared machine; use one torch thread for
    a fair op cost) of forward+backward of GyroLBN, GyroBN (Karcher, 10 iterations) and HCNN LBN on
    ``[bn_points, bn_dim + 1]`` points (interleaved repetitions)."""
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
    return {k: float(np.median(v)) for k, v in times.items()}


def bn_comparison(cfg: ILNNConfig, data: Split, seed: int = 0, device: str = "cpu") -> dict[str, History]:
    """ILNN genomic CNN trained with each batch norm (GyroLBN / GyroBN / LBN): accuracy and time."""
    out = {}
    for bn in ("gyrolbn", "gyrobn", "lbn"):
        out[bn] = run_genomics(cfg, data, seed, device, flavours=("ilnn",), bn=bn)["ilnn"]
    return out


def summary(hist: dict[str, History], metric: str = "test_acc") -> dict[str, float]:
    """Final-epoch value of ``metric`` per flavour."""
    return {k: getattr(h, metric)[-1] for k, h in hist.items()}


def config_table(cfg: ILNNConfig) -> dict:
    return dataclasses.asdict(cfg)


def design_rule_checks(seed: int = 0) -> dict[str, float]:
    """Numbers behind the paper's design rules, computed in float64.

    * ``plfc_flat_error``: max |PLFC(x)_s - (z x_s - a||z|| + b)| at c = 1e-6 (flat limit; logits
      inside the ``|v| <= 10`` clamp of the reference code, beyond which PLFC saturates).
    * ``gyrolbn_centroid_dist``: distance between the GyroLBN output centroid and its bias point.
    * ``gyrolbn_dispersion_error``: |mean distance of the output to the bias point - target s|.
    """
    from hgutils.nn.lorentz import PLFC, space_to_lorentz

    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(64, 8, generator=g, dtype=torch.float64)
    m = PLFC(8, 6, c=1e-6).double()
    with torch.no_grad():  # logits stay inside the reference code's clamp |v| <= 10
        for p in m.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g, dtype=torch.float64))
        want = xs @ m.z.T - m.a * m.z.norm(dim=-1) + m.b
        flat_err = float((m(space_to_lorentz(xs, 1e-6))[:, 1:] - want).abs().max())
    bn = GyroLBN(8, c=1.0, init_scale=0.5).double()
    with torch.no_grad():
        bn.w.copy_(0.3 * torch.randn(8, generator=g, dtype=torch.float64))
    x = L.expmap0(F.pad(0.5 * torch.randn(512, 8, generator=g, dtype=torch.float64) + 0.3, (1, 0)))
    y = bn(x).detach()
    b = L.expmap0(F.pad(bn.w.detach(), (1, 0)))
    return {
        "plfc_flat_error": flat_err,
        "gyrolbn_centroid_dist": float(L.dist(L.centroid(y), b)),
        "gyrolbn_dispersion_error": abs(float(L.dist(y, b).mean()) - 0.5),
    }


def plot_curves(ax, hist: dict[str, History], metric: str = "test_acc", title: str = "") -> None:
    """``metric`` per epoch for each flavour."""
    from hgutils.plotting import use_style

    use_style()
    for k, h in hist.items():
        vals = getattr(h, metric)
        ax.plot(range(1, len(vals) + 1), vals, marker="o", label=k)
    ax.set_xlabel("epoch")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(title)
    ax.legend()


def plot_epoch_times(ax, times: dict[str, float], title: str = "time per epoch") -> None:
    """Bar chart of mean seconds per training epoch."""
    from hgutils.plotting import use_style

    use_style()
    ax.bar(list(times), list(times.values()), color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"][: len(times)])
    ax.set_ylabel("seconds / epoch")
    ax.set_title(title)
