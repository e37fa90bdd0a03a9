"""A file format that holds tensors and plain data and nothing executable: what the cache and checkpoints store.

:func:`dumps` splits a value into a JSON tree and a list of tensors and writes both with
``torch.save``; :func:`loads` reads them back with ``torch.load(..., weights_only=True)``, which
rebuilds only tensors, strings, numbers and containers, so loading a file someone else wrote can
run no code (unlike unpickling). The tree holds, each tagged with its kind:

- ``None``, ``bool``, ``int``, ``float`` (NaN and infinity included), ``str``, ``bytes``;
- ``list``, ``tuple``, ``set``, ``frozenset``, ``dict`` (any keys this list holds, order kept),
  ``OrderedDict`` (with a state dict's ``_metadata``), ``torch.Size``, ``pathlib.Path``;
- ``torch.Tensor`` (a ``Parameter`` as its tensor), ``torch.dtype``, ``torch.device``;
- NumPy arrays of numbers or booleans (stored as tensors, dtype and byte order kept), of strings or
  bytes, and NumPy scalars;
- instances of dataclasses defined in ``hgutils`` (rebuilt field by field, without calling
  ``__init__``); a class from anywhere else is refused, on writing and on reading.

Anything else raises ``TypeError`` on writing, naming the type and where it sits in the value.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
from collections import OrderedDict
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import torch

FORMAT = "hgutils-tensors-v1"
_TRUSTED_PACKAGE = "hgutils"


def dumps(value: Any) -> bytes:
    """``value`` as bytes of the tensor-only format (module docstring).

    Raises
    ------
    TypeError
        For a value this format cannot hold (the message names its type and path in ``value``).
    """
    tensors: list[torch.Tensor] = []
    tree = _encode(value, tensors, "value")
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "tree": json.dumps(tree, separators=(",", ":")), "tensors": tensors}, buf)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    """The value :func:`dumps` wrote; only tensors and plain data are rebuilt (``weights_only=True``).

    Raises
    ------
    ValueError
        If ``data`` is not this format (an old pickle, another file) or names a class outside ``hgutils``.
    """
    try:
        blob = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as err:  # not a torch file, or one that needs unpickling of arbitrary objects
        raise ValueError(f"not an {FORMAT} file ({type(err).__name__}: {str(err).splitlines()[0][:200]})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"not an {FORMAT} file")
    return _decode(json.loads(blob["tree"]), blob["tensors"])


# --------------------------------------------------------------------------------------------
# encoding
# --------------------------------------------------------------------------------------------
def _encode(v: Any, tensors: list[torch.Tensor], where: str) -> Any:
    if v is None or isinstance(v, (bool, str)) or type(v) in (int, float):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, np.generic):  # int/float subclasses (not bool)
        return int(v) if isinstance(v, int) else float(v)
    if isinstance(v, torch.Tensor):
        tensors.append(v.detach().clone() if isinstance(v, torch.nn.Parameter) else v.detach())
        return {"t": "tensor", "i": len(tensors) - 1}
    if isinstance(v, np.ndarray):
        return _encode_array(v, tensors, where)
    if isinstance(v, np.generic):
        return {"t": "npscalar", "dtype": v.dtype.str, "v": _encode(v.item(), tensors, where)}
    if isinstance(v, torch.Size):
        return {"t": "size", "v": list(v)}
    if isinstance(v, bytes):
        return {"t": "bytes", "v": v.hex()}
    if isinstance(v, (list, tuple, set, frozenset)):
        kind = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset"}.get(type(v))
        if kind is None:
            raise TypeError(f"{where}: cannot store a {type(v).__qualname__} (a subclass of {type(v).__mro__[1]})")
        items = sorted(v, key=repr) if kind in ("set", "frozenset") else v
        return {"t": kind, "v": [_encode(x, tensors, f"{where}[{i}]") for i, x in enumerate(items)]}
    if isinstance(v, dict):
        if type(v) not in (dict, OrderedDict):
            raise TypeError(f"{where}: cannot store a {type(v).__qualname__}")
        node = {
            "t": "odict" if isinstance(v, OrderedDict) else "dict",
            "k": [_encode(k, tensors, f"{where} key") for k in v],
            "v": [_encode(x, tensors, f"{where}[{k!r}]") for k, x in v.items()],
        }
        meta = getattr(v, "_metadata", None)
        if meta is not None:
            node["meta"] = _encode(meta, tensors, f"{where}._metadata")
        return node
    if isinstance(v, torch.dtype):
        return {"t": "dtype", "v": str(v).removeprefix("torch.")}
    if isinstance(v, torch.device):
        return {"t": "device", "v": str(v)}
    if isinstance(v, PurePath):
        return {"t": "path", "v": str(v)}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        cls = type(v)
        if not _trusted(cls.__module__):
            raise TypeError(f"{where}: cannot store a {cls.__module__}.{cls.__qualname__} (only hgutils dataclasses)")
        fields = {f.name: _encode(getattr(v, f.name), tensors, f"{where}.{f.name}") for f in dataclasses.fields(v)}
        return {"t": "dataclass", "cls": f"{cls.__module__}:{cls.__qualname__}", "v": fields}
    raise TypeError(f"{where}: cannot store a {type(v).__module__}.{type(v).__qualname__}")


def _encode_array(a: np.ndarray, tensors: list[torch.Tensor], where: str) -> Any:
    if a.dtype.kind in "biufc":
        native = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
        tensors.append(torch.from_numpy(native.copy()))
        return {"t": "ndarray", "i": len(tensors) - 1, "dtype": a.dtype.str}
    if a.dtype.kind in "US":
        items = [x.hex() if isinstance(x, bytes) else x for x in a.ravel().tolist()]
        return {"t": "ndarray_text", "dtype": a.dtype.str, "shape": list(a.shape), "v": items}
    raise TypeError(f"{where}: cannot store a NumPy array of dtype {a.dtype}")


def _trusted(module: str) -> bool:
    return module == _TRUSTED_PACKAGE or module.startswith(_TRUSTED_PACKAGE + ".")


# --------------------------------------------------------------------------------------------
# decoding
# --------------------------------------------------------------------------------------------
def _dataclass(spec: str) -> type:
    module, _, qualname = spec.partition(":")
    if not _trusted(module):
        raise ValueError(f"refusing to rebuild {spec}: only hgutils dataclasses are stored")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise ValueError(f"{spec} is not a dataclass")
    return obj


def _decode(node: Any, tensors: list[torch.Tensor]) -> Any:
    if not isinstance(node, dict):
        return node
    kind = node["t"]
    if kind == "tensor":
        return tensors[node["i"]]
    if kind == "ndarray":
        return tensors[node["i"]].numpy().astype(np.dtype(node["dtype"]), copy=False)
    if kind == "ndarray_text":
        dtype = np.dtype(node["dtype"])
        items = [bytes.fromhex(x) for x in node["v"]] if dtype.kind == "S" else node["v"]
        return np.array(items, dtype=dtype).reshape(node["shape"])
    if kind == "npscalar":
        return np.dtype(node["dtype"]).type(_decode(node["v"], tensors))
    if kind in ("list", "tuple", "set", "frozenset"):
        items = [_decode(x, tensors) for x in node["v"]]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
    if kind == "size":
        return torch.Size(node["v"])
    if kind == "bytes":
        return bytes.fromhex(node["v"])
    if kind in ("dict", "odict"):
        pairs = zip((_decode(k, tensors) for k in node["k"]), (_decode(x, tensors) for x in node["v"]))
        out: Any = OrderedDict(pairs) if kind == "odict" else dict(pairs)
        if "meta" in node:
            out._metadata = _decode(node["meta"], tensors)
        return out
    if kind == "dtype":
        dtype = getattr(torch, node["v"])
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"{node['v']!r} is not a torch dtype")
        return dtype
    if kind == "device":
        return torch.device(node["v"])
    if kind == "path":
        return Path(node["v"])
    if kind == "dataclass":
        cls = _dataclass(node["cls"])
        obj = object.__new__(cls)
        for name, value in node["v"].items():
            object.__setattr__(obj, name, _decode(value, tensors))
        return obj
    raise ValueError(f"unknown node kind {kind!r}")
