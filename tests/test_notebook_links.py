"""Readers reach every notebook on Binder and every published medium run from the README and the notebook.

Covers :mod:`hgutils.notebook_tools.links` (Binder URLs, the first-cell links block, the README's
badge and notebook table), the claims table's links to published notebooks, and ``.gitignore``
keeping published notebooks tracked while run copies stay untracked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from hgutils import runner
from hgutils.ledger import Claims
from hgutils.notebook_tools import links
from hgutils.notebook_tools.links import (
    LINKS_END,
    LINKS_START,
    binder_url,
    links_block,
    readme_badge,
    readme_table,
    refresh_notebook_links,
    refresh_readme,
    with_links,
)
from hgutils.repro import REPO_ROOT

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NUMBERED = [p for p in NOTEBOOKS if not p.name.startswith("00_")]
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")

#: Numbered notebooks whose executed medium run is not published yet (``make reproduce PUBLISH=1``
#: writes results/medium/NN_name.ipynb). A notebook whose medium run is not
#: published yet is listed here while it is being rewritten (strict xfail: a stale entry fails).
NOT_YET_PUBLISHED: set[str] = set()


def test_binder_urls_open_jupyterlab_on_one_notebook():
    base = f"https://mybinder.org/v2/gh/{links.BINDER_REPO}/{links.BINDER_REF}"
    assert binder_url("notebooks/05_x.ipynb") == f"{base}?urlpath=lab/tree/notebooks/05_x.ipynb"
    assert binder_url() == f"{base}?urlpath=lab"
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", links.BINDER_REPO), "BINDER_REPO is a GitHub owner/name"


def test_with_links_inserts_under_the_title_once_and_replaces_in_place():
    block = f"{LINKS_START}\nnew\n{LINKS_END}"
    src = "# 05 · Title\n\n**Paper.** text"
    once = with_links(src, block)
    assert once == f"# 05 · Title\n\n{block}\n\n**Paper.** text"
    assert with_links(once, block) == once
    stale = once.replace("new", "old link")
    assert with_links(stale, block) == once
    assert with_links("No title here", block) == f"{block}\n\nNo title here"


@pytest.fixture()
def repo(tmp_path):
    """A repository with two notebooks (the template and 05), a README with the markers, nothing published."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    for name in ("00_template", "05_x"):
        nb = nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_markdown_cell(f"# {name[:2]} · The {name} notebook\n\nText."),
                nbformat.v4.new_code_cell("1"),
            ]
        )
        nbformat.write(nb, nbs / f"{name}.ipynb")
    (tmp_path / "README.md").write_text(
        f"# Title\n\n{links.BADGE_START}\n{links.BADGE_END}\n\nText.\n\n{links.TABLE_START}\nold\n{links.TABLE_END}\nEnd.\n"
    )
    return tmp_path


def _first_cell(path: Path) -> str:
    return nbformat.read(path, as_version=4).cells[0].source


def test_notebook_links_follow_what_is_published(repo):
    nb = repo / "notebooks" / "05_x.ipynb"
    assert refresh_notebook_links(nb, repo) is True
    first = _first_cell(nb)
    assert first.startswith("# 05 · The 05_x notebook\n\n" + LINKS_START)
    assert f"({binder_url('notebooks/05_x.ipynb')})" in first and "Medium-scale run" not in first
    assert refresh_notebook_links(nb, repo) is False, "refreshing twice changes nothing"

    published = repo / "results" / "medium" / "05_x.ipynb"
    published.parent.mkdir(parents=True)
    shutil.copy(nb, published)
    assert refresh_notebook_links(nb, repo) is True
    first = _first_cell(nb)
    assert "**Medium-scale run:** [05_x.ipynb](../results/medium/05_x.ipynb)" in first
    assert first.count(LINKS_START) == 1 and first.endswith("Text.")
    code = nbformat.read(nb, as_version=4)
    code.cells.reverse()
    nbformat.write(code, nb)
    with pytest.raises(ValueError, match="05_x.ipynb: the first cell must be Markdown"):
        refresh_notebook_links(nb, repo)


