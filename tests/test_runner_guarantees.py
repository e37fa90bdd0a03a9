"""What the runner guarantees about its input (issue 37): sweep folders that name every value exactly,
NaN and infinity refused however spelled, an upper bound on every count, known task and dataset
names, the option the user typed named in each message. No kernel starts here (docs/guarantees.md).
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from pathlib import Path

import pytest
from _cli_helpers import files_under, one_error_line
from hypothesis import given
from hypothesis import strategies as st

from hgutils import runner
from hgutils.__main__ import main
from hgutils.experiments.weightspace_protocol import ComparisonSettings
from hgutils.presets import Preset
from hgutils.runner.points import point_slug, value_slug

TINY = Path(__file__).parent / "notebooks" / "tiny_claims.ipynb"
CONFIG_MODULES = [
    "hgutils.experiments.nb00_template",
    "hgutils.experiments.nb01_inr_classification",
    "hgutils.experiments.nb02_sine_regression",
    "hgutils.experiments.nb03_cifar_generalization",
    "hgutils.experiments.nb04_ilnn_cifar_genomics",
    "hgutils.experiments.nb05_msa_rich_vs_lazy",
    "hgutils.experiments.nb06_pe_symmetry_readout",
    "hgutils.experiments.nb07_training_geometry",
]


# --------------------------------------------------------------------------------------------
# 1. point folders name every value exactly
# --------------------------------------------------------------------------------------------
def test_a_point_folder_keeps_the_sign_and_the_type_of_its_value():
    assert point_slug({"gain_rich": -1}) == "gain_rich=-1"
    assert point_slug({"gain_rich": 1}) == "gain_rich=1"
    assert point_slug({"lr": -0.5, "n": 3}) == "lr=-0.5__n=3"
    assert point_slug({"ds": ("cifar10", "cifar100")}) == "ds=cifar10+cifar100"
    # a string that reads as a number, an empty list, a lossy string: readable text + a hash of the value
    assert value_slug("1") != value_slug(1) and value_slug("1").startswith("1~")
    assert value_slug("a b/c") != value_slug("a-b-c") and value_slug("a b/c").startswith("a-b-c~")
    assert value_slug(("a+b",)) != value_slug(("a", "b"))
    assert value_slug(()) != value_slug(None)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_values = st.one_of(_scalars, st.lists(_scalars, max_size=3).map(tuple))


@given(st.lists(_values, min_size=2, max_size=6))
def test_distinct_values_never_share_a_folder(values):
    canonical = {json.dumps(runner.params.to_papermill(v)) for v in values}
    slugs = {point_slug({"p": v}) for v in values}
    assert len(slugs) == len(canonical)
    assert all("/" not in s and "\0" not in s and len(s) <= 120 for s in slugs)


def test_a_folder_holding_other_parameters_is_kept_and_the_sweep_refused(tmp_path, capsys):
    out = tmp_path / "sweep"
    # the folder an older layout gave x=-1 ("x=1"): its record says -1
    folder = out / "smoke" / "x=1"
    folder.mkdir(parents=True)
    record = {"key": {"parameters": {"scale": "smoke", "x": -1}}, "key_hash": "0" * 16, "files": {}}
    (folder / "run.json").write_text(json.dumps(record))
    before = files_under(out)
    assert main(["sweep", str(TINY), "-p", "x", "1", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "holds the result of other parameters (x=-1 (asked: 1))" in line and "--force" in line
    assert files_under(out) == before and json.loads((folder / "run.json").read_text()) == record


# --------------------------------------------------------------------------------------------
# 2. NaN and infinity, however spelled
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["nan", ".nan", ".NaN", "inf", ".inf", " -.inf", "1e400", " -1e400", "[1.0, .nan]"])
def test_a_non_finite_number_is_refused_before_launch(tmp_path, capsys, text):
    out = tmp_path / "sweep"
    assert main(["sweep", str(TINY), "-p", "x", text, "--sep", ";", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "-p x" in line and ("finite" in line or "expected a float" in line)
    assert not out.exists()


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_preset_refuses_a_non_finite_float(value):
    from hgutils.experiments.nb05_msa_rich_vs_lazy import RichLazyConfig

    with pytest.raises(ValueError, match="RichLazyConfig.gain_rich: must be finite"):
        RichLazyConfig.from_scale("smoke", gain_rich=value)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_an_optional_float_field_says_a_non_finite_value_must_be_finite(value):
    # a float-or-None field: the union used to hide the reason behind "expected a float or none"
    from hgutils.presets import coerce

    with pytest.raises(ValueError, match="x: must be finite"):
        coerce(value, float | None, "x")
    assert coerce(None, float | None, "x") is None and coerce(0.5, float | None, "x") == 0.5


def test_a_parameter_of_unknown_type_refuses_a_non_finite_number():
    spec = runner.ParamSpec("anything", typing.Any, "None", "", "unknown")
    for text in (".nan", "1e400", "[1, .inf]"):
        with pytest.raises(ValueError, match="-p anything: must be finite"):
            runner.params.check_value(spec, text)


# --------------------------------------------------------------------------------------------
# 3. every count, size and step has an upper bound
# --------------------------------------------------------------------------------------------
def _int_fields(cls: type[Preset]) -> list[str]:
    def has_int(tp: typing.Any) -> bool:
        return tp is int or any(has_int(a) for a in typing.get_args(tp) if a is not Ellipsis)

    return [name for name, tp in cls.field_types().items() if has_int(tp)]


def _configs() -> list[type[Preset]]:
    import importlib

    return [ComparisonSettings, *(importlib.import_module(m).CONFIG for m in CONFIG_MODULES)]


@pytest.mark.parametrize("cls", _configs(), ids=lambda c: c.__name__)
def test_every_integer_field_has_an_upper_bound_its_presets_respect(cls):
    unbounded = [n for n in _int_fields(cls) if cls.BOUNDS.get(n, (None, None))[1] is None]
    assert unbounded == [], f"{cls.__name__}: no upper bound for {unbounded}"
    for scale in ("smoke", "medium", "paper"):
        cls.from_scale(scale)  # every preset value lies inside its bounds
    name = _int_fields(cls)[0]
    hi = cls.BOUNDS[name][1]
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    too_big = (hi + 1,) if typing.get_origin(cls.field_types()[name]) is tuple else hi + 1
    if field.name == "epoch_caps":
        too_big = (("GMN", hi + 1),)
    with pytest.raises(ValueError, match=rf"{cls.__name__}\.{name} must be <= {hi}; .*upper bound"):
        cls.check_value(name, too_big)


def test_an_absurd_count_is_refused_by_the_command_line_naming_the_bound(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", "05", "-p", "n_seeds", "1000000000", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "RichLazyConfig.n_seeds must be <= 100; got 1000000000 (the upper bound" in line
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# 4. name-like parameters: known tasks and datasets only
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("only", "name", "value", "says"),
    [
        ("04", "genomics_tasks", "[synthetic, teb/../../../../etc/passwd]", "is not a task name"),
        ("04", "genomics_tasks", "[gue/covid/../../x]", "is not a task name"),
        ("04", "cifar_datasets", "[cifar10, ../cifar]", "'../cifar' is not a known value"),
        ("04", "cifar_schedule", "../x", "'../x' is not a known value"),
        ("01", "inputs", "raw", "'raw' is not a known value; expected one of standardize, delta, rms, none"),
    ],
)
def test_an_unknown_task_or_dataset_is_refused_before_launch(tmp_path, capsys, only, name, value, says):
    out = tmp_path / "runs"
    argv = ["reproduce", "--only", only, "--scale", "smoke", "-p", name, value, "--out", str(out)]
    assert main(argv) == 2
    assert says in one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_known_task_and_dataset_names_pass_and_others_do_not():
    from hgutils.experiments.nb01_inr_classification import INRClassificationConfig
    from hgutils.experiments.nb03_cifar_generalization import GeneralizationConfig
    from hgutils.experiments.nb04_ilnn_cifar_genomics import ILNNConfig

    for field, value in (("bn_task", "/etc/passwd"), ("genomics_seeds", ("teb/../x=3",))):
        with pytest.raises(ValueError, match="is not a task name"):
            ILNNConfig.from_scale("smoke", **{field: value})
    with pytest.raises(ValueError, match="'imagenet' is not a known value"):
        INRClassificationConfig.from_scale("smoke", datasets=("mnist", "imagenet"))
    with pytest.raises(ValueError, match="'svhn' is not a known value"):
        GeneralizationConfig.from_scale("smoke", dataset="svhn")
    with pytest.raises(ValueError, match="'Transformer' is not a known value"):
        GeneralizationConfig.from_scale("smoke", variants=("GMN", "Transformer"))
    cfg = ILNNConfig.from_scale("smoke", genomics_tasks=("synthetic", "teb/dna_cmc", "gue/H3K4me3"))
    assert cfg.genomics_tasks == ("synthetic", "teb/dna_cmc", "gue/H3K4me3")


# --------------------------------------------------------------------------------------------
# 8. messages name what the user typed
# --------------------------------------------------------------------------------------------
def test_a_bad_device_is_reported_as_the_option_typed(tmp_path, capsys):
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    (nbdir / "01_tiny.ipynb").write_bytes(TINY.read_bytes())
    for argv in (
        ["reproduce", "--notebook-dir", str(nbdir), "--scale", "smoke", "--device", "tpu"],
        ["sweep", str(TINY), "-p", "x", "1", "--device", "tpu"],
    ):
        assert main([*argv, "--out", str(tmp_path / "out")]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert line.startswith("error: --device") and "-p device" not in line and "'tpu'" in line


def test_an_empty_value_in_a_sweep_axis_is_named_as_empty(tmp_path, capsys):
    assert main(["sweep", str(TINY), "-p", "seed", "0,,1", "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "-p seed: expected an int; got an empty value" in line and "None" not in line


# --------------------------------------------------------------------------------------------
# 5. cache entries hold tensors and plain data; reading one runs no code
# --------------------------------------------------------------------------------------------
class _Payload:
    """A pickle that runs code when it is loaded: it creates the file it names."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_a_cache_entry_that_would_run_code_is_recomputed_not_loaded(tmp_path):
    import hashlib
    import io

    import torch

    from hgutils import repro

    marker = tmp_path / "code-ran"
    entry = tmp_path / "cache" / "thing" / f"{repro.config_hash(1)}.pt"
    entry.parent.mkdir(parents=True)
    buf = io.BytesIO()
    torch.save({"value": _Payload(str(marker))}, buf)
    payload = buf.getvalue()
    # a well-formed entry (header, checksum), as anyone who can write the cache folder could make it
    entry.write_bytes(repro._MAGIC + payload + hashlib.sha256(payload).digest())
    assert repro.cached("thing", 1, lambda: torch.arange(3), root=tmp_path / "cache").tolist() == [0, 1, 2]
    assert not marker.exists()
    assert repro.load_checked(entry).tolist() == [0, 1, 2]  # rewritten in the tensor-only format


