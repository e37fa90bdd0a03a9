"""Command-line text to typed values: ``-p NAME VALUE`` and the values of a sweep axis.

- :func:`split_values` -- a sweep axis ``v1,v2`` split on a separator that ignores commas inside
  brackets and quotes, so lists can be swept (``-p cifar_datasets '[cifar10],[cifar10,cifar100]'``);
- :func:`parse_value` -- one value by the parameter's type: YAML/JSON for numbers, booleans and lists,
  numbers in any notation inside lists too (``-1e-3``, ``[1e-3,1e-2]``), a plain string for ``str``
  (never split into characters), ``none`` for ``None``;
- :func:`check_finite` -- NaN and infinity refused anywhere in a value, however spelled
  (``"<where>: must be finite ..."``).

Every check raises ``ValueError`` with one line naming the option, what was expected and what came.
:mod:`hgutils.runner.params` (which re-exports these) says which type each parameter has.
"""

from __future__ import annotations

import contextlib
import math
import re
import types
import typing
from typing import Any, Literal

from hgutils.presets import coerce, type_name

__all__ = ["NONE_WORDS", "check_finite", "parse_value", "parse_values", "split_values"]

NONE_WORDS = ("none", "None", "null", "~")


def split_values(text: str, sep: str = ",") -> list[str]:
    """Split a sweep axis on ``sep``, ignoring separators inside ``[...]``, ``{...}``, ``(...)`` and quotes.

    Raises
    ------
    ValueError
        For an empty axis or unbalanced brackets/quotes.
    """
    if not sep:
        raise ValueError("the value separator must not be empty")
    if text.strip() == "":
        raise ValueError("a sweep parameter needs at least one value")
    parts, buf, depth, quote, i = [], [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced {ch!r} in {text!r}")
        elif depth == 0 and text.startswith(sep, i):
            parts.append("".join(buf))
            buf, i = [], i + len(sep)
            continue
        buf.append(ch)
        i += 1
    if quote or depth:
        raise ValueError(f"unbalanced brackets or quotes in {text!r}")
    parts.append("".join(buf))
    return [p.strip() for p in parts]


def _yaml(text: str, where: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"{where}: {text!r} is not valid YAML/JSON ({first})") from None


def _strings_only(tp: Any) -> bool:
    """True for ``str`` and ``Literal`` of strings (optionally ``| None``): command-line text is taken as is."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            return False
        tp = args[0]
    if tp is str:
        return True
    return typing.get_origin(tp) is Literal and all(isinstance(a, str) for a in typing.get_args(tp))


def parse_value(text: str, tp: Any = Any, where: str = "value") -> Any:
    """Parse one command-line value by its type and check it (see :func:`hgutils.presets.coerce`).

    ``none``/``null`` → ``None`` (when allowed); ``str`` values are taken verbatim; numbers, booleans
    and lists are read as YAML/JSON, numbers in any notation, inside lists too (``1e-3``, ``.5``,
    ``-1e-3``, ``[1e-3,1e-2]``; a list of ``str`` keeps ``"1e-3"`` as text). NaN and infinity,
    however spelled (``nan``, ``.inf``, ``1e400``), are refused: ``"<where>: must be finite ..."``.

    Raises
    ------
    ValueError
        One line: ``"<where>: expected <type>; got <value> (<type>)"``, ``"<where>: must be finite ..."``
        or a YAML error.
    """
    text = text.strip()
    if not text:
        raise ValueError(f"{where}: expected {type_name(tp)}; got an empty value")
    if text in NONE_WORDS:
        return coerce(None, tp, where)
    if _strings_only(tp):
        return coerce(text, tp, where)
    value = _yaml(text, where)
    if isinstance(value, dict):
        raise ValueError(f"{where}: expected {type_name(tp)}; got a mapping {text!r}")
    numbers = _numbers(value)  # YAML 1.1 reads 1e-3, .5 and nan as strings, in lists too
    try:
        out = coerce(numbers, tp, where)
    except ValueError as err:
        if numbers is not value:
            with contextlib.suppress(ValueError):  # a list of str may hold "1e-3" as text
                return coerce(value, tp, where)
        check_finite(numbers, where)  # NaN or infinity: say so, whatever the type expected
        raise err from None
    check_finite(out, where)
    return out


_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(nan|inf|infinity)", re.IGNORECASE)


def _numbers(value: Any) -> Any:
    """``value`` with every string that spells a number made a float, in lists too (``value`` itself if none)."""
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return float(value)
    if isinstance(value, (list, tuple)):
        items = [_numbers(v) for v in value]
        if any(a is not b for a, b in zip(items, value)):
            return type(value)(items)
    return value


def parse_values(text: str, tp: Any = Any, sep: str = ",", where: str = "value") -> list[Any]:
    """A sweep axis: ``"1,2,0.5,true,none,abc"`` → ``[1, 2, 0.5, True, None, "abc"]`` (typed by ``tp``)."""
    return [parse_value(v, tp, where) for v in split_values(text, sep)]


def check_finite(value: Any, where: str) -> None:
    """Refuse NaN and infinity anywhere in a value, also for a parameter whose type is not known."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: must be finite (NaN and infinity are refused); got {value!r}")
    if isinstance(value, (list, tuple)):
        for v in value:
            check_finite(v, where)
