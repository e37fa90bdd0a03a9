"""Training recipes of the baselines as their reference code runs them, as data a training loop can read.

Each :class:`ReferenceRecipe` records the optimiser, learning rate, weight decay, warmup, gradient clipping,
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

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from hgutils.weightspace.augment import REFERENCE_DEFAULTS, WEIGHT_NOISE_DEFAULTS, INRAugmentation

__all__ = [
    "DOCUMENTATION_FIELDS",
    "LR_SCALING_RULES",
    "RECIPES",
    "RECIPE_INPUTS",
    "ReferenceRecipe",
    "as_trained",
    "RecipeFit",
    "fit_recipe_to_run",
    "planned_steps",
    "recipe_batch_and_lr",
    "recipe_for",
    "scaled_lr",
]

#: the input normalisations a recipe can name (:class:`ReferenceRecipe`)
RECIPE_INPUTS: tuple[str, ...] = ("standardize", "per_layer", "none")

#: ReferenceRecipe fields no code reads, each with why (every other field changes how a model trains: tested)
DOCUMENTATION_FIELDS: dict[str, str] = {
    "selection": "every run, with a recipe or not, keeps its best-validation-epoch weights (TrainConfig.restore_best); "
    "the text names the reference's metric and evaluation cadence for the comparison tables",
    "source": "where the recipe was read (repository: files); the results' 'recipe' column quotes it",
    "note": "how the recipe was adapted or what the reference does differently, for the reader",
}


@dataclass(frozen=True)
class ReferenceRecipe:
    """One reference training recipe.

    ``warmup_steps``: the learning rate rises linearly from 0 to ``lr`` over this many optimiser steps
    (Neural Graphs' ``WarmupLRScheduler``: ``lr * step / warmup_steps``), then stays. ``grad_clip``:
    global gradient-norm clip (``None``: none). ``dropout``: the model's own dropout rate (the models
    read it as their default). ``batch_size``: the reference's; a run uses it where the training split
    holds that many networks, else the whole split with the learning rate carried over by
    :func:`scaled_lr` (:func:`recipe_batch_and_lr`). ``inputs``: the reference's input normalisation
    (:data:`RECIPE_INPUTS`): ``"standardize"`` per entry with the training networks' statistics (DWSNets,
    :func:`hgutils.weightspace.inputs.prepare_inputs`); ``"per_layer"`` one mean and std per weight
    and bias tensor of the training networks, inside the model on raw weights (Neural Graphs'
    ``GraphConstructor``; :meth:`hgutils.weightspace.metanets.gmn.GMN.fit_inputs`); ``"none"`` raw weights.
    ``augment``: the weight-space augmentation of every training batch (:mod:`hgutils.weightspace.augment`),
    ``None`` for none. ``selection``, ``source`` and ``note`` document the reference
    (:data:`DOCUMENTATION_FIELDS`).
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
    inputs: str = "standardize"
    augment: INRAugmentation | None = None
    source: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.optimizer not in ("adam", "adamw"):
            raise ValueError(f"optimizer must be 'adam' or 'adamw'; got {self.optimizer!r}")
        if self.lr <= 0 or self.batch_size < 1 or self.epochs < 1 or self.weight_decay < 0 or self.warmup_steps < 0:
            raise ValueError(f"invalid recipe numbers: {self}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {self.dropout}")
        if self.inputs not in RECIPE_INPUTS:
            raise ValueError(f"inputs must be one of {RECIPE_INPUTS}; got {self.inputs!r}")
        if self.augment is not None and not isinstance(self.augment, INRAugmentation):
            raise ValueError(f"augment must be an INRAugmentation or None; got {self.augment!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_NG = "mkofinas/neural-graphs"
_GMN_INR = ReferenceRecipe(
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
    inputs="per_layer",
    augment=REFERENCE_DEFAULTS,
    source=f"{_NG}: experiments/inr_classification/configs/base.yaml (optimiser, warmup, clip, batch), "
    "scripts/mnist_cls_pna.sh (200 epochs, dropout 0.2), configs/model/pna.yaml",
    note="inputs: one mean and std per weight and bias tensor of the training INRs (configs/data/mnist.yaml stats, "
    "dataset/compute_mnist_statistics.py), applied in nn/graph_constructor.py to raw weights; trained with the INR "
    "augmentations of experiments/data.py (translation, rotation, shift, dropout, scale) on raw weights",
)
_GMN_CNN = ReferenceRecipe(
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
    inputs="none",
    augment=WEIGHT_NOISE_DEFAULTS,
    source=f"{_NG}: experiments/cnn_generalization/configs/base.yaml, scripts/cnn_zoo_pna.sh, "
    "configs/data/zoo_cifar_nfn.yaml, experiments/data_generalization.py",
    note="raw weights (configs/data/zoo_cifar_nfn.yaml: normalize false, stats null); training augmentation: "
    "Gaussian noise 0.1 std and dropout 0.01 (data_generalization.py _augment); the CNN-zoo script uses "
    "hidden 256, the model here keeps 32 (the INR configuration) for CPU cost; the reference's loss is MSE on "
    "sigmoid(output) (scripts/cnn_zoo_pna.sh), here BCE on it as for every model on the accuracy task",
)
_DWS = "AvivNavon/DWSNets"
_DWS_MNIST = ReferenceRecipe(
    optimizer="adamw",
    lr=5e-3,
    weight_decay=5e-4,
    amsgrad=True,
    batch_size=512,
    epochs=100,
    selection="best validation accuracy (evaluated every epoch)",
    augment=REFERENCE_DEFAULTS,
    source=f"{_DWS}: experiments/mnist/trainer.py (defaults: lr 5e-3, 100 epochs, batch 512, adamw, hidden 32, "
    "4 hidden DWS layers, BatchNorm, max reduction, sab set layer)",
    note="trained with the INR augmentations of experiments/data.py (--augmentation true by default) on raw "
    "weights, then per-entry normalisation",
)
_DWS_SSL = ReferenceRecipe(
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
    "normalisation (experiments/ssl/data/inr_dataset.py: the view is the only augmentation, the anchor is left "
    "as it is); a linear regression on the 16-d encoder output gives (a, b)",
)
_NFN = "AllanYangZhou/nfn"
_STAT = ReferenceRecipe(
    optimizer="adam",
    lr=1e-3,
    weight_decay=0.0,
    batch_size=8,
    epochs=50,
    selection="best validation Kendall tau",
    inputs="none",
    note="loss: sigmoid + BCE on the test accuracy (the accuracy task's loss for every model)",
    source=f"{_NFN}: experiments/predict_gen_configs/main.yaml (batch 8, 50 epochs, lr 1e-3, bce), "
    "predict_gen_configs/nfnet/stat.yaml (h_size 1000, dropout 0, sigmoid, normalize false), "
    "experiments/predict_gen.py (Adam, no weight decay)",
)


def _reuse(r: ReferenceRecipe, why: str, **changes: Any) -> ReferenceRecipe:

    return replace(r, note=(why + ("; " + r.note if r.note else "")), **changes)


_NO_AUG_SSL = "no augmentation of the anchor networks: the InfoNCE views are the augmentation (DWSNets' SSL protocol)"


#: ``(model, task) -> ReferenceRecipe``; ``model`` is the base model name of
#: :data:`~hgutils.weightspace.metanets.MODELS`.
RECIPES: dict[tuple[str, str], ReferenceRecipe] = {
    ("GMN", "classification"): _GMN_INR,
    ("GMN", "accuracy"): _GMN_CNN,
    ("GMN", "regression"): _reuse(_GMN_INR, "Neural Graphs has no regression run; its INR-classification recipe"),
    ("GMN", "infonce"): _reuse(
        _GMN_INR,
        "Neural Graphs has no self-supervised run; its INR-classification recipe (the DWSNets SSL protocol's "
        "optimiser is AdamW 5e-3, wd 5e-4, 500 epochs, batch 512) without its dropout, as DWSNets' SSL trainer runs "
        f"its encoders; {_NO_AUG_SSL}",
        augment=None,
        dropout=0.0,
    ),
    ("DWSNet", "classification"): _DWS_MNIST,
    ("DWSNet", "infonce"): _DWS_SSL,
    ("DWSNet", "regression"): _reuse(_DWS_MNIST, "DWSNets' supervised regression is not run; its MNIST recipe"),
    ("DWSNet", "accuracy"): _reuse(
        _DWS_MNIST,
        "DWSNets has no accuracy-prediction run; its MNIST recipe without the INR augmentations (they move "
        "input coordinates, which a classifier zoo does not have)",
        augment=None,
    ),
    ("StatNN", "accuracy"): _STAT,
    ("StatNN", "classification"): _reuse(
        _STAT, "NFN runs StatNet only for accuracy prediction; that recipe, cross-entropy instead of BCE"
    ),
    ("StatNN", "regression"): _reuse(_STAT, "NFN runs StatNet only for accuracy prediction; that recipe, MSE"),
    ("StatNN", "infonce"): _reuse(_STAT, "NFN runs StatNet only for accuracy prediction; that recipe"),
}


def recipe_for(model: str, task: str) -> ReferenceRecipe | None:
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


def recipe_batch_and_lr(recipe: ReferenceRecipe, n_train: int, rule: str = "sqrt") -> tuple[int, float]:
    r"""The batch size and learning rate a run with ``recipe`` uses on ``n_train`` training networks:
    :math:`B = \min(B_\mathrm{ref}, n_\mathrm{train})` -- the reference's batch where the split holds
    that many networks, else the whole split as one batch -- and :math:`\eta = ` :func:`scaled_lr`
    ``(recipe.lr, B, B_ref, rule)``, which is the recipe's own rate whenever :math:`B = B_\mathrm{ref}`."""
    if n_train < 1:
        raise ValueError(f"n_train must be >= 1; got {n_train}")
    batch = min(recipe.batch_size, int(n_train))
    return batch, scaled_lr(recipe.lr, batch, recipe.batch_size, rule)


@dataclass(frozen=True)
class RecipeFit:
    """A reference recipe as one run uses it (:func:`fit_recipe_to_run`): ``batch_size``, ``lr``,
    ``warmup_steps``, the run's ``planned_steps`` (its ceiling in optimiser steps at that batch) and
    ``notes``, one sentence per rule that changed the recipe (for the results' ``recipe`` column and the
    "as the authors run it" table)."""

    batch_size: int
    lr: float
    warmup_steps: int
    planned_steps: int
    notes: tuple[str, ...] = ()


def planned_steps(n_train: int, batch_size: int, epochs: int | None, max_steps: int | None = None) -> int:
    r"""The optimiser steps a run's ceiling holds: ``max_steps`` when set, else
    :math:`E\,\lceil n_\mathrm{train} / B \rceil` for :math:`E` epochs of batch :math:`B` (the loop keeps the
    last, partial batch)."""
    if max_steps is not None:
        return int(max_steps)
    if epochs is None or epochs < 1 or batch_size < 1 or n_train < 1:
        raise ValueError(f"need epochs, batch_size and n_train >= 1; got {epochs}, {batch_size}, {n_train}")
    return int(epochs) * math.ceil(n_train / batch_size)


def fit_recipe_to_run(
    recipe: ReferenceRecipe,
    n_train: int,
    epochs: int | None,
    shared_batch: int,
    max_steps: int | None = None,
    rule: str = "sqrt",
    step_share: float = 1.0,
    warmup_share: float = 0.05,
) -> RecipeFit:
    r"""The batch, learning rate and warm-up a run with ``recipe`` uses on ``n_train`` training networks
    under a ceiling of ``epochs`` (or ``max_steps``), beside models that train at ``shared_batch``.

    Budgets count optimiser steps. Three rules, each stated and each recorded in ``notes``:

    1. the reference's batch where the split holds that many networks, else the whole split
       (:func:`recipe_batch_and_lr`);
    2. **enough steps**: while the run's ceiling at batch :math:`B` holds fewer than ``step_share`` times the
       optimiser steps of the shared models (:func:`planned_steps` at ``shared_batch``) and
       :math:`B >` ``shared_batch``, :math:`B` is halved (never below ``shared_batch``). A reference batch
       of 512 on a 2,000-network zoo leaves 4 steps per epoch, where the reference had 100 or more on its
       55,000 networks; with ``step_share = 1`` every model's ceiling holds as many optimiser steps as the
       shared budget's. The learning rate follows by :func:`scaled_lr` (``rule``);
    3. **a warm-up that fits the run**: a linear warm-up longer than ``warmup_share`` of the planned steps is
       cut to that share (Neural Graphs' 1,000 steps are 1.2 % of its 86,000-step runs; 5 % still reaches the
       peak learning rate early in ours).
    """
    if not 0.0 <= step_share <= 1.0 or not 0.0 < warmup_share <= 1.0:
        raise ValueError(f"step_share must lie in [0, 1] and warmup_share in (0, 1]; got {step_share}, {warmup_share}")
    if shared_batch < 1:
        raise ValueError(f"shared_batch must be >= 1; got {shared_batch}")
    batch, _ = recipe_batch_and_lr(recipe, n_train, rule)
    notes = []
    if batch < recipe.batch_size:
        notes.append(f"batch {recipe.batch_size} > {n_train} training networks: the whole split")

    def steps(b: int) -> int:
        return planned_steps(n_train, b, epochs, max_steps)

    b0 = batch
    while batch > shared_batch and steps(batch) < step_share * steps(shared_batch):
        batch = max(shared_batch, batch // 2)
    if batch < b0:
        held, shared = steps(b0), steps(shared_batch)
        notes.append(f"batch {b0} -> {batch}: its ceiling held {held:,} steps, under {step_share:g} x {shared:,}")
    lr = scaled_lr(recipe.lr, batch, recipe.batch_size, rule)
    if batch != recipe.batch_size and rule != "none":
        notes.append(f"lr {recipe.lr:g} -> {lr:.3g} ({rule} rule, batch {recipe.batch_size} -> {batch})")
    planned = planned_steps(n_train, batch, epochs, max_steps)
    warmup = recipe.warmup_steps
    if warmup > warmup_share * planned:
        warmup = max(1, round(warmup_share * planned))
        notes.append(
            f"warm-up {recipe.warmup_steps:,} -> {warmup:,} steps ({100 * warmup_share:.3g} % of {planned:,} planned)"
        )
    return RecipeFit(batch, lr, warmup, planned, tuple(notes))


def as_trained(table: Any) -> Any:
    """How each model of a :func:`hgutils.experiments.weightspace_protocol.run_comparison` results table was
    trained, beside its reference recipe: one row per model with the batch size and learning rate
    used (``batch``, ``lr``), the recipe's (``reference batch``, ``reference lr``; empty without a
    recipe), the input normalisation (``inputs``), the training augmentation (``augmentation``) and
    the recipe column of the run (source and mode)."""
    import pandas as pd

    need = {"model", "lr", "batch_size", "inputs", "augment", "recipe"}
    missing = sorted(need - set(table.columns))
    if missing:
        raise ValueError(f"the results table lacks column(s) {missing} (a table of run_comparison)")
    rows = []
    for name in dict.fromkeys(table["model"]):
        r0 = table[table["model"] == name].iloc[0]
        rows.append(
            {
                "model": name,
                "batch": int(r0["batch_size"]),
                "lr": float(r0["lr"]),
                "reference batch": r0.get("reference_batch", ""),
                "reference lr": r0.get("reference_lr", ""),
                "inputs": r0["inputs"],
                "augmentation": r0["augment"],
                "recipe": r0["recipe"],
            }
        )
    return pd.DataFrame(rows)
