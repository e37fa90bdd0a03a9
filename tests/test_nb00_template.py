"""The template notebook's driver and the template itself, end to end through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hgutils.experiments import nb00_template as ex
from hgutils.ledger import Claims, paper_table
from hgutils.runner import execute

NB = Path(__file__).resolve().parent.parent / "notebooks" / "00_template.ipynb"


def test_roundtrip_errors_grow_with_the_norm_and_stay_small_near_the_origin():
    cfg = ex.CONFIG.from_scale("smoke", n_points=500)
    e = ex.roundtrip_errors(cfg, seed=1)
    assert len(e) == cfg.n_norms - 1 and (e["max"] >= e["median"]).all()
    assert e["max"].iloc[0] < 1e-5 < e["max"].iloc[-1]  # float32 loses digits toward the boundary
    table = paper_table(ex.paper_rows(e), what="claim", ours="ours (max relative error, float32)")
    assert list(table.columns) == ["claim", "paper", "paper's source", "ours (max relative error, float32)"]
    with pytest.raises(ValueError, match="n_points"):
        ex.roundtrip_errors(ex.CONFIG.from_scale("smoke", n_points=0))


def test_one_function_per_claim_id():
    e = ex.roundtrip_errors(ex.CONFIG.from_scale("smoke", n_points=200), seed=0)
    claims = Claims("00_template", "smoke")
    ex.claim_roundtrip_float32(claims, e)
    ex.claim_roundtrip_breakdown(claims, e)
    float32, breakdown = claims.rows
    assert (float32.id, float32.verdict) == ("roundtrip_float32", "holds")
    assert breakdown.id == "roundtrip_breakdown" and breakdown.ours == float(e.loc[e["max"] >= 1e-4, "norm"].min())
    none = Claims("00_template", "smoke")  # no tested norm breaks the round trip: nothing to report
    ex.claim_roundtrip_breakdown(none, e[e["norm"] <= 1.0])
    assert none.rows[0].ours is None


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
