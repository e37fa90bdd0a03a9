"""Notebook parameters: what a notebook accepts, parsing ``-p`` values by type, validating before launch.

Names come from the notebook's ``parameters`` cell (:func:`parameters_cell`, read with ``json`` and
``ast`` so that checking a command line imports neither papermill nor nbformat); types come from
the notebook's preset class when it has one (``CONFIG`` in ``hgutils.experiments.nbNN_name``; see
:func:`preset_class`), else from the parameters cell itself: the annotation (``x: float = 1.0``), a
leading comment such as ``# int or None: ...`` / ``# list of str or None: ...``, or the default
literal. Values given on the command line are parsed by that type (:mod:`hgutils.runner.cli_values`,
re-exported here): YAML/JSON for lists (``'[cifar10,cifar100]'``, ``'[1e-3,1e-2]'``), a plain string
for ``str`` (never split into characters), ``none`` for ``None``, NaN and infinity refused. A sweep
axis (``-p NAME v1,v2``) is split on a separator that ignores commas inside brackets and quotes, so
lists can be swept: ``-p cifar_datasets '[cifar10],[cifar10,cifar100]'``.

Every check raises ``ValueError`` with one line naming the parameter, what was expected and what came.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import importlib
import io
import itertools
import json
import os
import re
import tokenize
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hgutils.presets import SCALES, Preset, coerce
from hgutils.runner.cli_values import NONE_WORDS, check_finite, parse_value, parse_values, split_values
from hgutils.runner.notebooks import driver_module

__all__ = [  # the value parsing lives in hgutils.runner.cli_values; re-exported here as before
    "COMMON_TYPES",
    "NONE_WORDS",
    "RUNNER_MANAGED",
    "ParamSpec",
    "check_name",
    "check_value",
    "grid_product",
    "notebook_params",
    "parameters_cell",
    "parse_value",
    "parse_values",
    "preset_class",
    "split_values",
    "to_papermill",
    "validate_against_preset",
]

#: Parameters every numbered notebook has, with their types.
COMMON_TYPES: dict[str, Any] = {
    "scale": Literal["smoke", "medium", "paper"],
    "seed": int,
    "device": str,
    "data_dir": str | None,
    "results_dir": str | None,
    "figures_dir": str | None,
}
#: Parameters the runner sets itself (every output goes under the run's output root).
RUNNER_MANAGED = ("results_dir", "figures_dir")
_DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")

PresetLookup = Callable[[Path], "type[Preset] | None"]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a notebook's ``parameters`` cell.

    ``type`` is an annotation understood by :func:`hgutils.presets.coerce`; ``origin`` says where it
    came from (``"preset"``, ``"common"``, ``"annotation"``, ``"comment"``, ``"default"`` or
    ``"unknown"``).
    """

    name: str
    type: Any
    default: str
    help: str
    origin: str


# --------------------------------------------------------------------------------------------
# where types come from
# --------------------------------------------------------------------------------------------
def preset_class(notebook: Path) -> type[Preset] | None:
    """The notebook's preset class: ``CONFIG`` of ``hgutils.experiments.nbNN_name``, or ``None``.

    ``None`` when that module does not exist (test notebooks, or before a notebook has a driver) or
    defines no ``CONFIG``. An import error *inside* an existing driver module is raised, not hidden.

    Raises
    ------
    TypeError
        If ``CONFIG`` is not a :class:`~hgutils.presets.Preset` subclass.
    """
    name = driver_module(notebook)
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and name.startswith(err.name):
            return None
        raise
    cfg = getattr(mod, "CONFIG", None)
    if cfg is None:
        return None
    if not (isinstance(cfg, type) and issubclass(cfg, Preset) and dataclasses.is_dataclass(cfg)):
        raise TypeError(f"{name}.CONFIG must be a Preset dataclass; got {cfg!r}")
    return cfg


_ANNOTATION_NAMES: dict[str, Any] = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "list": list,
    "tuple": tuple,
    "None": None,
    "Optional": typing.Optional,
    "Literal": Literal,
    "Any": Any,
}


