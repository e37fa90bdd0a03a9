"""A reconstruction report says in words which metrics beat their baseline and which do not: the user's
six held-out MLPs whose GTH-GMN reconstruction read link AUC 0.467 and sign accuracy 0.456 against a
majority of 0.525 are reported as worse than chance and the majority sign, not left as bare numbers."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

from hgutils.experiments import nb07_training_geometry as nb07
from hgutils.experiments import nb08_your_own_networks as nb08
from hgutils.experiments.weightspace_protocol import recon_table
from hgutils.weightspace.metanets.gth_gmn import (
    RECON_BASELINES,
    baseline_phrase,
    baseline_sentence,
    compare_to_baselines,
)
from hgutils.weightspace.metanets.gth_gmn.recon_baselines import BEATS, NOT_RESOLVED, WORSE


def _learned_nothing(n: int = 6) -> pd.DataFrame:
    """Six held-out networks read by a reconstruction that learned nothing (link AUC mean 0.467, sign accuracy
    0.456 against a per-block majority of 0.525), except the magnitudes."""
    rng = np.random.default_rng(0)
    jitter = 0.004 * rng.standard_normal((4, n))
    return pd.DataFrame(
        {
            "network": range(n),
            "link_auc": 0.467 + jitter[0] - jitter[0].mean(),
            "chance": 0.5,
            "sign_acc": 0.456 + jitter[1] - jitter[1].mean(),
            "sign_majority": 0.525 + jitter[2] - jitter[2].mean(),
            "mag_r2": 0.2 + jitter[3],
            "mag_r2_block_mean": 0.09,
        }
    )


def test_a_reconstruction_that_learned_nothing_is_said_to_be_worse_than_its_baselines():
    versus, sentence = nb08.reconstruction_report(_learned_nothing())
    assert versus["metric"].tolist() == ["link AUC", "sign accuracy", "magnitude R²"]
    assert versus["outcome"].tolist() == [WORSE, WORSE, BEATS]
    assert versus["baseline value"].tolist() == [0.5, 0.525, 0.09]
    assert sentence.startswith("Over 6 held-out networks: link AUC 0.467 is worse than chance (0.500); ")
    assert "sign accuracy 0.456 is worse than the per-block majority sign (0.525)" in sentence
    assert sentence.endswith(
        "GTH-GMN's reconstruction beats its baseline on magnitude R² only; it does not beat it on link AUC and "
        "sign accuracy."
    )


def test_a_reconstruction_that_beats_none_and_one_that_beats_all_say_so():
    nothing = _learned_nothing().assign(mag_r2=0.05)
    assert "beats none of its baselines: it has learned nothing" in nb08.reconstruction_report(nothing)[1]
    good = _learned_nothing().assign(link_auc=lambda t: t["link_auc"] + 0.3, sign_acc=lambda t: t["sign_acc"] + 0.2)
    versus, sentence = nb08.reconstruction_report(good)
    assert versus["beats"].all() and sentence.endswith("GTH-GMN's reconstruction beats every baseline.")
    assert baseline_phrase(versus) == "beats every baseline"


def test_a_difference_within_two_standard_errors_is_not_a_win():
    noisy = pd.DataFrame({"link_auc": [0.45, 0.60, 0.48, 0.58], "sign_acc": 0.5, "sign_majority": 0.5})
    versus = compare_to_baselines(noisy)
    assert versus.set_index("metric").loc["link AUC", "outcome"] == NOT_RESOLVED
    assert not versus["beats"].any()
    assert baseline_phrase(versus) == "beats none of its baselines"


def test_one_pooled_measurement_is_judged_without_a_standard_error_and_link_bce_is_lower_better():
    """Notebook 07 pools its read networks into one metrics dict: each metric is simply above its baseline
    or not, and the report says there is no standard error."""
    pooled = {"link_bce": 1.0, "link_auc": 0.602, "sign_acc": 0.518, "sign_majority": 0.54, "mag_r2": 0.276}
    pooled["mag_r2_block_mean"] = 0.494
    versus = compare_to_baselines(pooled)
    assert versus["beats"].tolist() == [True, True, False, False]  # BCE 1.0 < 2 ln 2 beats the uninformative decoder
    assert math.isclose(versus["baseline value"].iloc[0], round(2 * math.log(2), 3))
    sentence = baseline_sentence(versus)
    assert sentence.startswith("One pooled measurement (no standard error): ")
    assert sentence.endswith("it does not beat it on sign accuracy and magnitude R².")
    assert baseline_phrase(versus) == "does not beat its baseline on sign accuracy, magnitude R²"


def test_every_metric_of_the_reconstruction_has_a_baseline_in_words():
    assert {b.metric for b in RECON_BASELINES} >= {"link_bce", "link_auc", "sign_acc", "mag_r2"}
    assert all(b.name and b.baseline_name for b in RECON_BASELINES)
    assert compare_to_baselines(pd.DataFrame({"other": [1.0]})).empty
    assert baseline_sentence(pd.DataFrame()).endswith("no reconstruction metric was measured.")


def test_the_protocols_reconstruction_table_names_per_model_what_does_not_beat_its_baseline():
    rows = []
    for seed in range(3):
        rows.append(
            {"model": "GTH-GMN (two-stage, frozen)", "seed": seed, "recon_link_bce": 1.2 + 0.01 * seed}
            | {"recon_link_auc": 0.8 + 0.01 * seed, "recon_sign_acc": 0.50 + 0.001 * seed}
            | {"recon_sign_majority": 0.56 + 0.002 * seed, "recon_mag_r2": 0.3, "recon_mag_r2_block_mean": 0.1}
        )
    rows.append({"model": "StatNN", "seed": 0, "recon_link_auc": np.nan})
    t = recon_table(SimpleNamespace(table=pd.DataFrame(rows)))
    row = t.set_index("model").loc["GTH-GMN (two-stage, frozen)"]
    assert row["against the baselines"] == "does not beat its baseline on sign accuracy"
    assert row["sign_acc baseline"] == "0.562"  # the mean of 0.560, 0.562, 0.564
    assert t["model"].tolist() == ["GTH-GMN (two-stage, frozen)", "uninformative decoder"]


def test_notebook_07s_encoder_table_says_which_metrics_do_not_beat_their_baseline():
    log = SimpleNamespace(history=[{}, {}], best_epoch=1, describe=lambda: "stopped on its plateau")
    recon = {"link_bce": 1.9, "link_auc": 0.6, "sign_acc": 0.5, "sign_majority": 0.55}
    run = SimpleNamespace(
        log=log, split={"train": [0], "val": [1], "read": [2, 3]}, gate={"trained": True}, recon=recon
    )
    row = nb07.encoder_table(run).iloc[0]
    assert row["against the baselines"] == "does not beat its baseline on link BCE, sign accuracy"
