"""Scale presets: one frozen dataclass per notebook, with ``smoke`` / ``medium`` / ``paper`` values.

A notebook's parameters cell sets ``scale`` (and optionally any single field); the notebook then
calls ``Config.from_scale(scale, **overrides)``. Presets change *sizes*, never code paths.

``from_scale`` checks every value against the field's annotation (``int``, ``float``, ``bool``,
``str``, ``Literal[...]``, ``tuple[T, ...]``, ``list[T]``, ``T | None``) and against the class's
``BOUNDS``, so a bad override fails before any work starts, with one line naming the field, what was
expected and what came. The runner (``python -m hgutils sweep|reproduce``) calls it before launching
a notebook. ``COST_MINUTES`` records the measured wall time of the notebook per scale (the
``reproduce`` plan prints it; empty means "unknown"). ``DEVICES`` names the devices the notebook
computes on (a notebook whose work runs on the CPU whatever its ``device`` parameter says declares
``("cpu",)``, and the runner says so instead of letting a ``--device cuda`` run use the CPU silently).

Example
-------
>>> from dataclasses import dataclass
>>> from typing import ClassVar
>>> @dataclass(frozen=True)
... class Demo(Preset):
...     n_nets: int = 8
...     epochs: int = 1
...     PRESETS: ClassVar[dict] = {"smoke": {}, "medium": {"n_nets": 64}, "paper": {"n_nets": 1024}}
...     BOUNDS: ClassVar[dict] = {"n_nets": (1, None)}
>>> Demo.from_scale("medium", epochs=3)
Demo(n_nets=64, epochs=3)
>>> Demo.from_scale("smoke", n_nets="abc")
Traceback (most recent call last):
...
ValueError: Demo.n_nets: expected an int; got 'abc' (str)
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any, ClassVar, Literal, TypeVar, Union

SCALES: tuple[str, ...] = ("smoke", "medium", "paper")

T = TypeVar("T", bound="Preset")


# --------------------------------------------------------------------------------------------
# type checking of values against annotations
# --------------------------------------------------------------------------------------------
def type_name(tp: Any) -> str:
    """Readable name of an annotation, used in error messages (``"a list of str"``, ``"an int or none"``)."""
    if tp is Any:
        return "any value"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        parts = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" or none" if type(None) in args else "")
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (tuple, list, Sequence) or tp in (tuple, list):
        inner = [a for a in args if a is not Ellipsis]
        if origin is tuple and args and args[-1] is not Ellipsis:
            return f"a list of {len(args)} values ({', '.join(_bare(a) for a in args)})"
        return "a list of " + (_bare(inner[0]) if inner else "values")
    return {int: "an int", float: "a float", bool: "true or false", str: "a string"}.get(tp, _bare(tp))


def _bare(tp: Any) -> str:
    if tp in (int, float, bool, str):
        return tp.__name__
    return type_name(tp) if typing.get_origin(tp) else getattr(tp, "__name__", str(tp))


def coerce(value: Any, tp: Any, where: str = "value") -> Any:
    """Check ``value`` against the annotation ``tp`` and return it in canonical form.

    A ``float`` must be finite (NaN and infinity are refused however they were spelled). Lists
    become tuples for ``tuple[...]`` fields (and tuples lists for ``list[...]``); ``Path``
    becomes ``str`` for ``str`` fields; ints are accepted for ``float`` fields unchanged (so config
    hashes do not move). Nothing else is converted: a string is never split into characters, a
    number is never a string.

    Raises
    ------
    ValueError
        ``"<where>: expected <type>; got <value> (<its type>)"``.
    """

    def fail() -> ValueError:
        return ValueError(f"{where}: expected {type_name(tp)}; got {value!r} ({type(value).__name__})")

    if tp is Any or tp is object:
        return value
    if isinstance(value, float) and not math.isfinite(value):  # before the union's "expected ..." can hide it
        raise ValueError(f"{where}: must be finite (NaN and infinity are refused); got {value!r}")
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            if type(None) in args:
                return None
            raise fail()
        for arg in (a for a in args if a is not type(None)):
            try:
                return coerce(value, arg, where)
            except ValueError:
                continue
        raise fail()
    if origin is Literal:
        if value in args and not (isinstance(value, bool) and not any(isinstance(a, bool) for a in args)):
            return value
        raise fail()
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise fail()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        if hasattr(value, "__index__") and not isinstance(value, bool) and type(value).__module__ == "numpy":
            return int(value)
        raise fail()
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise ValueError(f"{where}: must be finite (NaN and infinity are refused); got {value!r}")
            return value
        if type(value).__module__ == "numpy" and hasattr(value, "item"):
            return coerce(value.item(), tp, where)
        raise fail()
    if tp is str:
        if isinstance(value, str):
            return value
        if isinstance(value, PurePath):
            return str(value)
        raise fail()
    if origin in (tuple, list, Sequence) or tp in (tuple, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise fail()
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                raise fail()
            items = [coerce(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(value, args))]
        else:
            inner = args[0] if args else Any
            items = [coerce(v, inner, f"{where}[{i}]") for i, v in enumerate(value)]
        return list(items) if (origin is list or tp is list) else tuple(items)
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise fail()
    return value  # an annotation this checker does not understand: accept as is


def _leaves(value: Any) -> list[Any]:
    """The scalars of a value, lists flattened (``(("GMN", 15),)`` → ``["GMN", 15]``)."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def check_bounds(value: Any, bounds: tuple[float | None, float | None], where: str) -> None:
    """Raise ``ValueError`` if a number (or any number inside a list, at any depth) lies outside ``[lo, hi]``.

    The message names the bound: ``"X.n_seeds must be <= 100; got 1000000000 (the upper bound in its
    preset's BOUNDS)"``.
    """
    lo, hi = bounds
    for v in _leaves(value):
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if lo is not None and v < lo:
            raise ValueError(f"{where} must be >= {lo}; got {value!r} (the lower bound in its preset's BOUNDS)")
        if hi is not None and v > hi:
            raise ValueError(f"{where} must be <= {hi}; got {value!r} (the upper bound in its preset's BOUNDS)")


