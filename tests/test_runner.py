"""The papermill runner and CLI, exercised on a tiny real notebook (tests/notebooks/tiny_claims.ipynb)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hgutils import runner
from hgutils.__main__ import main

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"


@pytest.fixture()
def nbdir(tmp_path):
    d = tmp_path / "notebooks"
    d.mkdir()
    shutil.copy(TINY, d / "01_tiny.ipynb")
    shutil.copy(TINY, d / "02_other.ipynb")
    shutil.copy(TINY, d / "00_template.ipynb")
    return d


def test_select_notebooks(nbdir):
    assert [p.name for p in runner.numbered_notebooks(nbdir)] == ["01_tiny.ipynb", "02_other.ipynb"]
    assert [p.name for p in runner.select_notebooks("02", nbdir)] == ["02_other.ipynb"]
    assert [p.name for p in runner.select_notebooks("02,01", nbdir)] == ["02_other.ipynb", "01_tiny.ipynb"]
    with pytest.raises(ValueError, match="no notebook matches '07'"):
        runner.select_notebooks("07", nbdir)


def test_parse_values_and_grid():
    assert runner.parse_values("1, 2.5,true,none,abc") == [1, 2.5, True, None, "abc"]
    pts = runner.grid_points({"a": [1, 2], "b": ["x"]})
    assert pts == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    assert runner.point_slug({"lr": 0.1, "name": "a b/c"}) == "lr=0.1__name=a-b-c"
    with pytest.raises(ValueError):
        runner.grid_points({})
    with pytest.raises(ValueError):
        runner.parse_values("  ")


def test_sweep_runs_resumes_and_summarises(tmp_path):
    out = tmp_path / "sweep"
    res = runner.sweep(TINY, {"x": [0.2, 1.0]}, out=out, base={"scale": "smoke"})
    assert len(res.ran) == 2 and not res.skipped and not res.failed
    done = out / "x=0.2" / "run.ipynb"
    first_mtime = done.stat().st_mtime_ns
    # simulate an interruption: one point's output is missing, the other completed
    (out / "x=1.0" / "run.ipynb").unlink()
    res2 = runner.sweep(TINY, {"x": [0.2, 1.0]}, out=out, base={"scale": "smoke"})
    assert [d.name for d in res2.ran] == ["x=1.0"] and [d.name for d in res2.skipped] == ["x=0.2"]
    assert done.stat().st_mtime_ns == first_mtime
    table = res2.table()
    assert "| 0.2 | ok | 0.4" in table and "(fails)" in table and "(holds)" in table
    ledgers = sorted(out.glob("*/smoke/99_tiny/claims.json"))
    assert len(ledgers) == 2
    assert json.loads(ledgers[1].read_text())["claims"][0]["verdict"] == "holds"


def test_failure_names_notebook_and_cell(tmp_path, capsys):
    out = tmp_path / "fail"
    rc = main(["sweep", str(TINY), "-p", "fail", "true", "--out", str(out)])
    assert rc == 1
    err = capsys.readouterr().err
    assert (
        "tiny_claims.ipynb: cell 3 of the executed copy (first line: `import numpy as np`) raised "
        "RuntimeError: failure requested" in err
    )
    assert not (out / "fail=true" / "run.ipynb").exists()  # a failed point is not "complete"
    assert (out / "fail=true" / "run.failed.ipynb").exists()


def test_reproduce_writes_executed_copy_and_claims(nbdir, tmp_path, monkeypatch):
    out = tmp_path / "results"
    recs = runner.reproduce("smoke", "01", "cpu", out, notebook_dir=nbdir)
    assert [r.ok for r in recs] == [True]
    assert (out / "smoke" / "01_tiny.ipynb").exists()
    md = runner.write_claims("smoke", out)
    assert "| 99_tiny | twice-x |" in md and "**holds**" in md
    assert (out / "smoke" / "CLAIMS.md").read_text() == md


def test_claims_update_readme(tmp_path):
    out = tmp_path / "results"
    from hgutils.repro import Claims

    c = Claims("05_x", "medium")
    c.add("k", "s", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
    c.save(out / "medium" / "05_x")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{runner.README_START}\nstale table\n{runner.README_END}\noutro\n")
    runner.write_claims("medium", out, update_readme=True, readme=readme)
    text = readme.read_text()
    assert "stale table" not in text and "| 05_x | k |" in text and text.endswith("outro\n")
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="no <!-- CLAIMS:START -->"):
        runner.write_claims("medium", out, update_readme=True, readme=readme)


def test_cli_errors(capsys):
    assert main(["reproduce", "--only", "77", "--scale", "smoke"]) == 2
    assert "no notebook matches '77'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--scale", "huge"])
