"""Every bad argument the command line still mishandled (issue 51), refused before any work with one
``error:`` line and exit status 2 -- or, for values that are fine, taken as values: negative numbers
and lists in exponent notation, NaN and infinity said to be non-finite, read-only output and cache
folders, a missing notebook folder. No kernel starts here (docs/guarantees.md).
"""

from __future__ import annotations

import json
import os
import typing
from pathlib import Path

import pytest
from _cli_helpers import files_under, one_error_line

from hgutils import runner
from hgutils.__main__ import _parser, main
from hgutils.ledger import Claims
from hgutils.runner.params import check_value, notebook_params, parse_value

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
ROOT = os.geteuid() == 0  # root writes into read-only folders: a folder where a file must go stands in


@pytest.fixture()
def nbdir(tmp_path: Path) -> Path:
    """The tiny notebook as 01_tiny.ipynb, with one more parameter: ``rates``, a list of float."""
    nb = json.loads(TINY.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    cell["source"] = src.rstrip("\n") + "\nrates = None  # list of float or None: learning rates\n"
    d = tmp_path / "notebooks"
    d.mkdir()
    (d / "01_tiny.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return d


# --------------------------------------------------------------------------------------------
# values: negative numbers, exponent notation in lists, non-finite numbers
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["-1e-3", "-1,1", "-.5", "-2", "-1E+2"])
def test_a_negative_number_is_a_value_not_an_option(tmp_path, nbdir, capsys, value):
    args = _parser().parse_args(["sweep", "01", "-p", "x", value])
    assert args.param == [["x", value]]
    out = tmp_path / "out"
    commands = [["sweep", "01", "--notebook-dir", str(nbdir)]]
    if "," not in value:  # reproduce takes one value per parameter
        commands.append(["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke"])
    for cmd in commands:
        # the run is stopped by the next, unknown parameter: x's value was read as a value
        assert main([*cmd, "-p", "x", value, "-p", "nope", "1", "--out", str(out)]) == 2
        assert "-p nope: 01_tiny.ipynb has no parameter 'nope'" in one_error_line(capsys.readouterr().err)
    assert runner.parse_values("-1,1", float) == [-1, 1] and parse_value("-1e-3", float) == -0.001
    assert not out.exists()


def test_a_list_in_exponent_notation_is_a_list_of_numbers(tmp_path, nbdir, capsys):
    spec = notebook_params(nbdir / "01_tiny.ipynb")["rates"]
    assert spec.type == tuple[float, ...] | None
    assert check_value(spec, "[1e-3,1e-2]") == (0.001, 0.01)  # as single values already were
    assert check_value(spec, "[1e-3, .5, 2]") == (0.001, 0.5, 2)
    assert parse_value("[1e-3]", tuple[str, ...]) == ("1e-3",)  # a list of str keeps its text
    with pytest.raises(ValueError, match=r"-p rates: expected a list of float or none; got \[0.001, 'abc'\]"):
        check_value(spec, "[1e-3, abc]")
    out = tmp_path / "out"
    cmd = ["sweep", "01", "--notebook-dir", str(nbdir), "-p", "rates", "[1e-3,1e-2];[1e-4]", "--sep", ";"]
    assert main([*cmd, "-p", "nope", "1", "--out", str(out)]) == 2
    assert "-p nope:" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("text", ["nan", "NaN", ".nan", "inf", "-inf", "-.inf", "Infinity", "1e400", "-1e400"])
def test_a_non_finite_value_is_said_to_be_non_finite(tmp_path, capsys, text):
    out = tmp_path / "sweep"
    assert main(["sweep", str(TINY), "-p", "x", text, "--sep", ";", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("error: -p x: must be finite (NaN and infinity are refused); got ")
    assert not out.exists()
    # whatever type the parameter has: a float or none, a list of floats, any value
    for tp in (float | None, tuple[float, ...] | None, typing.Any):
        spec = runner.ParamSpec("gain_rich", tp, "None", "", "preset")
        with pytest.raises(ValueError, match=r"^-p gain_rich: must be finite"):
            check_value(spec, f"[{text}]" if tp is not float | None else text)
    with pytest.raises(ValueError, match=r"^-p gain_rich: must be finite"):
        check_value(runner.ParamSpec("gain_rich", float | None, "None", "", "preset"), float("nan"))


# --------------------------------------------------------------------------------------------
# folders: a missing notebook folder, read-only output and cache folders
# --------------------------------------------------------------------------------------------
def test_a_missing_notebook_folder_is_named_as_missing(tmp_path, capsys):
    missing = tmp_path / "nonexistent"
    for cmd in (["reproduce", "--only", "00"], ["reproduce"], ["sweep", "05", "-p", "x", "1"]):
        assert main([*cmd, "--notebook-dir", str(missing), "--out", str(tmp_path / "out")]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith(f"error: --notebook-dir '{missing}' does not exist; give the folder holding")
    assert files_under(tmp_path) == []


def _unwritable(folder: Path, name: str) -> None:
    """Make ``folder / name`` impossible to write: a read-only folder, or (for root) a folder in its place."""
    if ROOT:
        (folder / name).mkdir(parents=True)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o555)


def test_claims_on_a_read_only_out_is_one_line_exit_2(tmp_path, capsys):
    out = tmp_path / "runs"
    c = Claims("05_x", "smoke")
    c.add("k", "a statement", paper=1, ours=2, criterion="ours > paper", holds=True, source="p")
    c.save(out / "smoke" / "05_x")
    _unwritable(out / "smoke", "CLAIMS.md")
    before = files_under(out)
    try:
        assert main(["claims", "--scale", "smoke", "--out", str(out)]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith("error: --out: ") and "cannot be written" in line
        assert files_under(out) == before
    finally:
        (out / "smoke").chmod(0o755)


@pytest.mark.parametrize("where", ["HGUTILS_CACHE below a file", "HGUTILS_CACHE read-only", "<out>/.cache a file"])
def test_an_unwritable_cache_is_refused_before_launch(tmp_path, nbdir, capsys, monkeypatch, where):
    out = tmp_path / "runs"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    if where == "HGUTILS_CACHE below a file":
        monkeypatch.setenv("HGUTILS_CACHE", str(blocker / "cache"))
    elif where == "HGUTILS_CACHE read-only":
        if ROOT:
            pytest.skip("root writes into a read-only folder")
        (tmp_path / "ro").mkdir(mode=0o555)
        monkeypatch.setenv("HGUTILS_CACHE", str(tmp_path / "ro" / "cache"))
    else:
        monkeypatch.delenv("HGUTILS_CACHE", raising=False)
        out.mkdir()
        (out / ".cache").write_text("not a folder")
    before = files_under(tmp_path)
    try:
        for cmd in (
            ["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke"],
            ["sweep", "01", "--notebook-dir", str(nbdir), "-p", "x", "1,2"],
        ):
            assert main([*cmd, "--out", str(out)]) == 2
            line = one_error_line(capsys.readouterr().err)
            option = "--out" if where == "<out>/.cache a file" else "HGUTILS_CACHE"
            assert line.startswith(f"error: {option} ") and "cannot be written" in line, line
        assert files_under(tmp_path) == before  # nothing written: no output root, no lock
    finally:
        if (tmp_path / "ro").exists():
            (tmp_path / "ro").chmod(0o755)


def test_a_writable_cache_folder_created_by_the_check_is_removed_when_the_run_is_refused(tmp_path, nbdir, capsys):
    out = tmp_path / "runs"
    # a live lock on the root is refused after the folder checks created <out>/.cache
    out.mkdir()
    lock = {"pid": os.getpid(), "host": os.uname().nodename, "started": "now", "command": "reproduce"}
    (out / ".hgutils.lock").write_text(json.dumps(lock))
    assert main(["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out)]) == 2
    assert "is in use by another run" in one_error_line(capsys.readouterr().err)
    assert files_under(out) == [".hgutils.lock"]  # no .cache left behind
