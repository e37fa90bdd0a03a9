"""Training recipes of the baselines as their reference code runs them, as data a training loop can read.

Each :class:`Recipe` records the optimiser, learning rate, weight decay, warmup, gradient clipping,
batch size, epoch budget, dropout and model selection of one reference training script, with the
file it comes from. :data:`RECIPES` holds them by ``(model, task)``; a model exposes its own through
its ``recipe`` attribute (``None`` when it has none). Where a reference never ran a task, the entry
reuses the closest reference script and says so in ``note``.

Sources (read from the public repositories):

* GMN as Neural Graphs runs it -- Kofinas et al., "Graph Neural Networks for Learning Equivariant
  Representations of Neural Networks", ICLR 2024, arXiv:2403.12143; ``mkofinas/neural-graphs``.
* DWSNet -- Navon et al., "Equivariant Architectures for Learning in Deep Weight Spaces",
  ICML 2023, arXiv:2301.12780; ``AvivNavon/DWSNets``.
* StatNN as NFN's StatNet -- Zhou et al., "Permutation Equivariant Neural Functionals",
  NeurIPS 2023, arXiv:2302.14040; ``AllanYangZhou/nfn``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["LR_SCALING_RULES", "RECIPES", "Recipe", "recipe_for", "scaled_lr"]


@dataclass(frozen=True)
class Recipe:
    """One reference training recipe.

    ``warmup_steps``: the learning rate rises linearly from 0 to ``lr`` over this many optimiser steps
    (Neural Graphs' ``WarmupLRScheduler``: ``lr * step / warmup_steps``), then stays. ``grad_clip``:
    global gradient-norm clip (``None``: none). ``dropout``: the model's own dropout rate (the models
    read it as their default). ``selection``: which epoch's weights the reference reports.
    ``loss``: the reference's loss where it differs from the task's usual one. ``inputs``: the
    reference's input normalisation as the nearest option of
    :func:`hgutils.weightspace.comparison.prepare_inputs` (``"standardize"``: per entry with the
    training networks' statistics; ``"rms"``: one scale per tensor; ``"none"``: raw weights).
    """

    optimizer: str  # "adam" | "adamw"
    lr: float
    weight_decay: float
    batch_size: int
    epochs: int
    amsgrad: bool = False
    warmup_steps: int = 0
    grad_clip: float | None = None
    dropout: float = 0.0
    selection: str = "best validation score"
    loss: str = ""
    inputs: str = "standardize"
    source: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.optimizer not in ("adam", "adamw"):
            raise ValueError(f"optimizer must be 'adam' or 'adamw'; got {self.optimizer!r}")
        if self.lr <= 0 or self.batch_size < 1 or self.epochs < 1 or self.weight_decay < 0 or self.warmup_steps < 0:
            raise ValueError(f"invalid recipe numbers: {self}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {self.dropout}")
        if self.inputs not in ("standardize", "rms", "none"):
            raise ValueError(f"inputs must be 'standardize', 'rms' or 'none'; got {self.inputs!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_NG = "mkofinas/neural-graphs"
_GMN_INR = Recipe(
    optimizer="adamw",
    lr=1e-3,
    weight_decay=5e-4,
    amsgrad=True,
    batch_size=128,
    epochs=200,
    warmup_steps=1000,
    grad_clip=10.0,
    dropout=0.2,
    selection="best validation accuracy (evaluated every 1,000 steps)",
    inputs="rms",
    source=f"{_NG}: experiments/inr_classification/configs/base.yaml (optimiser, warmup, clip, batch), "
    "scripts/mnist_cls_pna.sh (200 epochs, dropout 0.2), configs/model/pna.yaml",
    note="inputs: one mean and std per weight matrix and bias vector (configs/data/mnist.yaml stats; the means "
    "are ~1e-3 of the stds, so 'rms' is the nearest option); trained with the INR augmentations of "
    "experiments/data.py (translation, rotation, shift, dropout, scale) on raw weights",
)
_GMN_CNN = Recipe(
    optimizer="adamw",
    lr=1e-3,
    weight_decay=5e-4,
    amsgrad=True,
    batch_size=128,
    epochs=300,
    warmup_steps=0,
    grad_clip=10.0,
    dropout=0.0,
    selection="best validation Kendall tau",
    loss="MSE on the accuracy (scripts/cnn_zoo_pna.sh sets torch.nn.MSELoss)",
    inputs="none",
    source=f"{_NG}: experiments/cnn_generalization/configs/base.yaml, scripts/cnn_zoo_pna.sh",
    note="raw weights (configs/data/zoo_cifar_nfn.yaml: normalize false, stats null); the CNN-zoo script uses "
    "hidden 256, the model here keeps 32 (the INR configuration) for CPU cost",
)
_DWS = "AvivNavon/DWSNets"
_DWS_MNIST = Recipe(
    optimizer="adamw",
    lr=5e-3,
    weight_decay=5e-4,
    amsgrad=True,
    batch_size=512,
    epochs=100,
    selection="best validation accuracy (evaluated every epoch)",
    source=f"{_DWS}: experiments/mnist/trainer.py (defaults: lr 5e-3, 100 epochs, batch 512, adamw, hidden 32, "
    "4 hidden DWS layers, BatchNorm, max reduction, sab set layer)",
    note="trained with the INR augmentations of experiments/data.py on raw weights, then per-entry normalisation",
)
_DWS_SSL = Recipe(
    optimizer="adamw",
    lr=5e-3,
    weight_decay=5e-4,
    amsgrad=True,
    batch_size=512,
    epochs=500,
    selection="lowest validation InfoNCE loss",
    source=f"{_DWS}: experiments/ssl/trainer.py (defaults: lr 5e-3, 500 epochs, batch 512 with drop_last, "
    "hidden 16, embedding 16, temperature 0.1)",
    note="pairs each network with one augmented view (shift 0.2 std, dropout 0.5 with rescaling) before "
    "normalisation; a linear regression on the 16-d encoder output gives (a, b)",
)
_NFN = "AllanYangZhou/nfn"
_STAT = Recipe(
    optimizer="adam",
    lr=1e-3,
    weight_decay=0.0,
    batch_size=8,
    epochs=50,
    selection="best validation Kendall tau",
    loss="sigmoid + BCE on the test accuracy",
    inputs="none",
    source=f"{_NFN}: experiments/predict_gen_configs/main.yaml (batch 8, 50 epochs, lr 1e-3, bce), "
    "predict_gen_configs/nfnet/stat.yaml (h_size 1000, dropout 0, sigmoid, normalize false), "
    "experiments/predict_gen.py (Adam, no weight decay)",
)


def _reuse(r: Recipe, why: str) -> Recipe:
    from dataclasses import replace

    return replace(r, note=(why + ("; " + r.note if r.note else "")))


#: ``(model, task) -> Recipe``; ``model`` is the base model name of :data:`~hgutils.weightspace.metanets.MODELS`.
RECIPES: dict[tuple[str, str], Recipe] = {
    ("GMN", "classification"): _GMN_INR,
    ("GMN", "accuracy"): _GMN_CNN,
    ("GMN", "regression"): _reuse(_GMN_INR, "Neural Graphs has no regression run; its INR-classification recipe"),
    ("GMN", "infonce"): _reuse(
        _GMN_INR,
        "Neural Graphs has no self-supervised run; its INR-classification recipe (the DWSNets SSL protocol's "
        "optimiser is AdamW 5e-3, wd 5e-4, 500 epochs, batch 512)",
    ),
    ("DWSNet", "classification"): _DWS_MNIST,
    ("DWSNet", "infonce"): _DWS_SSL,
    ("DWSNet", "regression"): _reuse(_DWS_MNIST, "DWSNets' supervised regression is not run; its MNIST recipe"),
    ("DWSNet", "accuracy"): _reuse(_DWS_MNIST, "DWSNets has no accuracy-prediction run; its MNIST recipe"),
    ("StatNN", "accuracy"): _STAT,
    ("StatNN", "classification"): _reuse(
        _STAT, "NFN runs StatNet only for accuracy prediction; that recipe, cross-entropy instead of BCE"
    ),
    ("StatNN", "regression"): _reuse(_STAT, "NFN runs StatNet only for accuracy prediction; that recipe, MSE"),
    ("StatNN", "infonce"): _reuse(_STAT, "NFN runs StatNet only for accuracy prediction; that recipe"),
}


def recipe_for(model: str, task: str) -> Recipe | None:
    """The reference recipe of base model ``model`` on ``task`` (``None``: the model has no reference recipe)."""
    return RECIPES.get((model, task))


#: how a recipe's learning rate follows a batch size other than its own (:func:`scaled_lr`)
LR_SCALING_RULES: tuple[str, ...] = ("none", "sqrt", "linear")


def scaled_lr(lr: float, batch_size: int, reference_batch_size: int, rule: str = "none") -> float:
    r"""A recipe's learning rate carried to another batch size:
    :math:`\eta' = \eta\,(B / B_\mathrm{ref})^{p}` with :math:`p = 0` (``"none"``), :math:`1/2`
    (``"sqrt"``: the square-root rule for adaptive optimisers such as Adam, Malladi et al. 2022,
    arXiv:2205.10287) or :math:`1` (``"linear"``: Goyal et al. 2017, arXiv:1706.02677, for SGD).

    A smaller batch than the recipe's gives noisier gradients, so the rule lowers the step with it;
    at :math:`B = B_\mathrm{ref}` every rule returns ``lr``."""
    if rule not in LR_SCALING_RULES:
        raise ValueError(f"rule must be one of {LR_SCALING_RULES}; got {rule!r}")
    if lr <= 0 or batch_size < 1 or reference_batch_size < 1:
        raise ValueError(f"need lr > 0 and batch sizes >= 1; got {lr}, {batch_size}, {reference_batch_size}")
    p = {"none": 0.0, "sqrt": 0.5, "linear": 1.0}[rule]
    return float(lr * (batch_size / reference_batch_size) ** p)
