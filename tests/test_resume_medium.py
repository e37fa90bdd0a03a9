"""A medium-style run that is interrupted resumes without refitting what had finished.

Notebooks 01-03 spend their minutes in GTH-GMN's selection grid and in the comparison's (model, seed) runs.
A session that is cut off re-executes the notebook: the grid's table and every finished run are read back
from the run cache (:func:`hgutils.repro.cached`), and only the runs that had not finished train again.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from hgutils.experiments import gth_selection as gsel
from hgutils.experiments import nb02_sine_regression as nb02
from hgutils.experiments import weightspace_protocol as cmp


def test_an_interrupted_select_and_compare_resumes_without_refitting(tmp_path, monkeypatch):
    monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path))
    cfg = replace(
        nb02.CONFIG.from_scale("smoke"),
        n_nets=32,
        variants=("GTH-GMN", "StatNN", "NFN_NP"),
        n_seeds=1,
        epochs=1,
        select_steps=2,
        refine_steps=1,
    )
    zoo = nb02.sine_inr_zoo(cfg, scale="smoke")
    target = zoo.meta["target"]
    splits = cmp.make_splits(len(zoo), cfg.val_fraction, cfg.test_fraction, seed=0)
    stages = sys.modules["hgutils.weightspace.tasks.fit_stages"]
    real_train, trained = stages.train, []

    def counting(task, budget, *, desc=None, **kw):
        trained.append(desc)
        if desc == "StatNN s0":  # the comparison's second run: the session is cut off here
            raise KeyboardInterrupt("session cut off")
        return real_train(task, budget, desc=desc, **kw)

    monkeypatch.setattr(stages, "train", counting)
    with pytest.raises(KeyboardInterrupt):
        gsel.select_and_compare(cfg, zoo, "infonce", target, cfg.emb_dim, splits, [0])
    grid = [d for d in trained if d.startswith("GTH-GMN ") and "lr=" in d]
    finished = [d for d in trained if d.startswith("GTH-GMN s0")]
    assert grid and finished and trained[-1] == "StatNN s0"  # the grid and GTH-GMN's run had finished

    trained.clear()

    def recording(task, budget, *, desc=None, **kw):
        trained.append(desc)
        return real_train(task, budget, desc=desc, **kw)

    monkeypatch.setattr(stages, "train", recording)
    selection, run = gsel.select_and_compare(cfg, zoo, "infonce", target, cfg.emb_dim, splits, [0])
    assert trained == ["StatNN s0", "NFN_NP s0"]  # neither the grid nor GTH-GMN's finished run trained again
    assert list(run.table["model"]) == ["GTH-GMN", "StatNN", "NFN_NP"]
    assert len(selection.table) == len(gsel.grid_of(cfg).cells())  # the grid's table, read back whole
