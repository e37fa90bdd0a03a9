"""Why do the Lorentz ResNets learn CIFAR slowly in short runs? Swap one component at a time.

Every variant is ResNet-8 of notebook 04's medium widths, trained with the same data, data order,
seed and recipe (RiemannianSGD lr 0.1, momentum 0.9, Nesterov, wd 5e-4, milestones scaled to the
epochs; no augmentation). Only one component changes per row:

==========================  ==============================================================
variant                     trunk
==========================  ==============================================================
``euclidean``               Conv2d + BatchNorm2d + Linear head
``hcnn``                    HCNN conv (direct concatenation + LorentzFC) + LorentzBN + MLR head
``hcnn+gyrolbn``            HCNN conv + GyroLBN
``ilnn``                    ILNN conv (log-radius concatenation + PLFC) + GyroLBN + MLR head
``ilnn+lbn``                ILNN conv + LorentzBN
``ilnn+scale2``             ILNN with GyroLBN target dispersion 2.0 (model default 1.5)
``ilnn+euclid_head``        ILNN trunk, Euclidean linear head on the space part of log_0
``ilnn+radam``              ILNN trained with RiemannianAdam (lr 3e-3, no weight decay)
``ilnn+mul_s``              ILNN conv *multiplying* the concatenated space part by the log-radius
                            scale s (the reference code's reported direction) instead of dividing
``ilnn+no_s``               ILNN conv with plain concatenation of the space parts (s = 1)
==========================  ==============================================================

Prints the training loss and test accuracy per epoch for each variant (chance loss = ln 10 = 2.30).
Needs a CIFAR-10 copy (``--data-dir`` or ``$HGUTILS_DATA``); without one it runs on notebook 04's
clearly labelled digits stand-in. One process thread (``torch.set_num_threads(1)``).

``python benchmarks/ilnn_component_swap.py --train 2000 --test 500 --epochs 4 --data-dir DIR``
(about 15 CPU-minutes) produced the table in notebook 04 §2.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch
from torch import nn

import hgutils.nn.resnets as resnets
from hgutils.experiments.nb04_ilnn_cifar_genomics import ILNNConfig, load_cifar
from hgutils.manifolds import lorentz as L
from hgutils.nn.lorentz import GyroLBN, LorentzConv2d
from hgutils.nn.lorentz_baselines import LorentzBN
from hgutils.nn.training import VISION_RECIPE, Recipe, train_classifier

VARIANTS: tuple[str, ...] = (
    "euclidean",
    "hcnn",
    "hcnn+gyrolbn",
    "ilnn",
    "ilnn+lbn",
    "ilnn+scale2",
    "ilnn+euclid_head",
    "ilnn+radam",
    "ilnn+mul_s",
    "ilnn+no_s",
)


class SpaceLogHead(nn.Module):
    """Euclidean linear head on the space part of :math:`\\log_0(x)` (replaces the Lorentz MLR)."""

    def __init__(self, features: int, classes: int) -> None:
        super().__init__()
        self.lin = nn.Linear(features, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(L.logmap0(x)[..., 1:])


class _Ops(resnets.Ops):
    """The shared trunk's ops with one batch norm swapped in."""

    def __init__(
        self,
        flavour: str,
        c: float = 1.0,
        residual: str = "space",
        bn: str = "default",
        bn_scale: float = resnets.MODEL_BN_SCALE,
    ) -> None:
        super().__init__(flavour, c, residual)
        self.bn_kind, self.bn_scale = bn, bn_scale

    def bn(self, ch: int) -> nn.Module:
        if self.bn_kind == "lbn":
            return LorentzBN(ch, c=self.c)
        if self.bn_kind == "gyrolbn" or (self.flavour == "ilnn" and self.bn_scale != resnets.MODEL_BN_SCALE):
            return GyroLBN(ch, c=self.c, init_scale=self.bn_scale)
        return super().bn(ch)


def build(variant: str, widths: tuple[int, ...], classes: int) -> tuple[nn.Module, Recipe]:
    """The model and recipe of ``variant`` (seeded by the caller)."""
    flavour = variant.split("+")[0]
    bn = {"ilnn+lbn": "lbn", "hcnn+gyrolbn": "gyrolbn"}.get(variant, "default")
    scale = 2.0 if variant == "ilnn+scale2" else resnets.MODEL_BN_SCALE
    original = resnets.Ops
    resnets.Ops = lambda fl, c=1.0, residual="space": _Ops(fl, c, residual, bn, scale)  # type: ignore[misc]
    try:
        model = resnets.resnet(flavour, 8, classes, widths)
    finally:
        resnets.Ops = original
    if variant == "ilnn+euclid_head":
        model.head = SpaceLogHead(widths[-1], classes)
    if variant in ("ilnn+mul_s", "ilnn+no_s"):  # LorentzConv2d divides the patch's space part by .scale
        for conv in model.modules():
            if isinstance(conv, LorentzConv2d):
                conv.scale = 1.0 / conv.scale if variant == "ilnn+mul_s" else 1.0
    recipe = VISION_RECIPE
    if variant == "ilnn+radam":
        recipe = dataclasses.replace(recipe, optimizer="radam", lr=3e-3, weight_decay=0.0)
    return model, recipe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=int, default=2000, help="CIFAR-10 training images (class-balanced)")
    ap.add_argument("--test", type=int, default=500, help="test images")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--data-dir", default=None, help="folder with a CIFAR-10 copy (else $HGUTILS_DATA)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated subset of {VARIANTS}")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    names = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; choose from {VARIANTS}")
    torch.set_num_threads(1)
    cfg = ILNNConfig.from_scale("medium", cifar_train=args.train, cifar_test=args.test)
    data = load_cifar(cfg, args.data_dir, args.seed)
    print(f"data: {data.source}\nprotocol: {data.protocol}; ResNet-8 widths {cfg.widths}, {args.epochs} epochs")
    print(f"{'variant':18s} {'train loss per epoch':34s} {'test acc per epoch':30s} seconds")
    for name in names:
        torch.manual_seed(args.seed)
        model, recipe = build(name, cfg.widths, data.num_classes)
        t0 = time.perf_counter()
        h = train_classifier(
            model,
            data.x_train,
            data.y_train,
            data.x_test,
            data.y_test,
            recipe.scaled(args.epochs, 128, recipe.lr),
            augment=False,
            seed=args.seed,
            desc=name,
        )
        loss = " ".join(f"{v:.3f}" for v in h.train_loss)
        acc = " ".join(f"{100 * v:.1f}" for v in h.test_acc)
        print(f"{name:18s} {loss:34s} {acc:30s} {time.perf_counter() - t0:.0f}", flush=True)


if __name__ == "__main__":
    main()
