"""The template notebook's driver and the template itself, end to end through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hgutils.experiments import nb00_template as ex
from hgutils.runner import execute

NB = Path(__file__).resolve().parent.parent / "notebooks" / "00_template.ipynb"


def test_roundtrip_errors_grow_with_the_norm_and_stay_small_near_the_origin():
    cfg = ex.CONFIG.from_scale("smoke", n_points=500)
    e = ex.roundtrip_errors(cfg, seed=1)
    assert len(e) == cfg.n_norms - 1 and (e["max"] >= e["median"]).all()
    assert e["max"].iloc[0] < 1e-5 < e["max"].iloc[-1]  # float32 loses digits toward the boundary
    assert list(ex.paper_table(e).columns)[-1].startswith("ours")
    with pytest.raises(ValueError, match="n_points"):
        ex.roundtrip_errors(ex.CONFIG.from_scale("smoke", n_points=0))


def test_the_template_runs_end_to_end_and_writes_its_ledger(tmp_path):
    out = execute(
        NB,
        tmp_path / "00_template.ipynb",
        {"scale": "smoke", "results_dir": str(tmp_path / "res"), "figures_dir": str(tmp_path / "fig")},
    )
    ledger = json.loads((tmp_path / "res" / "smoke" / "00_template" / "claims.json").read_text())
    assert [c["id"] for c in ledger["claims"]] == ["roundtrip_float32", "roundtrip_breakdown"]
    assert ledger["claims"][0]["verdict"] == "holds"
    assert (tmp_path / "fig" / "smoke" / "00_roundtrip_error.png").exists() and out.exists()
