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
    assert [p.name for p in runner.select_notebooks(None, nbdir)] == ["01_tiny.ipynb", "02_other.ipynb"]
    assert [p.name for p in runner.select_notebooks("02", nbdir)] == ["02_other.ipynb"]
    assert [p.name for p in runner.select_notebooks("02,01", nbdir)] == ["02_other.ipynb", "01_tiny.ipynb"]
    # the template is never part of "all", but an explicit 00 selects it
    assert [p.name for p in runner.select_notebooks("00", nbdir)] == ["00_template.ipynb"]
    assert runner.resolve_notebook("00", nbdir).name == "00_template.ipynb"
    with pytest.raises(ValueError, match="no notebook matches '07'"):
        runner.select_notebooks("07", nbdir)
    for empty in ("", " ", ",", []):
        with pytest.raises(ValueError, match="at least one notebook"):
            runner.select_notebooks(empty, nbdir)


def test_parse_values_and_grid():
    assert runner.parse_values("1, 2.5,true,none,abc") == [1, 2.5, True, None, "abc"]
    pts = runner.grid_product({"a": [1, 2], "b": ["x"]})
    assert pts == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    slug = runner.point_slug({"lr": 0.1, "name": "a b/c"})
    assert slug.startswith("lr=0.1__name=a-b-c~") and len(slug) == len("lr=0.1__name=a-b-c~") + 8
    assert runner.point_slug({"ds": ("cifar10", "cifar100")}) == "ds=cifar10+cifar100"
    with pytest.raises(ValueError):
        runner.grid_product({})
    with pytest.raises(ValueError, match="more than once"):
        runner.grid_product({"a": [1, 1]})
    with pytest.raises(ValueError):
        runner.parse_values("  ")


def test_sweep_runs_resumes_and_summarises(tmp_path):
    out = tmp_path / "sweep"
    res = runner.sweep(TINY, {"x": [0.2, 1.0]}, out=out, scale="smoke", echo=lambda s: None)
    assert len(res.ran) == 2 and not res.skipped and not res.failed
    done = out / "smoke" / "x=0.2" / "run.ipynb"
    first_mtime = done.stat().st_mtime_ns
    # simulate an interruption: one point's output is missing, the other completed
    (out / "smoke" / "x=1.0" / "run.ipynb").unlink()
    res2 = runner.sweep(TINY, {"x": [0.2, 1.0]}, out=out, scale="smoke", echo=lambda s: None)
    assert [d.name for d in res2.ran] == ["x=1.0"] and [d.name for d in res2.skipped] == ["x=0.2"]
    assert done.stat().st_mtime_ns == first_mtime
    assert "at scale smoke: 1 ran, 1 skipped" in res2.summary()
    table = res2.table()
    assert "| smoke | 0.2 | skipped | 0.4" in table and "(contradicted)" in table and "(holds)" in table
    ledgers = sorted(out.glob("smoke/*/smoke/99_tiny/claims.json"))
    assert len(ledgers) == 2
    assert json.loads(ledgers[1].read_text())["claims"][0]["verdict"] == "holds"


def test_failure_names_notebook_and_cell(tmp_path, capsys):
    out = tmp_path / "fail"
    rc = main(["sweep", str(TINY), "-p", "fail", "true", "--out", str(out)])
    assert rc == 1
    err = capsys.readouterr().err
    assert (
        "tiny_claims.ipynb: cell 3 of the executed copy (first line: `import time`) raised "
        "RuntimeError: failure requested" in err
    )
    point = out / "smoke" / "fail=true"
    assert not (point / "run.ipynb").exists() and not (point / "run.json").exists()  # failed is not "complete"
    assert (point / "run.failed.ipynb").exists()
    assert str(point / "run.failed.ipynb") in err


def test_claims_update_readme(tmp_path):
    out = tmp_path / "results"
    from hgutils.ledger import Claims

    c = Claims("05_x", "medium")
    c.add("k", "s", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
    c.save(out / "medium" / "05_x")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{runner.README_START}\nstale table\n{runner.README_END}\noutro\n")
    runner.write_claims("medium", out, update_readme=True, readme=readme)
    text = readme.read_text()
    assert "stale table" not in text and "| 05_x | 1 | 0 | 0 | 0 | 0 | 0 | 1 |" in text and text.endswith("outro\n")
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="no <!-- CLAIMS:START -->"):
        runner.write_claims("medium", out, update_readme=True, readme=readme)


def test_claims_refuses_a_smoke_table_for_the_medium_readme_section(tmp_path, capsys):
    from hgutils.ledger import Claims

    out = tmp_path / "results"
    readme = tmp_path / "README.md"
    original = f"intro\n{runner.README_START}\nmedium table\n{runner.README_END}\n"
    readme.write_text(original)
    c = Claims("05_x", "smoke")
    c.add("k", "s", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
    c.save(out / "smoke" / "05_x")
    with pytest.raises(ValueError, match="refusing to write a smoke table"):
        runner.write_claims("smoke", out, update_readme=True, readme=readme)
    assert main(["claims", "--scale", "smoke", "--out", str(out), "--update-readme"]) == 2
    assert "refusing to write a smoke table" in capsys.readouterr().err
    # a smoke ledger sitting under medium/ is not a medium result either
    c.save(out / "medium" / "05_x")
    with pytest.raises(ValueError, match="records scale 'smoke', not 'medium'"):
        runner.write_claims("medium", out, update_readme=True, readme=readme)
    # and with no medium ledger at all the README table is not emptied
    shutil.rmtree(out / "medium")
    with pytest.raises(ValueError, match="refusing to empty"):
        runner.write_claims("medium", out, update_readme=True, readme=readme)
    assert readme.read_text() == original


def test_cli_errors(capsys):
    assert main(["reproduce", "--only", "77", "--scale", "smoke"]) == 2
    assert "no notebook matches '77'" in capsys.readouterr().err
    assert main(["reproduce", "--only", "", "--scale", "smoke"]) == 2
    assert "--only needs at least one notebook" in capsys.readouterr().err
    assert main(["sweep", "05", "-p", "n_seeds", "1", "--jobs", "0"]) == 2
    assert "--jobs must be an integer >= 1" in capsys.readouterr().err
    # argparse's own errors: one line, no usage block, exit status 2
    assert main(["reproduce", "--scale", "huge"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --scale: invalid choice: 'huge'") and err.count("\n") == 1
    assert main(["sweep"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the following arguments are required") and err.count("\n") == 1
    assert main(["reproduce", "--help"]) == 0 and "--device" in capsys.readouterr().out
