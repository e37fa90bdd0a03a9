"""How fast do the Lorentz ResNets learn CIFAR in short runs? Swap one component at a time.

Every variant is ResNet-8 at notebook 04's medium widths (8/16/32), trained with the same data, data
order, seeds and recipe (RiemannianSGD lr 0.1, momentum 0.9, Nesterov, wd 5e-4, batch 128; the
schedule of notebook 04: constant, then x0.2 for the last 20 % of the epochs; no augmentation;
channels standardised). Only one component changes per row, relative to the ILNN defaults
(``hgutils.nn.ops.LorentzOptions``: log-radius scale multiplied, PLFC init 0.02, GyroLBN with the
Fréchet variance and scale 0.5, space-add residual, projected input, conv gyro-bias):

========================  ==============================================================================
variant                   change
========================  ==============================================================================
``euclidean``             Conv2d + BatchNorm2d + Linear head
``hcnn``                  HCNN conv (direct concatenation + LorentzFC) + LorentzBN + Lorentz MLR head
``hcnn+gyrolbn``          HCNN conv + GyroLBN
``ilnn``                  ILNN conv (log-radius concatenation + PLFC) + GyroLBN + Lorentz MLR head
``ilnn+divide``           log-radius scale *dividing* the concatenated patch
``ilnn+no_scale``         plain concatenation (s = 1)
``ilnn+fan_in_init``      PLFC normals at fan-in scale instead of 0.02
``ilnn+reference_bn``     GyroLBN statistic of the reference code (sqrt of the mean distance)
``ilnn+bn_scale_1``       GyroLBN scale initialised at 1.0 instead of 0.5
``ilnn+lbn``              HCNN's LorentzBN instead of GyroLBN
``ilnn+gyro_residual``    residual by gyro-addition (the paper's text) instead of adding space parts
``ilnn+expmap0_lift``     input lifted by exp_0 instead of projected
``ilnn+previous``         notebook 04's previous defaults together: divide, fan-in init, GyroLBN mean
                          distance with target 1.5, exp_0 lift, no conv bias
========================  ==============================================================================

Prints per variant the training loss and test accuracy per epoch (mean over seeds; chance loss
ln 10 = 2.30), then a table of final values (mean ± sd). Needs a CIFAR-10 copy (``--data-dir`` or
``$HGUTILS_DATA``); without one it runs on notebook 04's labelled digits stand-in. One thread.

``python benchmarks/ilnn_component_swap.py`` runs every variant on 2,000 / 500 images, 4 epochs,
2 seeds; ``--quick`` only ``euclidean``, ``hcnn``, ``ilnn`` and ``ilnn+previous``, and its last line
is ``ILNN train loss X`` (final-epoch training loss of the ILNN defaults, mean over the seeds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from hgutils.experiments.nb04_ilnn_cifar_genomics import ABLATIONS, ILNNConfig, load_cifar
from hgutils.nn.classifier_training import train_classifier
from hgutils.nn.ops import LorentzOptions
from hgutils.nn.resnets import resnet
from hgutils.nn.training_recipes import VISION_RECIPE

#: variant → (flavour, LorentzOptions changes, batch norm override)
VARIANTS: dict[str, tuple[str, dict, str | None]] = {
    "euclidean": ("euclidean", {}, None),
    "hcnn": ("hcnn", {}, None),
    "hcnn+gyrolbn": ("hcnn", {}, "gyrolbn"),
    "ilnn": ("ilnn", {}, None),
    "ilnn+divide": ("ilnn", {"scale_direction": "divide"}, None),
    "ilnn+no_scale": ("ilnn", {"scale_direction": "none"}, None),
    "ilnn+fan_in_init": ("ilnn", {"plfc_init_std": None}, None),
    "ilnn+reference_bn": ("ilnn", {"bn_dispersion": "reference"}, None),
    "ilnn+bn_scale_1": ("ilnn", {"bn_scale": 1.0}, None),
    "ilnn+lbn": ("ilnn", {}, "lbn"),
    "ilnn+gyro_residual": ("ilnn", {"residual": "gyro"}, None),
    "ilnn+expmap0_lift": ("ilnn", {"lift": "expmap0"}, None),
    "ilnn+previous": ("ilnn", dict(ABLATIONS["earlier_defaults"]), None),
}
QUICK: tuple[str, ...] = ("euclidean", "hcnn", "ilnn", "ilnn+previous")


def build(variant: str, widths: tuple[int, ...], classes: int) -> torch.nn.Module:
    """The ResNet-8 of ``variant`` (seeded by the caller)."""
    flavour, changes, bn = VARIANTS[variant]
    return resnet(flavour, 8, classes, widths, options=LorentzOptions().replace(**changes), bn=bn)


def sd(values: list[float]) -> float:
    """Sample standard deviation (NaN for one value)."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=int, default=2000, help="CIFAR-10 training images (class-balanced)")
    ap.add_argument("--test", type=int, default=500, help="test images")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=2, help="seeds 0 .. seeds-1")
    ap.add_argument("--data-dir", default=None, help="folder with a CIFAR-10 copy (else $HGUTILS_DATA)")
    ap.add_argument("--variants", default=None, help=f"comma-separated subset of {tuple(VARIANTS)}")
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK}")
    args = ap.parse_args()
    names = list(QUICK) if args.quick else list(VARIANTS)
    if args.variants:
        names = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; choose from {tuple(VARIANTS)}")
    torch.set_num_threads(1)
    cfg = ILNNConfig.from_scale("medium", cifar_train=args.train, cifar_test=args.test)
    data = load_cifar(cfg, args.data_dir, 0)
    recipe = VISION_RECIPE.scaled(args.epochs, 128, 0.1, "late_decay")
    print(f"data: {data.source}\nprotocol: {data.protocol}; ResNet-8 widths {cfg.widths}, {args.epochs} epochs, ")
    print(f"lr per epoch {[recipe.lr_at(e) for e in range(args.epochs)]}, seeds 0..{args.seeds - 1}, no augmentation")
    print(f"{'variant':20s} {'train loss per epoch':34s} {'test acc per epoch':30s} s/run")
    final: dict[str, tuple[list[float], list[float]]] = {}
    for name in names:
        losses, accs, secs = [], [], []
        for seed in range(args.seeds):
            torch.manual_seed(seed)
            model = build(name, cfg.widths, data.num_classes)
            t0 = time.perf_counter()
            h = train_classifier(
                model, data.x_train, data.y_train, data.x_test, data.y_test, recipe, seed=seed, desc=name
            )
            secs.append(time.perf_counter() - t0)
            losses.append(h.train_loss)
            accs.append(h.test_acc)
        lm, am = np.mean(losses, 0), 100 * np.mean(accs, 0)
        final[name] = ([x[-1] for x in losses], [100 * x[-1] for x in accs])
        loss = " ".join(f"{v:.3f}" for v in lm)
        acc = " ".join(f"{v:.1f}" for v in am)
        print(f"{name:20s} {loss:34s} {acc:30s} {np.mean(secs):.0f}", flush=True)
    print(f"\n{'variant':20s} final train loss      final test acc (%)   (mean ± sd over {args.seeds} seeds)")
    for name, (lo, ac) in final.items():
        print(f"{name:20s} {np.mean(lo):.3f} ± {sd(lo):.3f}         {np.mean(ac):.1f} ± {sd(ac):.1f}")
    if "ilnn" in final:
        print(f"ILNN train loss {np.mean(final['ilnn'][0]):.3f}")


if __name__ == "__main__":
    main()
