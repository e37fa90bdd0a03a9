"""What :func:`~.run.run_comparison` returns: :class:`ComparisonResult` (the long results table, curves, models)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hgutils.weightspace.inputs import Splits

log = logging.getLogger("hgutils")


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------
def rows_gate(rows: pd.DataFrame) -> dict[str, Any]:
    """The learnability check of one model from its results rows (one per seed, with ``trained``, ``seed``
    and ``gate`` columns): ``{"trained", "reason"}`` -- trained only if every seed passed; the reason of the
    first seed that did not, else of the first seed."""
    bad = rows[~rows["trained"].astype(bool)]
    row = bad.iloc[0] if len(bad) else rows.iloc[0]
    return {"trained": bool(len(bad) == 0), "reason": f"seed {row['seed']}: {row['gate']}"}


@dataclass
class ComparisonResult:
    """Output of :func:`run_comparison`.

    Attributes
    ----------
    table
        One row per (model, seed): ``model, seed, temporal``, the test metrics (``test_accuracy`` /
        ``test_mse`` / ``test_kendall_tau``), validation metrics (``val_*``), the learning rate used
        (``lr``), the learnability check (``trained``, ``gate``), ``best_epoch``, ``epochs_run``,
        ``steps``, ``seconds_per_epoch`` (wall), ``cpu_seconds`` (process CPU time of the whole fit),
        ``prepare_seconds``, and for two-stage GTH-GMN the reconstruction metrics (``recon_*``).
    splits
        The one split every model used.
    models
        The trained model of the first seed, per variant (for figures).
    data
        Prepared input containers, keyed by ``(model class, snapshots)`` (shared between variants).
    outputs
        Test-set predictions of the first seed per variant: ``(true, predicted)`` arrays
        (predicted class / value / accuracy; for InfoNCE encoders the test embeddings).
    curves
        ``curves[model][seed]``: the loop's per-epoch history (training terms, validation metrics);
        two-stage models also ``curves[model + " (stage 1)"]``.
    lr_search
        ``lr_search[model] = {lr: validation score}`` when a learning-rate grid was searched.
    inputs
        How the inputs were prepared (:func:`prepare_inputs`), and the snapshots dropped as constant.
    """

    table: pd.DataFrame
    splits: Splits
    models: dict[str, Any] = field(default_factory=dict)
    data: dict[Any, Any] = field(default_factory=dict)
    outputs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    data_key: dict[str, Any] = field(default_factory=dict)
    curves: dict[str, dict[int, list[dict[str, float]]]] = field(default_factory=dict)
    lr_search: dict[str, dict[float, float]] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)

    def data_for(self, name: str) -> Any:
        """The prepared container variant ``name`` was trained on."""
        return self.data[self.data_key[name]]

    def gate(self, name: str) -> dict[str, Any]:
        """Learnability check of model ``name`` over all its seeds: ``{"trained", "reason", "capped"}``
        -- trained only if every seed passed (the reason of the first seed that did not, else of seed
        0); capped when any seed's run stopped because its budget ran out."""
        rows = self.table[self.table["model"] == name]
        if rows.empty:
            raise ValueError(f"model {name!r} not in the results; have {sorted(set(self.table['model']))}")
        capped = bool(rows["capped"].astype(bool).any()) if "capped" in rows else False
        return {**rows_gate(rows), "capped": capped}

    def gates(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        """:meth:`gate` of every model in ``names`` (for ``Claims.add(..., trained=...)``)."""
        return {n: self.gate(n) for n in names}
