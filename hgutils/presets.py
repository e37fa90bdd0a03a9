"""Scale presets: one frozen dataclass per notebook, with ``smoke`` / ``medium`` / ``paper`` values.

A notebook's parameters cell sets ``scale`` (and optionally any single field); the notebook then
calls ``Config.from_scale(scale, **overrides)``. Presets change *sizes*, never code paths.

Example
-------
>>> from dataclasses import dataclass
>>> from typing import ClassVar
>>> @dataclass(frozen=True)
... class Demo(Preset):
...     n_nets: int = 8
...     epochs: int = 1
...     PRESETS: ClassVar[dict] = {"smoke": {}, "medium": {"n_nets": 64}, "paper": {"n_nets": 1024}}
>>> Demo.from_scale("medium", epochs=3)
Demo(n_nets=64, epochs=3)
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

SCALES: tuple[str, ...] = ("smoke", "medium", "paper")

T = TypeVar("T", bound="Preset")


@dataclasses.dataclass(frozen=True)
class Preset:
    """Base class for a notebook's configuration; subclasses are frozen dataclasses.

    Subclasses declare their fields with the ``smoke`` values as defaults and a class attribute
    ``PRESETS = {"smoke": {...}, "medium": {...}, "paper": {...}}`` of per-scale overrides.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def from_scale(cls: type[T], scale: str, **overrides: Any) -> T:
        """Build the config for ``scale``, then apply ``overrides`` (``None`` values are ignored).

        Raises
        ------
        ValueError
            For an unknown scale or an override that names no field of the config.
        """
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        values = dict(cls.PRESETS.get(scale, {}))
        unknown = (set(values) | set(overrides)) - names
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s) {sorted(unknown)}; fields are {sorted(names)}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict view (for config hashing and the claims ledger)."""
        return dataclasses.asdict(self)