def _annotation(text: str) -> Any | None:
    """An annotation string (``"int"``, ``"list[str] | None"``) as a type, or ``None`` if not understood."""
    text = text.strip()
    if not text or text == "None":
        return None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if not names <= set(_ANNOTATION_NAMES) or any(isinstance(n, (ast.Call, ast.Attribute)) for n in ast.walk(tree)):
        return None
    try:
        tp = eval(compile(tree, "<annotation>", "eval"), {"__builtins__": {}}, dict(_ANNOTATION_NAMES))  # noqa: S307
    except Exception:
        return None
    return type(None) if tp is None else tp


_COMMENT = re.compile(r"^\s*(?:(list|tuple) of )?(int|float|str|bool)s?( or None)?\s*(?:[:;,.)]|$)", re.IGNORECASE)


def _comment_type(help_text: str) -> Any | None:
    """``"int or None: ..."`` → ``int | None``; ``"list of str or None: ..."`` → ``tuple[str, ...] | None``."""
    m = _COMMENT.match(help_text or "")
    if not m:
        return None
    base: Any = {"int": int, "float": float, "str": str, "bool": bool}[m.group(2).lower()]
    if m.group(1):
        base = tuple[base, ...]
    return base | None if m.group(3) else base


def _default_type(default: str) -> Any | None:
    try:
        value = ast.literal_eval(default)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, (bool, int, float, str)):
        return type(value)
    return None


def _comment_on(tokens: list[tokenize.TokenInfo], line: int) -> str:
    """The text of the comment that ends source line ``line`` (1-based), without ``#``; ``""`` if none."""
    for tok in tokens:
        if tok.type == tokenize.COMMENT and tok.start[0] == line:
            return tok.string[1:].strip()
    return ""


def parameters_cell(notebook: str | os.PathLike) -> dict[str, dict[str, str]]:
    """The assignments of the notebook's first cell tagged ``parameters``, as papermill reports them.

    ``{name: {"name", "inferred_type_name", "default", "help"}}``: ``default`` is the source text
    of the value (a value written over several lines joined into one), ``inferred_type_name`` the
    annotation's text or ``"None"``, ``help`` the comment ending the assignment. Only the standard
    library is used (``json``, ``ast``, ``tokenize``), so this is fast enough to run before any heavy
    import; it agrees with ``papermill.inspect_notebook`` on every notebook of the companion
    (tests/test_sweep_params.py). ``{}`` when there is no parameters cell.

    Raises
    ------
    ValueError
        If the file is not a notebook (JSON with cells) or its parameters cell is not valid Python.
    """
    path = Path(notebook)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path.name} is not a readable notebook ({type(err).__name__}: {err})") from None
    cell = next((c for c in cells if "parameters" in (c.get("metadata") or {}).get("tags", [])), None)
    if cell is None:
        return {}
    src = cell.get("source", "")
    src = "".join(src) if isinstance(src, list) else src
    try:
        tree = ast.parse(src)
        tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (SyntaxError, tokenize.TokenError) as err:
        raise ValueError(f"{path.name}: the parameters cell is not valid Python ({err})") from None
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, annotation = node.targets[0].id, None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, annotation = node.target.id, node.annotation
        else:
            continue
        segment = ast.get_source_segment(src, node.value) or ""
        default = "".join(line.strip() for line in segment.splitlines())
        hint = (ast.get_source_segment(src, annotation) or "").strip("'\" ") if annotation is not None else ""
        out[name] = {
            "name": name,
            "inferred_type_name": hint or "None",
            "default": default,
            "help": _comment_on(tokens, node.end_lineno or node.lineno),
        }
    return out


def notebook_params(notebook: Path, preset: type[Preset] | None = None) -> dict[str, ParamSpec]:
    """The parameters of ``notebook``'s ``parameters`` cell, each with the type values are checked against.

    Type precedence: the preset field (an override parameter defaulting to ``None`` accepts
    ``None`` = "use the preset"), the common parameters (``scale``, ``seed``, ...), then the cell's
    annotation, its ``# T or None:`` comment, its default literal; otherwise any value.

    Raises
    ------
    ValueError
        If the notebook has no ``parameters`` cell.
    """
    raw = parameters_cell(notebook)
    if not raw:
        raise ValueError(f"{Path(notebook).name} has no cell tagged 'parameters'; nothing can be set with -p")
    fields = preset.field_types() if preset is not None else {}
    specs: dict[str, ParamSpec] = {}
    for name, info in raw.items():
        default, help_text = str(info.get("default", "")), str(info.get("help", "") or "")
        tp, origin = None, "unknown"
        if name in fields:
            tp, origin = fields[name], "preset"
            if default.strip() == "None":
                tp = tp | None
        elif name in COMMON_TYPES:
            tp, origin = COMMON_TYPES[name], "common"
        else:
            found = [
                (where, t)
                for where, t in (
                    ("annotation", _annotation(str(info.get("inferred_type_name", "")))),
                    ("comment", _comment_type(help_text)),
                    ("default", _default_type(default)),
                )
                if t is not None
            ]
            origin, tp = found[0] if found else ("unknown", Any)
            if default.strip() == "None" and tp is not Any:
                tp = tp | None
        specs[name] = ParamSpec(name, tp, default, help_text, origin)
    return specs


