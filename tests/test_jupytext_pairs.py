"""Every notebook has a py:percent twin that reads back as the same cells, and ruff lints the twins.

The twins are written by ``make sync`` (:func:`hgutils.notebook_tools.pairs.write_pair`); papermill
and nbval keep running the ``.ipynb``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import jupytext
import nbformat
import pytest

from hgutils.notebook_tools.pairs import orphan_scripts, pair_differences, pair_path, script_text, write_pair
from hgutils.repro import REPO_ROOT

NB_DIR = REPO_ROOT / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_and_its_script_agree(path):
    problems = pair_differences(path)
    assert not problems, "\n".join(problems)


def test_every_script_has_its_notebook():
    assert NOTEBOOKS, "no notebooks found"
    orphans = orphan_scripts(NB_DIR)
    assert not orphans, f"scripts without a notebook (delete them or restore the notebook): {orphans}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_script_is_text_only_and_keeps_the_parameters_tag(path):
    text = pair_path(path).read_text(encoding="utf-8")
    assert '# %% tags=["parameters"]' in text, "the papermill parameters tag must survive the round trip"
    for leftover in ("jupytext_version:", "execution_count", "image/png", "papermill=", "execution="):
        assert leftover not in text, f"{pair_path(path).name} carries {leftover!r}"
    assert text == script_text(path), f"{pair_path(path).name} is not what `make sync` writes now"


@pytest.fixture()
def pair(tmp_path):
    """A copy of the template, its script and the folder's jupytext configuration."""
    shutil.copy(NB_DIR / "jupytext.toml", tmp_path / "jupytext.toml")
    nb = tmp_path / "00_template.ipynb"
    shutil.copy(NB_DIR / "00_template.ipynb", nb)
    assert write_pair(nb) is True and write_pair(nb) is False
    assert pair_differences(nb) == []
    return nb


def test_a_missing_script_is_reported(pair):
    pair_path(pair).unlink()
    assert pair_differences(pair) == ["00_template.ipynb has no jupytext pair 00_template.py (run `make sync`)"]


def test_an_edited_script_is_reported_with_the_cell(pair):
    script = pair_path(pair)
    script.write_text(script.read_text().replace("seed_everything(seed)", "seed_everything(seed + 1)", 1))
    problems = pair_differences(pair)
    assert len(problems) == 1 and problems[0].startswith("cell ") and "source differs" in problems[0]
    assert "+seed_everything(seed + 1)" in problems[0]


def test_an_edited_notebook_is_reported(pair):
    nb = nbformat.read(pair, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("## One more section"))
    nbformat.write(nb, pair)
    assert pair_differences(pair) == [
        f"00_template.ipynb has {len(nb.cells)} cells, 00_template.py has {len(nb.cells) - 1} (run `make sync`)"
    ]
    assert write_pair(pair) is True and pair_differences(pair) == []
    assert jupytext.read(pair_path(pair)).cells[-1].source == "## One more section"


def test_a_cell_kind_change_is_reported(pair):
    nb = nbformat.read(pair, as_version=4)
    last_md = max(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    nb.cells[last_md] = nbformat.v4.new_raw_cell(nb.cells[last_md].source)
    nbformat.write(nb, pair)
    assert pair_differences(pair)[0] == f"cell {last_md} is raw in 00_template.ipynb but markdown in 00_template.py"


def test_ruff_checks_the_scripts():
    scripts = [str(pair_path(p)) for p in NOTEBOOKS]
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *scripts], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    mk = (REPO_ROOT / "Makefile").read_text()
    assert "ruff check hgutils tests benchmarks notebooks" in mk, "make lint must lint notebooks/ (scripts included)"
    assert "$(PY) -m hgutils.notebook_tools sync" in mk.split("\nsync:", 1)[1].split("\n\n", 1)[0]


def test_nbval_collects_the_notebooks_not_the_scripts():
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax", "-p", "no:cacheprovider", "notebooks"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    files = {line.split("::", 1)[0] for line in res.stdout.splitlines() if "::" in line}
    assert files == {p.relative_to(REPO_ROOT).as_posix() for p in NOTEBOOKS}, files
