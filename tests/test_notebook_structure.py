"""Every notebook follows the companion's cell layout (docs/contributing.md, the notebook cell layout), the template included."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from papermill.translators import PythonTranslator

from hgutils.repro import REPO_ROOT

#: every ``NN_name.ipynb`` in notebooks/, the template ``00_template`` included (discovered, not counted)
BOOKS = sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
REQUIRED = ("scale", "seed", "device", "data_dir", "results_dir", "figures_dir")
#: the most code lines of the claims cell: one line per claim id (a call of the driver's ``claim_<id>``
#: function, or a loop over a parameterised id), the ledger's creation, show and save
MAX_CLAIMS_CELL_LINES = 20


def _load(p: Path) -> dict:
    return json.loads(p.read_text(encoding="utf-8"))


def _code(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _src(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_notebooks_are_numbered_uniquely_and_have_a_driver_module():
    import importlib

    numbers = [p.name[:2] for p in BOOKS]
    assert "00" in numbers and len(numbers) > 1, "the template and at least one notebook"
    assert len(set(numbers)) == len(numbers), f"two notebooks share a number: {numbers}"
    for p in BOOKS:
        mod = importlib.import_module(f"hgutils.experiments.nb{p.stem}")
        assert hasattr(mod, "CONFIG"), f"hgutils.experiments.nb{p.stem} must expose CONFIG (its Preset)"
        src = "".join("".join(c["source"]) for c in _code(_load(p)))
        assert f"nb{p.stem}" in src, f"{p.name} must import its own driver module hgutils.experiments.nb{p.stem}"


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_parameters_cell_is_complete_and_parseable(path):
    nb = _load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    params = [c for c in _code(nb) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "exactly one code cell tagged 'parameters'"
    src = _src(params[0])
    assignments = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    parsed = {p.name: p for p in PythonTranslator.inspect(nbformat.from_dict({**params[0], "source": src}))}
    # papermill silently skips lines it cannot parse (two '=' on a line, union annotations)
    assert len(parsed) == len(assignments), f"papermill parsed {sorted(parsed)} of {assignments}"
    missing = [n for n in REQUIRED if n not in parsed]
    assert not missing, f"parameters cell lacks {missing}"
    assert parsed["scale"].default.strip("'\"") == "smoke", "the stored default must be the smoke preset"
    undocumented = [ln for ln in assignments if "#" not in ln]
    assert not undocumented, f"every parameter needs a comment: {undocumented}"


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_ends_with_checked_claims_and_has_outputs(path):
    nb = _load(path)
    code = _code(nb)
    last = _src(code[-1]).strip().splitlines()
    assert last[0] == "# NBVAL_CHECK_OUTPUT" and "print_verdicts()" in last[-1]
    assert any("Claims(" in _src(c) for c in code) and any(".save(" in _src(c) for c in code)
    assert all(c.get("execution_count") is not None for c in code), "commit the notebook executed (smoke)"
    out = "".join("".join(o.get("text", "")) for o in code[-1].get("outputs", []))
    assert out.strip(), "the verdict cell must carry its smoke-scale output (the nbval reference)"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, "a committed notebook must not carry error outputs"


@pytest.mark.parametrize("path", BOOKS, ids=lambda p: p.stem)
def test_claims_are_written_in_the_driver_and_listed_in_one_short_cell(path):
    """The one way to write claims: one function per claim id in the driver's claims module; the notebook's
    claims cell creates the ledger and lists the claims, one line per claim id (docs/contributing.md)."""
    code = _code(_load(path))
    cells = [c for c in code if "Claims(" in _src(c)]
    assert len(cells) == 1, "exactly one code cell creates the Claims ledger"
    lines = [ln for ln in _src(cells[0]).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(lines) <= MAX_CLAIMS_CELL_LINES, (
        f"the claims cell has {len(lines)} code lines (at most {MAX_CLAIMS_CELL_LINES}): write each claim as a "
        "function of the driver's claims module and call it on one line"
    )
    inline = [i for i, c in enumerate(code) if "claims.add(" in _src(c)]
    assert not inline, f"code cells {inline} add claims inline: claims.add belongs in the driver's claim functions"