# --------------------------------------------------------------------------------------------
# validating names and values
# --------------------------------------------------------------------------------------------
def check_name(name: str, specs: dict[str, ParamSpec], notebook: str) -> ParamSpec:
    """The spec of ``name``, or ``ValueError`` naming the notebook's parameters (and a close match).

    ``results_dir`` / ``figures_dir`` are refused: the runner routes every output under ``--out``.
    """
    if name in RUNNER_MANAGED:
        raise ValueError(f"-p {name}: set by the runner (every output goes under --out); use --out instead")
    if name not in specs:
        close = difflib.get_close_matches(name, list(specs), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        have = ", ".join(n for n in specs if n not in RUNNER_MANAGED)
        raise ValueError(f"-p {name}: {notebook} has no parameter {name!r}{hint}; its parameters are: {have}")
    return specs[name]


def check_value(spec: ParamSpec, value: Any, where: str | None = None) -> Any:
    """Check a value for ``spec`` and return it in canonical form.

    A ``str`` is command-line text, parsed by :func:`parse_value` (``"3"`` → ``3``, ``"[a,b]"`` →
    ``("a", "b")``, ``"none"`` → ``None``); other values are checked as they are. ``data_dir``
    becomes an absolute path. Messages begin with ``where``: the option the user typed (default
    ``-p NAME``; ``--device`` for the value of ``--device``).
    """
    where = where or f"-p {spec.name}"
    if isinstance(value, str):
        value = parse_value(value, spec.type, where)
    else:
        check_finite(value, where)  # before the type: "must be finite", not "expected a float or none"
        value = coerce(value, spec.type, where)
    if spec.name == "device" and value is not None and not _DEVICE.match(str(value)):
        raise ValueError(f"{where}: expected 'cpu', 'cuda', 'cuda:N' or 'mps'; got {value!r}")
    if spec.name == "scale" and value not in SCALES:
        raise ValueError(f"{where}: expected one of {SCALES}; got {value!r}")
    if spec.name == "data_dir" and value:
        value = str(Path(value).expanduser().resolve())  # kernels run elsewhere (another folder or machine)
    return value


def to_papermill(value: Any) -> Any:
    """Tuples as lists, recursively (papermill writes lists; JSON run keys do too)."""
    if isinstance(value, (list, tuple)):
        return [to_papermill(v) for v in value]
    return value


def validate_against_preset(preset: type[Preset] | None, scale: str, values: dict[str, Any], label: str) -> None:
    """Build ``preset.from_scale(scale, **overrides)`` for the values that are preset fields.

    This is the same call the notebook makes, so a type, range or cross-field error is reported
    before launch. Raises ``ValueError`` prefixed with ``label`` (the point or notebook).
    """
    if preset is None:
        return
    fields = preset.field_types()
    overrides = {k: v for k, v in values.items() if k in fields}
    try:
        preset.from_scale(scale, **overrides)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{label}: {err}") from None


def grid_product(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Cartesian product of a parameter grid, in a stable order (first axis slowest)."""
    if not grid:
        raise ValueError("a sweep needs at least one parameter (-p NAME v1,v2,...)")
    for name, values in grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError(f"-p {name}: a sweep axis needs a non-empty list of values; got {values!r}")
        seen = [json.dumps(to_papermill(v), sort_keys=True) for v in values]
        dup = next((v for v, s in zip(values, seen) if seen.count(s) > 1), None)
        if dup is not None or len(set(seen)) < len(seen):
            raise ValueError(f"-p {name}: the value {dup!r} is given more than once")
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]
