"""Resume only on an equal key; outputs under the run's root; reproduce plans, resumes and publishes on request."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import nbformat

from hgutils import runner
from hgutils.__main__ import main
from hgutils.ledger import Claims
from hgutils.presets import Preset
from hgutils.repro import REPO_ROOT

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
QUIET = {"echo": lambda s: None}


def _hidden(root: Path) -> list[Path]:
    """Temporary or partial files a run must not leave behind."""
    return [p for p in root.rglob("*") if p.name.startswith(".") or ".running" in p.name or ".incoming" in p.name]


def test_a_smoke_result_is_not_reused_at_medium_and_a_changed_notebook_reruns(tmp_path):
    nb = tmp_path / "tiny.ipynb"
    shutil.copy(TINY, nb)
    out = tmp_path / "sweep"
    repo_fig = REPO_ROOT / "figures" / "smoke" / "99_tiny_bar.svg"
    repo_fig_before = repo_fig.exists()

    smoke = runner.sweep(nb, {"x": [0.5]}, scale="smoke", out=out, **QUIET)
    assert [d.name for d in smoke.ran] == ["x=0.5"]
    point = out / "smoke" / "x=0.5"
    # every output of the point lies under --out: executed copy, ledger, figure
    assert (point / "run.ipynb").exists() and (point / "smoke" / "99_tiny" / "claims.json").exists()
    assert (point / "figures" / "smoke" / "99_tiny_bar.svg").read_text().startswith("<svg")
    assert repo_fig.exists() == repo_fig_before  # nothing written into the repository's figures/
    record = json.loads((point / "run.json").read_text())
    assert record["key"]["scale"] == "smoke" and record["key"]["parameters"] == {"scale": "smoke", "x": 0.5}
    assert record["key"]["notebook_code"] and record["key"]["hgutils"]["source"]

    # the same grid at medium is not "done": it runs, beside the smoke result, and says so
    medium = runner.sweep(nb, {"x": [0.5]}, scale="medium", out=out, **QUIET)
    assert [d.name for d in medium.ran] == ["x=0.5"] and not medium.skipped
    assert "at scale medium: 1 ran, 0 skipped" in medium.summary() and "| medium | 0.5 | ran |" in medium.table()
    assert Claims.load(out / "medium" / "x=0.5" / "medium" / "99_tiny" / "claims.json").scale == "medium"
    assert Claims.load(point / "smoke" / "99_tiny" / "claims.json").scale == "smoke"
    again = runner.sweep(nb, {"x": [0.5]}, scale="medium", out=out, **QUIET)
    assert [d.name for d in again.skipped] == ["x=0.5"] and not again.ran

    # a different fixed parameter is a different key (no execution needed to see it)
    mpoint = out / "medium" / "x=0.5"
    params = {"scale": "medium", "x": 0.5}
    assert runner.is_complete(mpoint / "run.json", runner.run_key("tiny", nb.read_bytes(), "medium", params), mpoint)
    other = runner.run_key("tiny", nb.read_bytes(), "medium", params | {"seed": 1})
    assert not runner.is_complete(mpoint / "run.json", other, mpoint)

    # editing markdown or outputs keeps the result; changing a line of code reruns it
    book = nbformat.read(nb, as_version=4)
    book.cells[0].source += "\n\nMore prose."
    nbformat.write(book, nb)
    assert runner.sweep(nb, {"x": [0.5]}, scale="medium", out=out, **QUIET).skipped
    book.cells[3].source = book.cells[3].source.replace("2x exceeds 1", "2x is larger than 1")
    nbformat.write(book, nb)
    changed = runner.sweep(nb, {"x": [0.5]}, scale="medium", out=out, **QUIET)
    assert [d.name for d in changed.ran] == ["x=0.5"]
    ledger = Claims.load(mpoint / "medium" / "99_tiny" / "claims.json")
    assert ledger.rows[0].statement == "2x is larger than 1"
    assert not _hidden(out)


@dataclass(frozen=True)
class CostedTiny(Preset):
    """The tiny notebook's preset with a recorded cost, as a notebook's ``CONFIG`` would carry it."""

    x: float = 1.0
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "medium": {}, "paper": {}}
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 12.0}


def test_reproduce_plans_resumes_forces_and_publishes_only_on_request(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    shutil.copy(TINY, nbdir / "00_template.ipynb")
    shutil.copy(TINY, nbdir / "01_tiny.ipynb")
    out, repo = tmp_path / "runs", tmp_path / "repo"
    cli = ["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out), "--only", "00"]

    # the template runs when asked for explicitly; -p gives a one-off override
    assert main([*cli, "-p", "x", "0.7"]) == 0
    text = capsys.readouterr().out
    assert "reproduce at scale smoke: 1 notebook(s)" in text and "1. 00_template" in text
    assert "[1/1] 00_template done in" in text and "elapsed" in text
    executed = out / "smoke" / "00_template.ipynb"
    assert executed.exists() and (out / "smoke" / "00_template.run.json").exists()
    ledger = Claims.load(out / "smoke" / "99_tiny" / "claims.json")
    assert abs(ledger.rows[0].ours - 1.4) < 0.01
    assert (out / "figures" / "smoke" / "99_tiny_bar.svg").exists()
    assert (out / "smoke" / "CLAIMS.md").exists()
    mtime = executed.stat().st_mtime_ns

    # resume: complete for this scale and code -> skipped, with the recorded cost in the plan
    res = runner.reproduce(
        "smoke", "00", out=out, params={"x": 0.7}, notebook_dir=nbdir, preset_lookup=lambda nb: CostedTiny
    )
    assert [r.status for r in res.records] == ["skipped"]
    text = capsys.readouterr().out
    assert "12 min (recorded cost)" in text and "skip: complete for this scale and code" in text
    assert executed.stat().st_mtime_ns == mtime
    assert not repo.exists()  # nothing published unless asked

    # --force reruns; --publish copies the executed notebook (cleaned), ledgers, tables and figures into the repo
    res = runner.reproduce(
        "smoke", "00", out=out, params={"x": 0.7}, notebook_dir=nbdir, force=True, publish=True, repo_root=repo, **QUIET
    )
    assert [r.status for r in res.records] == ["ran"] and executed.stat().st_mtime_ns != mtime
    published = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())
    assert published == [
        "figures/smoke/99_tiny_bar.svg",
        "results/smoke/00_template.ipynb",
        "results/smoke/99_tiny/claims.json",
        "results/smoke/CLAIMS.md",
    ]
    assert "| 99_tiny | twice-x |" in (repo / "results" / "smoke" / "CLAIMS.md").read_text()
    # the published notebook keeps its outputs; the run's staging paths and timings are gone
    from hgutils.notebook_tools import find_problems
    from hgutils.runner.machine_paths import find_machine_paths
    from hgutils.runner.notebook_cleaning import is_clean

    text = (repo / "results" / "smoke" / "00_template.ipynb").read_text()
    assert "hgutils-job-" in executed.read_text() and "hgutils-job-" not in text
    assert not find_machine_paths(text) and '"duration"' not in text and '"start_time"' not in text
    book = nbformat.reads(text, as_version=4)
    assert is_clean(book) and find_problems(book, "00_template") == []
    assert "twice-x" in "".join(o.get("text", "") for o in book.cells[-1].outputs)
    injected = next(c for c in book.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert 'results_dir = "results"' in injected.source and "x = 0.7" in injected.source
    assert not _hidden(out)


def test_output_dirs_keeps_figures_beside_an_explicit_results_dir(tmp_path):
    from hgutils.repro import output_dirs

    res, fig = output_dirs("05_x", "smoke", tmp_path / "r")
    assert res == tmp_path / "r" / "smoke" / "05_x" and fig == tmp_path / "r" / "figures" / "smoke"
    res, fig = output_dirs("05_x", "smoke", tmp_path / "r", tmp_path / "f")
    assert fig == tmp_path / "f" / "smoke"