def check_choice(value: Any, choices: tuple[str, ...], where: str) -> None:
    """Raise ``ValueError`` if a string (or any string inside a list) is not one of ``choices``."""
    for v in _leaves(value):
        if isinstance(v, str) and v not in choices:
            raise ValueError(f"{where}: {v!r} is not a known value; expected one of {', '.join(choices)}")


def _compact(value: Any) -> str:
    """``repr`` of ``value`` with every float rounded to 6 significant digits (tuples, lists and dicts
    followed); what :meth:`Preset.__str__` prints."""
    if isinstance(value, float):
        return repr(float(f"{value:.6g}"))
    if isinstance(value, tuple):
        inner = ", ".join(_compact(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_compact(k)}: {_compact(v)}" for k, v in value.items()) + "}"
    return repr(value)


# --------------------------------------------------------------------------------------------
# the base class
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Preset:
    """Base class for a notebook's configuration; subclasses are frozen dataclasses.

    Subclasses declare their fields with type annotations and the ``smoke`` values as defaults, and
    class attributes:

    - ``PRESETS = {"smoke": {...}, "medium": {...}, "paper": {...}}`` -- per-scale overrides;
    - ``BOUNDS = {"n_seeds": (1, 100), "val_fraction": (0.0, 1.0)}`` -- inclusive ranges (``None`` =
      unbounded; applied to each number of a list field); every count, size and step field has an
      upper bound (tests/test_presets.py checks it), so an absurd value is refused before launch;
    - ``CHOICES = {"dataset": ("mnist", "cifar10")}`` -- the values a name-like string field (or each
      string of a list field) may take: the datasets, domains, ... the library knows;
    - ``COST_MINUTES = {"smoke": 1.0, "medium": 44.0}`` -- measured wall minutes of the whole
      notebook per scale on the reference machine (2 CPU cores); shown in the ``reproduce`` plan;
    - ``DEVICES = ("cpu",)`` -- the kinds of device the notebook computes on when its ``device``
      parameter names them (default: ``cpu``, ``cuda`` and ``mps``).
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    BOUNDS: ClassVar[dict[str, tuple[float | None, float | None]]] = {}
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {}
    COST_MINUTES: ClassVar[dict[str, float]] = {}
    DEVICES: ClassVar[tuple[str, ...]] = ("cpu", "cuda", "mps")

    def __str__(self) -> str:
        """``Name(field=value, ...)`` as ``print`` shows it in a notebook: every float, inside tuples and dicts
        too, to 6 significant digits (``val_fraction=0.0714286``, not ``0.07142857142857142``); ``repr``
        stays exact (dataclasses give each subclass its own ``__repr__``, never ``__str__``)."""
        parts = (f"{f.name}={_compact(getattr(self, f.name))}" for f in dataclasses.fields(self) if f.repr)
        return f"{type(self).__name__}({', '.join(parts)})"

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether the notebook computes on ``device`` (``cuda:1`` counts as ``cuda``) when asked to."""
        return str(device).split(":", 1)[0] in cls.DEVICES

    @classmethod
    def field_types(cls) -> dict[str, Any]:
        """``{field name: resolved annotation}`` of the dataclass fields (string annotations resolved)."""
        hints = typing.get_type_hints(cls)
        return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(cls)}

    @classmethod
    def check_value(cls, name: str, value: Any) -> Any:
        """Check one field value (type, ``BOUNDS`` and ``CHOICES``) and return it in canonical form.

        Raises
        ------
        ValueError
            For an unknown field, a value of the wrong type or one out of range.
        """
        types_ = cls.field_types()
        if name not in types_:
            raise ValueError(f"{cls.__name__} has no field {name!r}; fields are {sorted(types_)}")
        where = f"{cls.__name__}.{name}"
        value = coerce(value, types_[name], where)
        if name in cls.BOUNDS:
            check_bounds(value, cls.BOUNDS[name], where)
        if name in cls.CHOICES:
            check_choice(value, cls.CHOICES[name], where)
        return value

    @classmethod
    def from_scale(cls: type[T], scale: str, **overrides: Any) -> T:
        """Build the config for ``scale``, then apply ``overrides`` (``None`` values are ignored).

        Every preset value and override is checked against its field's type and ``BOUNDS``.

        Raises
        ------
        ValueError
            For an unknown scale, an override that names no field of the config, or a value of the
            wrong type or out of range (one line: field, expected, got).
        """
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        values = dict(cls.PRESETS.get(scale, {}))
        unknown = (set(values) | set(overrides)) - names
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s) {sorted(unknown)}; fields are {sorted(names)}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        values = {k: cls.check_value(k, v) for k, v in values.items()}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict view (for config hashing and the claims ledger)."""
        return dataclasses.asdict(self)
