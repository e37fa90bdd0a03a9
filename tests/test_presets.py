"""Presets check types and ranges in from_scale; every preset class in the package is valid at every scale."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pytest

import hgutils
from hgutils.presets import SCALES, Preset, coerce


@dataclass(frozen=True)
class Demo(Preset):
    n_seeds: int = 2
    lr: float = 1e-3
    datasets: tuple[str, ...] = ("cifar10",)
    widths: tuple[int, ...] = (4, 8)
    label: Literal["family", "gene"] = "family"
    augment: bool = True
    limit: int | None = None
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "medium": {"n_seeds": 3}, "paper": {"n_seeds": 5}}
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {"n_seeds": (1, None), "lr": (0.0, 1.0)}
    COST_MINUTES: ClassVar[dict[str, float]] = {"smoke": 0.5, "medium": 12.0}


def test_from_scale_applies_presets_and_checks_overrides():
    assert Demo.from_scale("medium").n_seeds == 3
    cfg = Demo.from_scale("smoke", datasets=["cifar10", "cifar100"], widths=[8, 16], lr=1, limit=None)
    assert cfg.datasets == ("cifar10", "cifar100") and cfg.widths == (8, 16)  # lists become tuples
    assert cfg.lr == 1 and isinstance(cfg.lr, int)  # ints are fine for floats, left unchanged (stable hashes)
    with pytest.raises(ValueError, match=r"Demo.n_seeds: expected an int; got 'abc' \(str\)"):
        Demo.from_scale("smoke", n_seeds="abc")
    with pytest.raises(ValueError, match=r"Demo.datasets: expected a list of str; got 'cifar100'"):
        Demo.from_scale("smoke", datasets="cifar100")  # never a tuple of characters
    with pytest.raises(ValueError, match=r"Demo.widths\[1\]: expected an int; got 'x'"):
        Demo.from_scale("smoke", widths=(4, "x"))
    with pytest.raises(ValueError, match="Demo.label: expected one of 'family', 'gene'"):
        Demo.from_scale("smoke", label="species")
    with pytest.raises(ValueError, match="Demo.augment: expected true or false; got 1"):
        Demo.from_scale("smoke", augment=1)
    with pytest.raises(ValueError, match="Demo.n_seeds must be >= 1; got 0"):
        Demo.from_scale("smoke", n_seeds=0)
    with pytest.raises(ValueError, match="Demo.lr must be <= 1.0; got 3.0"):
        Demo.from_scale("smoke", lr=3.0)
    with pytest.raises(ValueError, match="no field"):
        Demo.from_scale("smoke", n_sedes=3)
    with pytest.raises(ValueError, match="scale must be one of"):
        Demo.from_scale("huge")
    assert Demo.COST_MINUTES["medium"] == 12.0 and Preset.COST_MINUTES == {}


def test_coerce_rejects_what_python_would_silently_accept():
    assert coerce(True, bool) is True
    with pytest.raises(ValueError):
        coerce(True, int)  # bool is an int subclass, but not a count
    with pytest.raises(ValueError):
        coerce("3", int)
    with pytest.raises(ValueError):
        coerce([1, 2], tuple[int, int, int])
    assert coerce(None, int | None) is None
    assert coerce([1, 2], tuple[int, int]) == (1, 2)


def _preset_classes() -> list[type[Preset]]:
    for mod in pkgutil.walk_packages(hgutils.__path__, "hgutils."):
        if not mod.name.startswith("hgutils.runner"):
            importlib.import_module(mod.name)

    def subs(c: type) -> list[type]:
        return [s for k in c.__subclasses__() for s in (k, *subs(k))]

    return [c for c in subs(Preset) if c.__module__.startswith("hgutils.")]


def test_every_preset_in_the_package_type_checks_at_every_scale():
    classes = _preset_classes()
    assert classes, "no Preset subclasses found"
    for cls in classes:
        for scale in SCALES:
            cls.from_scale(scale)  # raises on a preset value of the wrong type or out of range
        for name in cls.COST_MINUTES:
            assert name in SCALES, f"{cls.__name__}.COST_MINUTES has an unknown scale {name!r}"


def test_print_shows_floats_compactly_and_repr_stays_exact():
    """``print(cfg)`` (every notebook's second cell) shows floats to 6 significant digits, in tuples and dicts too,
    so a published notebook never stores a raw 17-digit float; ``repr`` keeps the exact values."""
    import re

    from hgutils.experiments.nb01_inr_classification import CONFIG

    cfg = CONFIG.from_scale("medium")
    shown = str(cfg)
    assert "val_fraction=0.0714286" in shown and not re.search(r"\d\.\d{12,}", shown)
    assert "0.07142857142857142" in repr(cfg)
    assert shown.startswith("INRClassificationConfig(") and "lr_grid=(0.001, 0.003)" in shown
    from hgutils.presets import _compact

    assert _compact((1 / 3,)) == "(0.333333,)" and _compact({"a": [2 / 3, "x"]}) == "{'a': [0.666667, 'x']}"
