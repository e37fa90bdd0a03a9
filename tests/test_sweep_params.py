"""Parameters are validated before anything runs: names, types, preset ranges, lists, data folders."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hgutils import runner
from hgutils.__main__ import main
from hgutils.presets import Preset
from hgutils.runner.params import check_value, notebook_params, parse_value, split_values

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class TinyConfig(Preset):
    """A preset for the tiny notebook, injected as if it were ``hgutils.experiments.nbNN_tiny.CONFIG``."""

    x: float = 1.0
    tags: tuple[str, ...] = ()
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "medium": {"x": 2.0}, "paper": {"x": 4.0}}
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {"x": (0.0, 10.0)}


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_parameter_types_come_from_the_parameters_cell():
    specs = notebook_params(TINY)
    assert specs["x"].type is float and specs["x"].origin == "annotation"
    assert specs["fail"].type is bool
    assert specs["tags"].type == tuple[str, ...] | None and specs["tags"].origin == "comment"
    assert specs["data_dir"].type == str | None and specs["seed"].type is int
    # the same from a real notebook's "# int or None:" / "# list of str or None:" comments
    nb04 = notebook_params(REPO / "notebooks" / "04_ilnn_cifar_genomics.ipynb")
    assert nb04["n_seeds"].type == int | None
    assert nb04["cifar_datasets"].type == tuple[str, ...] | None
    # an injected preset class wins over the cell
    specs = notebook_params(TINY, TinyConfig)
    assert specs["tags"].type == tuple[str, ...] | None and specs["tags"].origin == "preset"


def test_values_are_parsed_by_type():
    specs = notebook_params(TINY)
    assert check_value(specs["x"], "1e-3") == 0.001 and check_value(specs["x"], ".5") == 0.5
    assert check_value(specs["tags"], "[cifar10, cifar100]") == ("cifar10", "cifar100")
    assert check_value(specs["tags"], '["a,b"]') == ("a,b",)
    assert check_value(specs["tags"], "none") is None
    assert check_value(specs["fail"], "true") is True
    with pytest.raises(ValueError, match=r"-p x: expected a float; got 'abc'"):
        check_value(specs["x"], "abc")
    with pytest.raises(ValueError, match="expected a list of str or none; got 'cifar100'"):
        check_value(specs["tags"], "cifar100")  # not a tuple of characters
    with pytest.raises(ValueError, match="is not valid YAML/JSON"):
        parse_value("[a, {b", tuple[str, ...], "-p tags")
    with pytest.raises(ValueError, match="expected 'cpu', 'cuda'"):
        check_value(notebook_params(TINY)["device"], "gpu")
    # sweep axes split outside brackets and quotes; another separator on request
    assert split_values("[a,b],[c],'d,e'") == ["[a,b]", "[c]", "'d,e'"]
    assert split_values("[a,b];[c]", ";") == ["[a,b]", "[c]"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "xx", "5,7"], "-p xx: tiny_claims.ipynb has no parameter 'xx' (did you mean 'x'?)"),
        (["-p", "x", "abc"], "-p x: expected a float; got 'abc'"),
        (["-p", "tags", "cifar100"], "-p tags: expected a list of str or none"),
        (["-p", "tags", "[a,b"], "unbalanced brackets"),
        (["-p", "results_dir", "/tmp/x"], "set by the runner"),
        (["-p", "scale", "medium"], "use --scale"),
        (["-p", "x", "1,1"], "given more than once"),
        (["-p", "x", "1", "--device", "gpu"], "expected 'cpu', 'cuda'"),
        (["-p", "x", "1", "--data-dir", "/nonexistent/hgutils"], "'/nonexistent/hgutils' does not exist"),
        (["-p", "x", "1", "--cluster", "lokal"], "--cluster must be 'local' or 'local:N'"),
        (["-p", "x", "1", "--scheduler", "nohost"], "--scheduler must be an address"),
    ],
)
def test_sweep_rejects_bad_input_before_launch(tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert main(["sweep", str(TINY), *args, "--out", str(out)]) == 2
    assert message in _one_error_line(capsys.readouterr().err)
    assert not out.exists()  # nothing ran, nothing was written


def test_preset_ranges_are_checked_before_launch(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"x=50: TinyConfig.x must be <= 10.0; got 50"):
        runner.sweep(TINY, {"x": [0.5, 50]}, out=out, preset_lookup=lambda nb: TinyConfig)
    assert not out.exists()


def test_reproduce_checks_overrides_and_data_dir_before_launch(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    shutil.copy(TINY, nbdir / "01_tiny.ipynb")
    out = tmp_path / "runs"
    base = ["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--out", str(out)]
    for extra, message in [
        (["-p", "xx", "1"], "01_tiny.ipynb has no parameter 'xx'"),
        (["-p", "x", "abc"], "-p x: expected a float"),
        (["-p", "data_dir", "/tmp"], "use --data-dir"),
        (["--data-dir", str(tmp_path)], "holds none of the datasets hgutils loads"),
        (["--device", "tpu"], "expected 'cpu', 'cuda'"),
    ]:
        assert main(base + extra) == 2
        assert message in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_wrong_explicit_data_dir_is_an_error_for_a_real_notebook(tmp_path, capsys):
    out = tmp_path / "runs"
    rc = main(["reproduce", "--only", "04", "--scale", "smoke", "--data-dir", "/nonexistent", "--out", str(out)])
    assert rc == 2
    assert "--data-dir '/nonexistent' does not exist" in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_data_dir_check_accepts_folders_holding_a_dataset(tmp_path, monkeypatch):
    (tmp_path / "teb").mkdir()
    (tmp_path / "teb" / "test_sines.csv").write_text("seq,label\nACGT,0\n")
    assert runner.check_data_dir(tmp_path) == ["teb"]
    cifar = tmp_path / "c"
    cifar.mkdir()
    (cifar / "cifar10-images.zip").write_bytes(b"")
    assert runner.check_data_dir(cifar) == ["cifar10"]
    with pytest.raises(ValueError, match="is not a folder"):
        runner.check_data_dir(cifar / "cifar10-images.zip")
    # an injected finder (what hgutils.data may provide later) decides
    assert runner.check_data_dir(tmp_path, finder=lambda p: ["mnist"]) == ["mnist"]
    with pytest.raises(ValueError, match="holds none"):
        runner.check_data_dir(tmp_path, finder=lambda p: [])
    # $HGUTILS_DATA is an explicit location too: a wrong one stops a sweep before launch
    monkeypatch.setenv("HGUTILS_DATA", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="HGUTILS_DATA .* does not exist"):
        runner.sweep(TINY, {"x": [1.0]}, out=tmp_path / "out", echo=lambda s: None)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------
# the quick pass before any heavy import: the parameters cells alone
# --------------------------------------------------------------------------------------------
COMMITTED = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_parameters_cell_reader_agrees_with_papermill():
    import papermill as pm

    from hgutils.runner.params import parameters_cell

    for nb in [*COMMITTED, TINY]:
        assert parameters_cell(nb) == pm.inspect_notebook(str(nb)), nb.name


def test_cell_types_never_refuse_what_the_preset_accepts():
    """The quick pass types values by the parameters cell; where it declares a type it is the preset's."""
    from hgutils.runner.params import preset_class

    for nb in COMMITTED:
        cell, full = notebook_params(nb, None), notebook_params(nb, preset_class(nb))
        for name, spec in cell.items():
            if spec.type is not Any:
                assert spec.type == full[name].type, f"{nb.name} {name}: cell {spec.type} vs preset {full[name].type}"


def test_every_notebook_records_its_smoke_cost_and_devices():
    from hgutils.runner.params import preset_class

    for nb in COMMITTED:
        preset = preset_class(nb)
        assert preset.COST_MINUTES.get("smoke", 0) > 0, f"{nb.stem}: no smoke cost (the plan would say unknown)"
        assert set(preset.DEVICES) <= {"cpu", "cuda", "mps"} and "cpu" in preset.DEVICES
