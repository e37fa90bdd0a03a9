"""The claims report (:mod:`hgutils.runner.claims_report`): ``CLAIMS.md`` holds every claim, the README
only the per-notebook verdict counts of the published medium run, and only medium updates the README."""

from __future__ import annotations

import pytest

from hgutils import runner
from hgutils.__main__ import main
from hgutils.ledger import Claims
from hgutils.runner.claims_report import (
    PUBLISHED_ROOT,
    README_END,
    README_START,
    collect_claims,
    notebook_linker,
    readme_summary_markdown,
)
from hgutils.runner.notebooks import REPO_ROOT


def _ledger(out, notebook: str, scale: str = "medium") -> None:
    c = Claims(notebook, scale)
    c.add("k-holds", "a statement that holds", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
    c.add("k-fails", "a statement that fails", paper=1, ours=0, criterion="ours > paper", holds=False, source="p")
    c.save(out / scale / notebook)


def _section(text: str) -> str:
    return text.split(README_START, 1)[1].split(README_END, 1)[0]


def test_update_readme_writes_only_the_per_notebook_summary(tmp_path):
    out = tmp_path / "results"
    _ledger(out, "05_x")
    _ledger(out, "06_y")
    (out / "medium" / "05_x.ipynb").write_text("{}")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_START}\nstale table\n{README_END}\noutro\n")
    runner.write_claims("medium", out, update_readme=True, readme=readme)
    text = readme.read_text()
    section = _section(text)
    assert text.startswith(f"intro\n{README_START}\n") and text.endswith(f"{README_END}\noutro\n")
    assert "stale table" not in section
    # one row per notebook with its counts, linked to the published notebook where there is one
    assert "| [05_x](results/medium/05_x.ipynb) | 1 | 1 | 0 | 0 | 0 | 0 | 2 |" in section
    assert "| 06_y | 1 | 1 | 0 | 0 | 0 | 0 | 2 |" in section
    assert "| **all** | **2** | **2** | **0** | **0** | **0** | **0** | **4** |" in section
    assert "[results/medium/CLAIMS.md](results/medium/CLAIMS.md)" in section
    # no claim row: statements and criteria stay in CLAIMS.md
    assert "k-holds" not in section and "a statement that fails" not in section and "ours > paper" not in section
    claims_md = (out / "medium" / "CLAIMS.md").read_text()
    assert "| [05_x](05_x.ipynb) | k-holds | **holds** | a statement that holds |" in claims_md
    assert "| 06_y | k-fails | **contradicted** | a statement that fails |" in claims_md


def test_update_readme_with_a_smoke_scale_says_only_medium_updates_the_readme(tmp_path, capsys):
    readme_before = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    # no smoke ledger in the root read (an nbval run leaves smoke ledgers in the repo's results/, so an
    # empty root of its own): the scale is refused first
    empty = tmp_path / "empty"
    assert not collect_claims("smoke", empty)
    assert main(["claims", "--scale", "smoke", "--out", str(empty), "--update-readme"]) == 2
    err = capsys.readouterr().err
    assert "only the medium ledgers update the README" in err and "no smoke ledgers" not in err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert (REPO_ROOT / "README.md").read_text(encoding="utf-8") == readme_before
    assert not empty.exists()
    # with smoke ledgers present, the same refusal, and nothing is written
    out = tmp_path / "results"
    _ledger(out, "05_x", "smoke")
    assert main(["claims", "--scale", "smoke", "--out", str(out), "--update-readme"]) == 2
    assert "only the medium ledgers update the README" in capsys.readouterr().err
    assert not (out / "smoke" / "CLAIMS.md").exists()
    readme = tmp_path / "README.md"
    readme.write_text(f"{README_START}\nmedium summary\n{README_END}\n")
    with pytest.raises(ValueError, match="only the medium ledgers update the README"):
        runner.write_claims("paper", out, update_readme=True, readme=readme)
    assert "medium summary" in readme.read_text()


def test_the_readme_summary_is_the_published_medium_one():
    ledgers = collect_claims("medium", PUBLISHED_ROOT)
    assert ledgers, "no published medium ledgers under results/medium/"
    from hgutils.runner.republication import awaiting_republication

    link = notebook_linker(PUBLISHED_ROOT / "medium", REPO_ROOT)
    waiting = awaiting_republication(PUBLISHED_ROOT / "medium")
    expected = readme_summary_markdown(ledgers, "medium", link, "results/medium/CLAIMS.md", waiting)
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert _section(readme) == f"\n{expected}", (
        "README's claims summary is stale: run `python -m hgutils claims --scale medium --update-readme`"
    )
    assert (PUBLISHED_ROOT / "medium" / "CLAIMS.md").is_file()


def test_notebooks_awaiting_republication_are_marked_with_their_reason_and_publishing_clears_them(tmp_path):
    """A notebook listed in ``AWAITING_REPUBLICATION.json`` is marked in the counts (README and CLAIMS.md) and
    in every claim row, with its reason under the table; publishing it removes the entry (the file goes when
    it empties); a malformed ledger is refused naming the file."""
    from hgutils.runner.reproduce import publish_results
    from hgutils.runner.republication import LEDGER_NAME, awaiting_republication, mark_republished

    out = tmp_path / "results"
    _ledger(out, "05_x")
    _ledger(out, "06_y")
    ledger = out / "medium" / LEDGER_NAME
    ledger.write_text('{"06_y": "published before the plateau rule; its numbers came from the earlier loop"}')
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_START}\n{README_END}\n")
    runner.write_claims("medium", out, update_readme=True, readme=readme)
    section, claims_md = _section(readme.read_text()), (out / "medium" / "CLAIMS.md").read_text()
    for text in (section, claims_md):
        assert "| 06_y † | 1 | 1 |" in text and "| 05_x | 1 | 1 |" in text
        assert "- 06_y: published before the plateau rule" in text and "awaiting republication" in text
        assert max(map(len, text.split("| **all** |")[1].splitlines())) <= 115  # the notes are wrapped
    assert "| 06_y † | k-fails | **contradicted** |" in claims_md and "| 05_x | k-fails |" in claims_md
    # a run of 06_y published: its entry goes, and with it the file and the marks
    run = tmp_path / "runs"
    (run / "medium").mkdir(parents=True)
    (run / "medium" / "06_y.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    (run / "medium" / "06_y.run.json").write_text('{"files": {"medium/06_y.ipynb": "x"}}')
    publish_results("medium", run, ["06_y", "05_x"], repo_root=tmp_path)
    assert not ledger.exists() and awaiting_republication(out / "medium") == {}
    assert "†" not in (out / "medium" / "CLAIMS.md").read_text()
    ledger.write_text('{"05_x": "a", "06_y": "b"}')
    assert mark_republished(out / "medium", ["06_y", "07_z"]) == ["06_y"] and awaiting_republication(
        out / "medium"
    ) == {"05_x": "a"}
    ledger.write_text('["05_x"]')
    with pytest.raises(ValueError, match=LEDGER_NAME):
        awaiting_republication(out / "medium")
