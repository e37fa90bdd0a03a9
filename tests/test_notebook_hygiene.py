"""What a reader sees in a committed or published notebook: no machine paths, no path reprs, no cut tables.

The rules live in :mod:`hgutils.notebook_tools.hygiene`; the cleaner that fixes stored outputs and
metadata in :mod:`hgutils.runner.notebook_cleaning`. The rules are first shown to fire on small
notebooks built here, then applied to every ``notebooks/NN_*.ipynb`` and every published
(tracked) ``results/medium|paper/NN_*.ipynb``.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.notebook_tools import find_problems
from hgutils.notebook_tools.links import published_notebooks
from hgutils.repro import REPO_ROOT
from hgutils.runner.machine_paths import find_machine_paths, strip_machine_paths
from hgutils.runner.notebook_cleaning import WIDGET_VIEW, clean_notebook, is_clean

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PUBLISHED = published_notebooks()
ALL = NOTEBOOKS + PUBLISHED

#: Content problems of the notebooks as they are on this branch, fixed by the notebooks' authors
#: (a stored output problem that cleaning can fix is never listed here). Each entry is
#: (notebook, cell index, rule): the hygiene test tolerates exactly these, and
#: ``test_known_content_issue_fixed`` fails (strict xfail) once one is fixed, so that it is removed.
KNOWN_CONTENT_ISSUES: dict[tuple[str, int, str], str] = {}


# --------------------------------------------------------------------------------------------
# small notebooks that break one rule each
# --------------------------------------------------------------------------------------------
def _nb(*cells: dict, metadata: dict | None = None) -> dict:
    cells = [{**c, "id": f"c{i}"} for i, c in enumerate(cells)]
    return {"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}


def _code(source: str = "x", *outputs: dict, n: int | None = 1, **meta: object) -> dict:
    return {
        "cell_type": "code",
        "source": source,
        "execution_count": n,
        "metadata": dict(meta),
        "outputs": list(outputs),
    }


def _md(source: str) -> dict:
    return {"cell_type": "markdown", "source": source, "metadata": {}}


def _result(**data: str) -> dict:
    return {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": data}


def _stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def _rules(nb: dict) -> list[tuple[str, str]]:
    return [(p.where, p.rule) for p in find_problems(nb, "t")]


def test_a_tidy_notebook_has_no_problems():
    nb = _nb(
        _md("# 05 · Title\n\nSee `results/medium/05_x.ipynb` and …/cifar10.zip; loading..."),
        _code("print('x')", _stream("Loading data...\nclaims saved to results/smoke/05_x/claims.json\n")),
        _code(
            "df",
            _result(
                **{
                    "text/html": "<table><tr><td>MSA 0.07, CKA 0.09</td><td>0.1235</td></tr></table>",
                    "text/plain": "   a     b\n0  MSA  0.1235",
                }
            ),
            n=2,
        ),
        _code("md", _result(**{"text/markdown": "| a | b |\n|---|---|\n| 1.5 | x |"}), n=3),
    )
    assert find_problems(nb, "t") == []


@pytest.mark.parametrize(
    ("cell", "rule"),
    [
        (_code("p", _result(**{"text/plain": "PosixPath('results/x.json')"})), "path-repr"),
        (
            _code("df", _result(**{"text/html": "<table><tr><td>max over non-liftable = ...</td></tr></table>"})),
            "truncated-table",
        ),
        (
            _code("df", _result(**{"text/html": "<table><tr><td>a</td></tr></table>", "text/plain": "0  Procru..."})),
            "truncated-table",
        ),
        (_code("m", _result(**{"text/markdown": "| a | b |\n|---|---|\n| 1 | Procru... |\n"})), "truncated-table"),
        (
            _code("print(df)", _stream("   claim                    ours\n0  hierarchy recovered...   0.12\n")),
            "truncated-table",
        ),
        (_code("print(p)", _stream("saved to /work/main/results/smoke/x.json\n")), "machine-path"),
        (_code("print(p)", _stream("/home/alice/data/cifar\n", "stderr")), "machine-path"),
        (_code("p", _result(**{"text/plain": "'/tmp/hgutils-job-ab12/out/smoke'"})), "machine-path"),
        (_code(f"p = '{REPO_ROOT}/figures'"), "machine-path"),
        (_md("summary in `shared/papers/ilnn.txt`"), "dev-wording"),
        (_md("the issue's sizes cost 8 CPU-min"), "dev-wording"),
        (_md("formulas in REFERENCE §2"), "dev-wording"),
        (_code("c", _result(**{"text/markdown": "| id | {'msa': 0.18439155309397556} |"})), "raw-float"),
        (
            _code("import tqdm.auto", _stream("TqdmWarning: IProgress not found. Please update jupyter\n", "stderr")),
            "stderr",
        ),
    ],
)
def test_each_rule_fires(cell, rule):
    problems = find_problems(_nb(cell), "05_x")
    assert rule in {p.rule for p in problems}, problems
    msg = str(next(p for p in problems if p.rule == rule))
    assert msg.startswith("05_x: cell 0 ") and f": {rule}: " in msg


def test_stderr_is_allowed_only_in_a_cell_tagged_for_it():
    warn = _stream("UserWarning: something\n", "stderr")
    assert _rules(_nb(_code("w", warn))) == [("cell 0 output 0 (stderr)", "stderr")]
    assert _rules(_nb(_code("w", warn, tags=["allow-stderr"]))) == []
    assert _rules(_nb(_code("print(x)", _stream("fine\n")))) == []


def test_check_flags_a_stderr_output_injected_into_a_committed_notebook(tmp_path, capsys):
    from hgutils.notebook_tools.__main__ import main

    src = REPO_ROOT / "notebooks" / "05_msa_rich_vs_lazy.ipynb"
    nb = json.loads(src.read_text(encoding="utf-8"))
    assert main(["check", str(src)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    i = next(k for k, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and c.get("outputs"))
    nb["cells"][i]["outputs"].append(
        _stream("site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found\n", "stderr")
    )
    bad = tmp_path / src.name
    bad.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"05_msa_rich_vs_lazy: cell {i} output " in out and "(stderr): stderr: " in out and "IProgress" in out


def test_clean_writes_the_kernelspec_jupyterlab_writes_on_kernel_start():
    from hgutils.runner.notebook_cleaning import KERNELSPEC

    nb = _nb(_code(), metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}})
    assert (
        clean_notebook(nb)["metadata"]["kernelspec"]
        == KERNELSPEC
        == {
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
            "name": "python3",
        }
    )
    assert not is_clean(nb) and is_clean(clean_notebook(nb))
    other = _nb(_code(), metadata={"kernelspec": {"display_name": "R", "language": "R", "name": "ir"}})
    assert clean_notebook(other) == other


def test_machine_path_in_metadata_and_cell_metadata():
    nb = _nb(_code("x", papermill={"input_path": "/root/x.ipynb"}), metadata={"papermill": {"output_path": "/tmp/o"}})
    assert _rules(nb) == [("metadata", "machine-path"), ("cell 0 metadata", "machine-path")]


def test_execution_counts_must_come_from_one_top_to_bottom_run():
    assert _rules(_nb(_code(n=1), _md("m"), _code(n=2))) == []
    assert _rules(_nb(_code(n=None), _code(n=None))) == []  # unexecuted: the structure test's business
    assert _rules(_nb(_code(n=1), _code(n=3))) == [("cell 1", "execution-order")]
    assert _rules(_nb(_code(n=2), _code(n=1))) == [("cell 0", "execution-order")]
    assert _rules(_nb(_code(n=1), _code(n=None))) == [("cell 1", "execution-order")]


# --------------------------------------------------------------------------------------------
# the cleaner
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "PosixPath('/tmp/hgutils-job-x1_y/out/smoke/05_x/claims.json')",
            "PosixPath('results/smoke/05_x/claims.json')",
        ),
        ('results_dir = "/tmp/hgutils-job-x1/out"', 'results_dir = "results"'),
        ('figures_dir = "/tmp/hgutils-job-x1/out/figures"', 'figures_dir = "figures"'),
        ("/tmp/hgutils-job-x1/input/05_x.ipynb", "notebooks/05_x.ipynb"),
        (f"{REPO_ROOT}/results/smoke/a.json", "results/smoke/a.json"),
        (f"cwd {REPO_ROOT} then", "cwd . then"),
        ("/work/main/figures/smoke/05_x.png", "figures/smoke/05_x.png"),
        (
            "/work/wt/h9/.venv/lib/python3.11/site-packages/torch/nn/module.py:12: UserWarning",
            "site-packages/torch/nn/module.py:12: UserWarning",
        ),
        ("CIFAR-10 from /work/shared/data/cifar10-images.zip (JPEG)", "CIFAR-10 from …/cifar10-images.zip (JPEG)"),
        ("HGUTILS_DATA=/home/alice/data", "HGUTILS_DATA=…/data"),
        ("file:///Users/bob/x.html", "file://…/x.html"),
        (
            "results/tmp/x and ~/work/y and https://example.org/tmp/z",
            "results/tmp/x and ~/work/y and https://example.org/tmp/z",
        ),
    ],
)
def test_strip_machine_paths(text, expected):
    assert strip_machine_paths(text) == expected
    assert find_machine_paths(expected) == []


_component = st.text(st.sampled_from("abcxyz019_-."), min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))


@settings(max_examples=200, deadline=None)
@given(
    root=st.sampled_from(["/work", "/tmp", "/root", "/home/u1", "/Users/me", "/var/folders", str(REPO_ROOT)]),
    parts=st.lists(_component, max_size=5),
    before=st.sampled_from(["", "see ", "'", '"', "(", "=", "PosixPath('"]),
    after=st.sampled_from(["", "'", ")", ":12", " and more", "\n", "/"]),
)
def test_stripped_text_has_no_machine_path_and_stripping_is_idempotent(root, parts, before, after):
    text = before + "/".join([root, *parts]) + after
    assert find_machine_paths(text), text
    once = strip_machine_paths(text)
    assert find_machine_paths(once) == [], once
    assert strip_machine_paths(once) == once


def _executed() -> dict:
    """A notebook as papermill leaves it after a run of the runner: paths, timings, a widget."""
    injected = (
        'scale = "medium"\nresults_dir = "/tmp/hgutils-job-q1/out"\nfigures_dir = "/tmp/hgutils-job-q1/out/figures"\n'
    )
    timing = {"start_time": "2026-01-01T00:00:00", "end_time": "2026-01-01T00:00:01", "duration": 1.0}
    return _nb(
        _md("# 05 · Title"),
        _code("scale = 'smoke'", n=1, tags=["parameters"], papermill=timing),
        _code(injected, n=2, tags=["injected-parameters"], execution={"iopub.status.busy": "2026"}),
        _code(
            "claims.save(out)",
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {WIDGET_VIEW: {"model_id": "a"}, "text/plain": "0%"},
            },
            _stream("saved /tmp/hgutils-job-q1/out/medium/05_x/claims.json\n"),
            _result(**{"text/plain": "PosixPath('/tmp/hgutils-job-q1/out/medium/05_x/claims.json')"}),
            n=3,
        ),
        metadata={
            "widgets": {"application/vnd.jupyter.widget-state+json": {}},
            "papermill": {
                "input_path": "/tmp/hgutils-job-q1/input/05_x.ipynb",
                "output_path": "/tmp/hgutils-job-q1/out/medium/05_x.ipynb",
                "parameters": {"scale": "medium", "results_dir": "/tmp/hgutils-job-q1/out"},
                **timing,
            },
        },
    )


def test_clean_notebook_strips_paths_timings_and_widgets_but_keeps_outputs():
    raw = _executed()
    before = json.dumps(raw)
    nb = clean_notebook(raw)
    assert json.dumps(raw) == before, "clean_notebook must not modify its argument"
    assert nb["metadata"] == {"papermill": {"parameters": {"scale": "medium", "results_dir": "results"}}}
    assert all(set(c["metadata"]) <= {"tags"} for c in nb["cells"])
    assert nb["cells"][2]["source"].splitlines()[1:] == ['results_dir = "results"', 'figures_dir = "figures"']
    outs = nb["cells"][3]["outputs"]
    assert [o["output_type"] for o in outs] == ["stream", "execute_result"], "the widget view is dropped"
    assert outs[0]["text"] == "saved results/medium/05_x/claims.json\n"
    # content problems are reported, not hidden: the PosixPath result stays (now portable)
    assert outs[1]["data"]["text/plain"] == "PosixPath('results/medium/05_x/claims.json')"
    assert _rules(nb) == [("cell 3 output 1 (text/plain)", "path-repr")]
    assert is_clean(nb) and not is_clean(raw)
    assert clean_notebook(nb) == nb


def test_clean_file_rewrites_only_when_needed(tmp_path):
    from hgutils.runner.notebook_cleaning import clean_file

    path = tmp_path / "05_x.ipynb"
    nbformat.write(nbformat.from_dict(_executed()), path)
    assert clean_file(path) is True
    text = path.read_text()
    assert "/tmp/" not in text and "hgutils-job" not in text and "duration" not in text
    mtime = path.stat().st_mtime_ns
    assert clean_file(path) is False and path.stat().st_mtime_ns == mtime


# --------------------------------------------------------------------------------------------
# the repository's notebooks
# --------------------------------------------------------------------------------------------
def _label(p: Path) -> str:
    return p.relative_to(REPO_ROOT).as_posix()


def _cell(problem) -> int | None:
    """The cell index a problem names (``"cell 7 output 1 (text/html)"`` -> 7), ``None`` for metadata."""
    words = problem.where.split()
    return int(words[1]) if words[0] == "cell" else None


@pytest.mark.parametrize("path", ALL, ids=_label)
def test_notebook_hygiene(path):
    problems = find_problems(json.loads(path.read_text(encoding="utf-8")), path.stem)
    known = path.parent.name == "notebooks"
    unexpected = [p for p in problems if not (known and (p.notebook, _cell(p), p.rule) in KNOWN_CONTENT_ISSUES)]
    assert not unexpected, f"{len(unexpected)} hygiene problem(s) in {_label(path)}:\n" + "\n".join(
        map(str, unexpected)
    )


@pytest.mark.parametrize("path", ALL, ids=_label)
def test_notebook_is_cleaned(path):
    nb = nbformat.read(path, as_version=4)
    assert is_clean(nb), f"{_label(path)} carries machine paths, timings or widget state: run `make sync`"


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v), id=f"{k[0]}-cell{k[1]}-{k[2]}")
        for k, v in KNOWN_CONTENT_ISSUES.items()
    ],
)
def test_known_content_issue_fixed(key):
    """Fails (xfail) while the issue exists; once fixed it passes and strict xfail asks to drop the entry."""
    stem, cell, rule = key
    path = REPO_ROOT / "notebooks" / f"{stem}.ipynb"
    problems = find_problems(json.loads(path.read_text(encoding="utf-8")), stem) if path.exists() else []
    assert not [p for p in problems if p.rule == rule and _cell(p) == cell], f"{stem} cell {cell}: {rule}"


def test_cli_rejects_bad_input_and_check_reports_what_the_tests_see(capsys):
    from hgutils.notebook_tools.__main__ import main

    assert main(["clean", "README.md"]) == 2
    assert "error: expected existing .ipynb files; got 'README.md'" in capsys.readouterr().err
    rc = main(["check"])
    out = capsys.readouterr().out
    assert rc == (1 if KNOWN_CONTENT_ISSUES else 0), out
    for stem, cell, rule in KNOWN_CONTENT_ISSUES:
        assert f"{stem}: cell {cell} " in out and f": {rule}: " in out
