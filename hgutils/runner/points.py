"""Sweep point folders: one name per grid point that names every value exactly, so two points never share one.

A point ``{"gain_rich": -1, "n_seeds": 3}`` lives in ``gain_rich=-1__n_seeds=3``. A value is written as
itself when that text identifies it exactly: numbers, booleans and ``null`` in their JSON spelling
(the sign kept: ``-1``, ``-0.5``, ``1e-05``; ``1e20`` for ``1e+20``), a string made of letters, digits,
``.``, ``-`` and single ``_`` that does not read as a number or a literal, and a list of two or more
such values joined by ``+``. Any other value (``"a b/c"``, ``"1"`` as a string, an empty, one-item or
nested list) is written as a readable
approximation followed by ``~`` and a hash of its exact JSON (``name=a-b-c~3f2a9c1e``), so the folder
name stays unique. A name longer than :data:`MAX_LEN` characters is cut and ends with a hash of the
whole point.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from hgutils.runner.params import to_papermill

MAX_LEN = 120
_SAFE_STR = re.compile(r"[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*")
_LITERAL = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?\.?(inf|nan)|true|false|null|none|yes|no|on|off|~")


def _digest(value: Any, length: int) -> str:
    return hashlib.sha256(json.dumps(to_papermill(value), sort_keys=True).encode()).hexdigest()[:length]


def _exact(value: Any) -> str | None:
    """The text of ``value`` when it identifies the value exactly (module docstring), else ``None``."""
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value).replace("e+", "e")  # 1e+20 -> 1e20: "+" only ever joins list items
    if isinstance(value, str):
        plain = _SAFE_STR.fullmatch(value) and not _LITERAL.fullmatch(value.lower())
        return value if plain else None
    if isinstance(value, (list, tuple)) and len(value) > 1:  # a one-item list would read as its item
        parts = [_exact(v) if not isinstance(v, (list, tuple)) else None for v in value]
        return "+".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    return None


def value_slug(value: Any) -> str:
    """``value`` as a folder-name fragment that names it exactly (module docstring)."""
    exact = _exact(value)
    if exact is not None:
        return exact
    text = value if isinstance(value, str) else json.dumps(to_papermill(value))
    readable = re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-")[:40] or "_"
    return f"{readable}~{_digest(value, 8)}"


def point_slug(point: dict[str, Any]) -> str:
    """The folder name of one grid point: ``name=value`` pairs joined by ``__`` (module docstring).

    Distinct points always get distinct names: each value is written exactly or with a hash of its
    exact value, and a name cut to :data:`MAX_LEN` characters ends with a hash of the whole point.
    """
    slug = "__".join(f"{k}={value_slug(v)}" for k, v in point.items())
    if len(slug) > MAX_LEN:
        slug = f"{slug[: MAX_LEN - 20]}__{_digest(point, 16)}"
    return slug