def test_readme_badge_and_table(repo):
    readme = repo / "README.md"
    (repo / "results" / "medium").mkdir(parents=True)
    shutil.copy(repo / "notebooks" / "05_x.ipynb", repo / "results" / "medium" / "05_x.ipynb")
    assert refresh_readme(readme, repo) is True and refresh_readme(readme, repo) is False
    text = readme.read_text()
    assert f"[![Binder]({links.BINDER_BADGE})]({binder_url('notebooks')})" in text
    assert (
        "| [00_template](notebooks/00_template.ipynb) | The 00_template notebook | template (not run at medium) |"
        in text
    )
    assert "| [05_x](notebooks/05_x.ipynb) | The 05_x notebook | [05_x.ipynb](results/medium/05_x.ipynb) |" in text
    assert f"[launch]({binder_url('notebooks/05_x.ipynb')})" in text and "old" not in text
    assert text.endswith("End.\n")
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="has no <!-- BINDER:START -->"):
        refresh_readme(readme, repo)


def test_claims_rows_link_their_published_notebook(tmp_path):
    out = tmp_path / "results"
    for nb in ("05_x", "06_y"):
        c = Claims(nb, "medium")
        c.add("k", "s", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
        c.save(out / "medium" / nb)
    (out / "medium" / "05_x.ipynb").write_text("{}")
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{runner.README_START}\n{runner.README_END}\n")
    runner.write_claims("medium", out, update_readme=True, readme=readme)
    text = readme.read_text()
    assert "| [05_x](results/medium/05_x.ipynb) | 1 |" in text and "| 06_y | 1 |" in text
    claims_md = (out / "medium" / "CLAIMS.md").read_text()
    assert "| [05_x](05_x.ipynb) | k |" in claims_md and "| 06_y | k |" in claims_md


# --------------------------------------------------------------------------------------------
# the repository as committed
# --------------------------------------------------------------------------------------------
def test_readme_badge_and_notebook_table_are_current():
    assert readme_badge() in README, "README's Binder badge is stale: run `make sync`"
    assert readme_table() in README, "README's notebook table is stale: run `make sync`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_links_binder_and_the_published_run(path):
    first = _first_cell(path)
    assert links_block(path) in first, f"{path.name}: first-cell links missing or stale: run `make sync`"
    assert f"({binder_url(f'notebooks/{path.name}')})" in first
    if links.published_notebook(path.stem):
        assert f"(../results/medium/{path.stem}.ipynb)" in first


def test_readme_links_every_published_medium_notebook():
    published = sorted((REPO_ROOT / "results" / "medium").glob("[0-9][0-9]_*.ipynb"))
    for nb in published:
        target = f"(results/medium/{nb.name})"
        assert target in README.split("<!-- NOTEBOOKS:START -->")[1], f"the notebook table does not link {nb.name}"
        if (REPO_ROOT / "results" / "medium" / nb.stem / "claims.json").exists():
            claims = README.split(runner.README_START)[1].split(runner.README_END)[0]
            # the link is followed by the next column or by the dagger of a notebook awaiting republication
            assert f"| [{nb.stem}]{target} " in claims, f"claims rows of {nb.stem} do not link {nb.name}"
    for href in re.findall(r"\]\(((?:results|notebooks)/[^)\s]+\.ipynb)\)", README):
        assert (REPO_ROOT / href).is_file(), f"README links {href}, which does not exist"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason="medium run not published yet"))
        if p.stem in NOT_YET_PUBLISHED
        else p
        for p in NUMBERED
    ],
    ids=lambda p: p.stem,
)
def test_medium_run_is_published(path):
    assert (REPO_ROOT / "results" / "medium" / path.name).is_file(), f"results/medium/{path.name} is missing"


def test_not_yet_published_names_existing_notebooks():
    assert NOT_YET_PUBLISHED <= {p.stem for p in NUMBERED}


def test_published_notebooks_are_tracked_and_run_copies_are_not():
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")

    def ignored(rel: str) -> bool:
        res = subprocess.run(["git", "check-ignore", "-q", "--no-index", rel], cwd=REPO_ROOT)
        return res.returncode == 0

    assert not ignored("results/medium/05_msa_rich_vs_lazy.ipynb")
    assert not ignored("results/paper/05_msa_rich_vs_lazy.ipynb")
    for rel in (
        "results/runs/medium/05_msa_rich_vs_lazy.ipynb",
        "results/smoke/05_msa_rich_vs_lazy.ipynb",
        "results/medium/05_msa_rich_vs_lazy.failed.ipynb",
        "results/sweeps/05_msa_rich_vs_lazy/smoke/seed=1/run.ipynb",
    ):
        assert ignored(rel), f"{rel} should stay untracked"
