"""The shared comparison protocol of the weight-space notebooks (01-03): one split, every model, same budget.

1. build a zoo (:mod:`hgutils.weightspace.zoo`: INR images, sine INRs, or small classifiers);
2. split it **once** (:func:`~hgutils.weightspace.inputs.make_splits`, class-stratified when there are
   labels); every model and every seed uses these same train / validation / test networks;
3. train every model variant (:data:`.variants.VARIANTS`: GTH-GMN, its ablations, the baselines, in
   final-checkpoint and trajectory versions) with the one shared loop
   (:func:`hgutils.weightspace.tasks.fit`), once per seed -- the seed changes the model's
   initialisation, the batch order and the augmentations, never the split;
4. collect a long results table (one row per model and seed, :func:`.run.run_comparison`), summarise
   it as mean ± std over seeds (:func:`.tables.summarize`), compare models over seeds
   (:func:`.tables.difference`, the verdict rule of :mod:`hgutils.verdicts`) and set it beside a
   paper's table (:func:`.tables.paper_rows`, shown by :func:`hgutils.ledger.paper_table`).

By job: :mod:`.variants` (the models), :mod:`.settings` (what every notebook sets the same way),
:mod:`.run` (the comparison) and :mod:`.runner` (its worker), :mod:`.results` (what it returns),
:mod:`.tables` (its tables); the split and the input preparation are the library's
:mod:`hgutils.weightspace.inputs`. The notebooks import this package as ``cmp``.
"""

from __future__ import annotations

from hgutils.experiments.weightspace_protocol.results import ComparisonResult
from hgutils.experiments.weightspace_protocol.run import run_comparison
from hgutils.experiments.weightspace_protocol.settings import ComparisonSettings, RunSettings
from hgutils.experiments.weightspace_protocol.tables import (
    best_model,
    difference,
    paper_rows,
    per_seed,
    protocol_table,
    recon_table,
    run_lengths,
    summarize,
)
from hgutils.experiments.weightspace_protocol.variants import (
    RECIPE_MODES,
    SYMMETRY_RESPECTING,
    VARIANTS,
    Variant,
    build_variant,
    variant_config,
)
from hgutils.weightspace.inputs import INPUTS, Splits, constant_snapshots, make_splits, prepare_inputs

__all__ = [
    "INPUTS",
    "RECIPE_MODES",
    "SYMMETRY_RESPECTING",
    "VARIANTS",
    "ComparisonResult",
    "ComparisonSettings",
    "RunSettings",
    "Splits",
    "Variant",
    "best_model",
    "build_variant",
    "constant_snapshots",
    "difference",
    "make_splits",
    "paper_rows",
    "per_seed",
    "prepare_inputs",
    "protocol_table",
    "recon_table",
    "run_comparison",
    "run_lengths",
    "summarize",
    "variant_config",
]