def test_the_tensor_format_round_trips_what_the_caches_hold():
    from collections import OrderedDict

    import numpy as np
    import torch

    from hgutils import tensorfile
    from hgutils.experiments.nb05_msa_rich_vs_lazy import RichLazyConfig
    from hgutils.loop import GateResult

    state = OrderedDict(w=torch.randn(2, 3), b=torch.zeros(3, dtype=torch.float64))
    state._metadata = OrderedDict({"": {"version": 2}})
    value = {
        "cfg": RichLazyConfig.from_scale("smoke"),
        "gate": GateResult(True, "loss fell 40 %", 2.3, 1.4, 0.9, 0.5),
        "state": state,
        "arrays": [np.arange(6, dtype=">i4").reshape(2, 3), np.array(["a", "bc"]), np.float32(1.5)],
        1.5: (None, True, -3, math.nan, math.inf, "x", b"\x00\xff"),
        "misc": [torch.float16, torch.device("cpu"), torch.Size([2, 3]), {2, 1}, frozenset({"a"})],
        "path": Path("a/b"),
    }
    back = tensorfile.loads(tensorfile.dumps(value))
    assert back["cfg"] == value["cfg"] and back["gate"] == value["gate"]
    assert list(back["state"]) == ["w", "b"] and back["state"]._metadata == {"": {"version": 2}}
    assert torch.equal(back["state"]["w"], state["w"]) and back["state"]["b"].dtype == torch.float64
    a, s, f = back["arrays"]
    assert a.dtype == np.dtype(">i4") and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert s.tolist() == ["a", "bc"] and type(f) is np.float32 and f == 1.5
    t = back[1.5]
    assert t[:3] == (None, True, -3) and math.isnan(t[3]) and t[4:] == (math.inf, "x", b"\x00\xff")
    assert back["misc"] == value["misc"] and back["path"] == Path("a/b")


def test_the_tensor_format_refuses_objects_from_outside_hgutils():
    import fractions

    from hgutils import tensorfile

    @dataclasses.dataclass
    class Outside:
        x: int = 1

    Outside.__module__ = "somewhere"
    for bad in (_Payload("x"), fractions.Fraction(1, 3), Outside()):
        with pytest.raises(TypeError, match="cannot store"):
            tensorfile.dumps({"k": [bad]})
