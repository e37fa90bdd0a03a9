"""Reproducibility: seeding, config hashing, an atomic on-disk cache, progress bars, the claims ledger.

- :func:`seed_everything` -- one call seeds Python, NumPy and torch (CPU and CUDA).
- :func:`config_hash` -- a stable short hash of any JSON-like config (dataclasses included).
- :func:`cached` -- ``cached(name, config, fn)`` computes ``fn()`` once per config and stores it
  under ``cache_dir()/name/<hash>.pt``; writes are atomic (temp file + ``os.replace``), entries hold
  tensors and plain data only (:mod:`hgutils.tensorfile`, read without unpickling) and a corrupt or
  partial entry is detected (checksum footer) and recomputed.
- :func:`progress` -- tqdm, silent when not interactive or under CI; a widget in a Jupyter kernel
  with ipywidgets, a text bar otherwise, and never a warning in a stored output.
- :func:`output_dirs` -- where a notebook run writes; in a Jupyter kernel it also starts the
  :class:`DeviceLog`, which records the device every later cell computed on.
- :class:`Claims` -- the claims ledger each notebook ends with (verdicts from :mod:`hgutils.verdicts`;
  the device record of the run).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch

from hgutils.atomic import atomic_write_bytes, atomic_write_text
from hgutils.verdicts import CAPPED, CONTRADICTED, DID_NOT_TRAIN, HOLDS, NOT_TESTED, VERDICT_COLOURS, VERDICTS

log = logging.getLogger("hgutils")

REPO_ROOT = Path(__file__).resolve().parent.parent

T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# seeding and hashing
# --------------------------------------------------------------------------------------------
def seed_everything(seed: int) -> torch.Generator:
    """Seed ``random``, ``numpy`` and ``torch`` (all devices); return a seeded CPU generator.

    Same seed and same scale give the same numbers on the same machine. Deterministic CUDA
    kernels are not forced (that would make paper-scale GPU runs much slower).
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {"__dataclass__": type(obj).__name__, **_jsonable(dataclasses.asdict(obj))}
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().tolist()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, (torch.dtype, torch.device)):
        return str(obj)
    raise TypeError(f"config_hash cannot hash a {type(obj).__name__}: {obj!r}")


def config_hash(obj: Any, length: int = 16) -> str:
    """Stable hex digest (sha256, first ``length`` chars) of a JSON-like config.

    Dict key order does not matter; dataclasses hash by class name and fields; tensors and arrays
    by value. Unsupported objects raise ``TypeError`` rather than hashing their ``repr``.
    """
    blob = json.dumps(_jsonable(obj), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def source_fingerprint(paths: Sequence[str | os.PathLike]) -> str:
    """sha256 (16 hex chars) of the Python sources at ``paths`` -- files, or every ``*.py`` below a
    folder -- in sorted order, each with its path relative to the package: a cache key part that
    changes with any edit to the code that computed the cached value."""
    root = Path(__file__).resolve().parent
    files: set[Path] = set()
    for p in map(Path, paths):
        files.update(sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else [])
    h = hashlib.sha256()
    for f in sorted(files):
        rel = f.resolve().relative_to(root) if f.resolve().is_relative_to(root) else Path(f.name)
        h.update(rel.as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# atomic files and the on-disk cache
# --------------------------------------------------------------------------------------------
#: v2: the payload is :mod:`hgutils.tensorfile` (tensors and plain data, loaded without unpickling);
#: a v1 entry (a pickle) is never loaded: it reads as unreadable and is recomputed
_MAGIC = b"HGUTILS-CACHE-v2\n"


def save_checked(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` atomically in the tensor-only format (:mod:`hgutils.tensorfile`), with a header and a
    sha256 footer over the payload.

    Raises
    ------
    TypeError
        If ``obj`` holds something that format cannot store (it holds no code: no arbitrary objects).
    """
    from hgutils import tensorfile

    payload = tensorfile.dumps(obj)
    digest = hashlib.sha256(payload).digest()
    atomic_write_bytes(path, _MAGIC + payload + digest)


def load_checked(path: str | os.PathLike) -> Any:
    """Load a file written by :func:`save_checked`: tensors and plain data only, nothing is unpickled.

    Raises
    ------
    ValueError
        If the file is truncated, has a bad header (an older, pickled entry included) or its checksum
        does not match.
    """
    from hgutils import tensorfile

    raw = Path(path).read_bytes()
    if not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + 32:
        raise ValueError(f"{path}: not an hgutils cache file (bad header or truncated)")
    payload, digest = raw[len(_MAGIC) : -32], raw[-32:]
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError(f"{path}: checksum mismatch (partial or corrupt write)")
    return tensorfile.loads(payload)


def cache_dir() -> Path:
    """Cache root: ``$HGUTILS_CACHE`` if set, else ``<repo>/.cache`` (ignored by git).

    A notebook opened in Jupyter or checked by nbval uses ``<repo>/.cache``; the runner
    (``python -m hgutils reproduce|sweep``) sets ``$HGUTILS_CACHE`` for its kernels to
    ``<output root>/.cache`` unless it is already set (docs/guarantees.md).
    """
    return Path(os.environ.get("HGUTILS_CACHE", REPO_ROOT / ".cache"))


def cached(name: str, config: Any, fn: Callable[[], T], *, root: str | os.PathLike | None = None) -> T:
    """Return ``fn()``, computed once per ``(name, config)`` and stored on disk.

    The entry lives at ``<root>/<name>/<config_hash(config)>.pt``. A missing, truncated or corrupt
    entry is (re)computed; hits and misses are logged to the ``hgutils`` logger, never printed, so
    notebook output does not depend on whether the cache was warm. Entries hold tensors and plain
    data only (:mod:`hgutils.tensorfile`): reading one runs no code.
    """
    if not name or any(ch in name for ch in "/\\"):
        raise ValueError(f"cache name must be a non-empty name without slashes; got {name!r}")
    path = Path(root if root is not None else cache_dir()) / name / f"{config_hash(config)}.pt"
    if path.exists():
        try:
            value = load_checked(path)
            log.info("cache hit %s", path)
            return value
        except Exception as exc:  # corrupt or partial: recompute
            log.warning("cache entry %s unreadable (%s); recomputing", path, exc)
    value = fn()
    save_checked(path, value)
    log.info("cache write %s", path)
    return value


# --------------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------------
def progress_enabled() -> bool:
    """True when a human is watching: not under CI/pytest and ``HGUTILS_PROGRESS`` is not ``0``.

    The runner (``python -m hgutils reproduce|sweep``) and ``make test`` set ``HGUTILS_PROGRESS=0``
    for the kernels they start, so executed notebooks carry no progress bars.
    """
    flag = os.environ.get("HGUTILS_PROGRESS")
    if flag is not None:
        return flag not in ("0", "false", "False", "")
    if os.environ.get("CI") or "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return True


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython)."""
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None else None
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def _tqdm_class(enabled: bool) -> type:
    """``tqdm.notebook.tqdm`` in a Jupyter kernel that has ipywidgets, else the text ``tqdm.std.tqdm``.

    ``tqdm.auto`` is never imported: in a kernel without ipywidgets it warns ("IProgress not found")
    on import, even for a disabled bar, and that warning lands in the stored outputs as stderr.
    """
    if enabled and _in_kernel():
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            pass
        else:
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm
    from tqdm.std import tqdm as text_tqdm

    return text_tqdm


def progress(iterable: Iterable[T] | None = None, **kwargs: Any) -> Any:
    """``tqdm(iterable, **kwargs)`` that is disabled automatically (see :func:`progress_enabled`).

    A widget in a Jupyter kernel with ipywidgets, a text bar elsewhere; no warning either way.
    """
    kwargs.setdefault("disable", not progress_enabled())
    kwargs.setdefault("leave", False)
    return _tqdm_class(not kwargs["disable"])(iterable, **kwargs)


# --------------------------------------------------------------------------------------------
# output locations
# --------------------------------------------------------------------------------------------
def output_dirs(
    notebook: str,
    scale: str,
    results_dir: str | os.PathLike | None = None,
    figures_dir: str | os.PathLike | None = None,
) -> tuple[Path, Path]:
    """Where a notebook run writes: ``(<results>/<scale>/<notebook>, <figures>/<scale>)``, created.

    With neither folder given (a notebook opened in Jupyter), these are the repository's
    ``results/`` and ``figures/``. A run that names its ``results_dir`` but no ``figures_dir`` keeps
    its figures beside its results (``<results_dir>/figures``), so nothing it writes lands in the
    repository's tracked ``figures/``. The runner (``python -m hgutils``) always passes both.
    """
    res = Path(results_dir) if results_dir else REPO_ROOT / "results"
    if figures_dir:
        fig = Path(figures_dir)
    else:
        fig = Path(results_dir) / "figures" if results_dir else REPO_ROOT / "figures"
    out_res, out_fig = res / scale / notebook, fig / scale
    out_res.mkdir(parents=True, exist_ok=True)
    out_fig.mkdir(parents=True, exist_ok=True)
    start_device_log()
    return out_res, out_fig


# --------------------------------------------------------------------------------------------
# which device each cell computed on
# --------------------------------------------------------------------------------------------
def accelerator_counts() -> dict[str, int]:
    """Allocations made so far on each accelerator torch has started: ``{"cuda:0": n, "mps": bytes}``.

    CUDA: the allocator's cumulative count of allocations (``allocation.all.allocated``) per device
    CUDA was initialised on; MPS: the bytes allocated now. ``{}`` when torch is not imported or no
    accelerator was touched (nothing is imported or initialised here).
    """
    torch_ = sys.modules.get("torch")
    if torch_ is None:
        return {}
    out: dict[str, int] = {}
    if torch_.cuda.is_initialized():
        for i in range(torch_.cuda.device_count()):
            out[f"cuda:{i}"] = int(torch_.cuda.memory_stats(i).get("allocation.all.allocated", 0))
    mps = getattr(torch_, "mps", None)
    if mps is not None and getattr(torch_.backends, "mps", None) is not None and torch_.backends.mps.is_available():
        out["mps"] = int(mps.current_allocated_memory())
    return out


class DeviceLog:
    """The device each executed cell computed on, from IPython's ``pre_run_cell``/``post_run_cell`` events.

    A cell counts as computing on an accelerator when it allocated memory there
    (:func:`accelerator_counts` changed while it ran), else as a CPU cell. ``requested`` is the
    notebook's ``device`` parameter (its variable in the kernel's namespace). ``counts`` is a
    parameter so the tests can stand in for a GPU.
    """

    def __init__(self, requested: str | None = None, counts: Callable[[], dict[str, int]] = accelerator_counts) -> None:
        self.requested = requested
        self.cells: dict[int, list[str]] = {}
        self._counts = counts
        self._before = counts()

    def pre_run_cell(self, *args: Any) -> None:
        self._before = self._counts()

    def post_run_cell(self, result: Any = None) -> None:
        after = self._counts()
        used = sorted(d for d, n in after.items() if n != self._before.get(d, 0))
        count = getattr(result, "execution_count", None)
        if isinstance(count, int):
            self.cells[count] = used or ["cpu"]
        self._before = after

    def record(self) -> dict[str, Any]:
        """``{"requested", "used", "cells"}``: ``used`` the accelerators any cell used, else ``["cpu"]``."""
        used = sorted({d for devs in self.cells.values() for d in devs if d != "cpu"})
        return {
            "requested": self.requested,
            "used": used or ["cpu"],
            "cells": {str(k): v for k, v in sorted(self.cells.items())},
        }


_DEVICE_LOG: DeviceLog | None = None


def start_device_log() -> DeviceLog | None:
    """Start (once per kernel) the :class:`DeviceLog` of the running notebook; ``None`` outside a kernel."""
    global _DEVICE_LOG
    shell = sys.modules.get("IPython")
    ip = shell.get_ipython() if shell is not None else None
    if ip is None:
        return None
    requested = ip.user_ns.get("device")
    requested = str(requested) if requested is not None else None
    if _DEVICE_LOG is None:
        _DEVICE_LOG = DeviceLog(requested)
        ip.events.register("pre_run_cell", _DEVICE_LOG.pre_run_cell)
        ip.events.register("post_run_cell", _DEVICE_LOG.post_run_cell)
    else:
        _DEVICE_LOG.requested = requested or _DEVICE_LOG.requested
    return _DEVICE_LOG


def device_record(requested: str | None = None) -> dict[str, Any] | None:
    """The device record of the running notebook for its ledger (``None`` when nothing is known)."""
    if _DEVICE_LOG is not None:
        rec = _DEVICE_LOG.record()
        if requested is not None:
            rec["requested"] = requested
        return rec
    return None if requested is None else {"requested": requested, "used": None, "cells": None}


def is_accelerator(device: str | None) -> bool:
    """True for ``cuda``, ``cuda:N``, ``mps``."""
    return bool(device) and not str(device).startswith("cpu")


def device_summary(record: dict[str, Any] | None) -> str:
    """One phrase for a ledger's device record: ``"cuda:0"``, ``"cpu"``, ``"cpu, although cuda was asked for"``."""
    if not record:
        return ""
    used, requested = record.get("used"), record.get("requested")
    if not used:
        return f"not recorded (asked: {requested})" if requested else ""
    text = ", ".join(used)
    if is_accelerator(requested) and used == ["cpu"]:
        text += f", although {requested} was asked for"
    return text


# --------------------------------------------------------------------------------------------
# claims ledger
# --------------------------------------------------------------------------------------------
INCONCLUSIVE = DID_NOT_TRAIN  # the name this module exported before the verdict module existed


def format_value(v: Any) -> str:
    """Compact table text: floats to 4 significant digits, dicts as ``k=v; ...``, lists in brackets."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return "; ".join(f"{k}={format_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(f"({format_value(x)})" if isinstance(x, dict) else format_value(x) for x in v) + "]"
    return str(v).replace("|", "/").replace("\n", " ")


@dataclasses.dataclass
class Claim:
    """One row of the ledger: a paper claim, the paper's value, ours, an explicit criterion and its outcome.

    ``outcome`` is what the criterion gave (``holds`` / ``contradicted`` / ``inconclusive`` / ``not
    tested at this scale``); ``detail`` the measured difference and what the design resolves (for a
    comparative claim, from :mod:`hgutils.verdicts`), or why a claim was not tested; ``power`` whether
    a difference of the paper's size is resolvable at the seeds run.
    """

    id: str
    statement: str
    paper: Any
    ours: Any
    criterion: str
    outcome: str
    source: str
    scale: str
    trained: dict[str, Any] | None = None  # per judged model: {"trained": bool, "reason": str}
    detail: str | None = None
    test: dict[str, Any] | None = None
    power: dict[str, Any] | None = None
    favoured: list[str] | None = None  # the judged models the claim says win (None: not named)

    @property
    def verdict(self) -> str:
        """The outcome, with two overrides:

        - ``inconclusive (did not train)`` when a model the claim judges did not pass the learnability
          check (whatever the criterion gave);
        - ``inconclusive (capped)`` when the criterion gave ``contradicted`` and a losing model -- one
          of :attr:`favoured`, or any judged model when the claim names none -- stopped at its
          training budget while still improving (:attr:`capped_losers`).
        """
        if self.untrained:
            return DID_NOT_TRAIN
        if self.outcome == CONTRADICTED and self.capped_losers:
            return CAPPED
        return self.outcome

    @property
    def untrained(self) -> list[str]:
        """The judged models that did not pass the learnability check."""
        return [m for m, g in (self.trained or {}).items() if not g["trained"]]

    @property
    def capped(self) -> list[str]:
        """The judged models with a run that stopped because its training budget ran out (not by early
        stopping): the verdict rests on a run that may not have converged, and says so."""
        return [m for m, g in (self.trained or {}).items() if g.get("capped")]

    @property
    def capped_losers(self) -> list[str]:
        """The capped models among those that lose a contradicted claim: :attr:`favoured` when named
        (the paper's winners, which the criterion says lost), every judged model otherwise."""
        losers = self.favoured if self.favoured is not None else list(self.trained or {})
        return [m for m in self.capped if m in losers]

    @property
    def verdict_detail(self) -> str:
        """The verdict with what was measured: ``inconclusive: +1.9 ± 2.2 points; resolvable ≥ 4.4 at 3
        seeds``; the models that did not train when the claim could not be judged."""
        if self.untrained:
            return f"{self.verdict}: {', '.join(self.untrained)}"
        if self.verdict == CAPPED:
            measured = f"; {self.detail}" if self.detail else ""
            return (
                f"{CAPPED}: the criterion gave {CONTRADICTED}{measured}; stopped at their budget while "
                f"improving: {', '.join(self.capped_losers)}"
            )
        text = f"{self.verdict}: {self.detail}" if self.detail else self.verdict
        if self.capped:
            text += f" (rests on capped runs: {', '.join(self.capped)})"
        return text

    @property
    def power_text(self) -> str:
        """One line on whether the paper's difference is resolvable at these seeds (empty when not stated)."""
        if not self.power:
            return ""
        p = self.power
        if "text" in p:
            return str(p["text"])
        return format_value(p)


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 8]`` → ``"3-5, 8"``."""
    groups: list[list[int]] = []
    for n in numbers:
        if groups and groups[-1][1] == n - 1:
            groups[-1][1] = n
        else:
            groups.append([n, n])
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in groups)


def html_value(v: Any) -> str:
    """A ledger value as HTML for a table cell: a dict as one ``key: value`` line per key, a list of
    records (dicts with the same keys) as a small table, anything else as :func:`format_value` text."""
    from html import escape

    if isinstance(v, dict) and v:
        return "<br>".join(f"{escape(str(k))}: {escape(format_value(x))}" for k, x in v.items())
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, dict) for x in v):
        keys = list(v[0])
        if all(list(x) == keys for x in v):
            # identifying columns (ints and text: K, regime) before the measured ones
            ident = [k for k in keys if all(isinstance(x[k], (int, str)) and not isinstance(x[k], bool) for x in v)]
            keys = ident + [k for k in keys if k not in ident]
            cell = 'style="padding:1px 3px;text-align:left;vertical-align:top;word-break:break-word"'
            head = "".join(f"<th {cell}>{escape(str(k))}</th>" for k in keys)
            body = "".join(
                "<tr>" + "".join(f"<td {cell}>{escape(format_value(x[k]))}</td>" for k in keys) + "</tr>" for x in v
            )
            return (
                '<table style="font-size:0.85em;border-collapse:collapse;width:100%;table-layout:auto">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            )
        return "<br>".join(html_value(x) for x in v)
    return escape(format_value(v))


def _outcome(holds: bool | None, test: Any) -> str:
    if test is not None:
        if holds is not None:
            raise ValueError("give either holds= (an absolute criterion) or test= (a comparison), not both")
        if getattr(test, "verdict", None) not in VERDICTS:
            raise ValueError(f"test= needs a comparison from hgutils.verdicts; got {test!r}")
        return str(test.verdict)
    if holds is None:
        return NOT_TESTED
    if not isinstance(holds, (bool, np.bool_)):
        raise ValueError(f"holds must be True, False or None; got {holds!r}")
    return HOLDS if holds else CONTRADICTED


class Claims:
    """The claims ledger a notebook ends with.

    ``claims.add(id, statement, paper=..., ours=..., criterion=..., source=..., holds=... | test=...)``
    records one claim:

    - an *absolute* claim passes ``holds=True/False`` from a criterion computed in the run (``holds``
      / ``contradicted``);
    - a *comparative* claim passes ``test=`` a comparison from :mod:`hgutils.verdicts`
      (``holds`` / ``contradicted`` / ``inconclusive``, with the resolvable difference), and
      ``paper_effect=`` the paper's difference in the same units when the paper reports one, so the
      ledger states whether this design could resolve it;
    - neither (``holds=None``) is ``not tested at this scale``; ``reason=`` says why.

    ``trained={model: gate}`` records the learnability check of every model the claim judges (a
    :class:`hgutils.loop.GateResult`, or a dict with ``trained`` and ``reason``): if any did not
    train, the verdict is ``inconclusive (did not train)``. ``save(results_dir)`` writes
    ``claims.json``; ``show()`` displays the table (verdict first, coloured);
    ``print_verdicts()`` prints only ``id: verdict`` lines -- the cell nbval checks.

    The ledger also records the run's device (:attr:`device`): the device the notebook was asked
    for (its ``device`` parameter, or ``device=`` here) and the device every cell computed on (the
    :class:`DeviceLog` that :func:`output_dirs` starts in a Jupyter kernel). The table says so
    when an accelerator was asked for and every cell ran on the CPU.
    """

    def __init__(self, notebook: str, scale: str, device: str | None = None) -> None:
        from hgutils.presets import SCALES

        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
        self.notebook = notebook
        self.scale = scale
        self.rows: list[Claim] = []
        self._requested = device
        self._loaded_device: dict[str, Any] | None = None

    @property
    def device(self) -> dict[str, Any] | None:
        """``{"requested", "used", "cells"}`` (``cells``: execution count → devices), ``None`` when unknown.

        For a ledger being written, read from the running notebook's :class:`DeviceLog` each time;
        for a loaded one, what it recorded.
        """
        if self._loaded_device is not None:
            return self._loaded_device
        return device_record(self._requested)

    def add(
        self,
        id: str,
        statement: str,
        *,
        paper: Any,
        ours: Any,
        criterion: str,
        source: str,
        holds: bool | None = None,
        test: Any = None,
        paper_effect: float | None = None,
        reason: str | None = None,
        trained: dict[str, Any] | None = None,
        favoured: Sequence[str] | None = None,
    ) -> Claim:
        """Record a claim (class docstring): ``holds`` for an absolute criterion, ``test`` for a
        comparison, neither for "not tested" (``reason``); ``trained`` maps each judged model to its
        learnability check (``capped``: its run stopped at its budget); ``favoured`` names the judged
        models the claim says win, whose capped runs make a contradiction ``inconclusive (capped)``
        (default: any judged model's)."""
        if any(r.id == id for r in self.rows):
            raise ValueError(f"claim id {id!r} already recorded in {self.notebook}")
        if not criterion:
            raise ValueError(f"claim {id!r}: a verdict needs an explicit criterion")
        outcome = _outcome(holds, test)
        gates = None
        if trained is not None:
            gates = {}
            for model, g in trained.items():
                g = g.to_dict() if hasattr(g, "to_dict") else dict(g)
                if not isinstance(g.get("trained"), (bool, np.bool_)):
                    raise ValueError(f"claim {id!r}: trained[{model!r}] needs a bool 'trained'; got {g!r}")
                gates[str(model)] = {
                    "trained": bool(g["trained"]),
                    "reason": str(g.get("reason", "")),
                    "capped": bool(g.get("capped", False)),
                }
        if favoured is not None:
            favoured = [str(m) for m in favoured]
            unknown = [m for m in favoured if gates is None or m not in gates]
            if unknown:
                raise ValueError(f"claim {id!r}: favoured models {unknown} are not among the judged models (trained=)")
        detail = test.summary if test is not None else (reason or None)
        power = None
        if paper_effect is not None:
            if test is None or not hasattr(test, "power"):
                raise ValueError(f"claim {id!r}: paper_effect= needs a test= that reports power")
            p = test.power(paper_effect)
            power = p.to_dict() | {"text": p.text(getattr(test, "unit", ""))}
        row = Claim(
            id,
            statement,
            _jsonable(paper),
            _jsonable(ours),
            criterion,
            outcome,
            source,
            self.scale,
            gates,
            detail,
            _jsonable(test.to_dict()) if test is not None else None,
            _jsonable(power),
            favoured,
        )
        self.rows.append(row)
        return row

    def counts(self) -> dict[str, int]:
        """How many claims have each verdict (every verdict of :data:`hgutils.verdicts.VERDICTS`)."""
        out = dict.fromkeys(VERDICTS, 0)
        for r in self.rows:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "notebook": self.notebook,
            "scale": self.scale,
            "device": self.device,
            "claims": [dataclasses.asdict(r) | {"verdict": r.verdict} for r in self.rows],
        }

    def save(self, results_dir: str | os.PathLike) -> Path:
        """Write ``<results_dir>/claims.json`` atomically and return its path."""
        path = Path(results_dir) / "claims.json"
        atomic_write_text(path, json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Claims:
        """Read a ``claims.json`` written by :meth:`save`.

        A ledger written before the verdict vocabulary (``holds`` as a bool, verdict ``fails``) keeps
        its recorded verdict word as its outcome, so a stale ``fails`` stays visible (and the tests
        that forbid it in a published ledger see it).
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        out = cls(data["notebook"], data["scale"])
        if isinstance(data.get("device"), dict):
            out._loaded_device = data["device"]
        fields = {f.name for f in dataclasses.fields(Claim)}
        for r in data["claims"]:
            r = dict(r)
            if "outcome" not in r:  # the old schema: the gate is re-derived from ``trained``
                r["outcome"] = {True: HOLDS, False: "fails", None: NOT_TESTED}[r.get("holds")]
            out.rows.append(Claim(**{k: v for k, v in r.items() if k in fields}))
        return out

    def device_line(self) -> str:
        """``device: asked cuda; computed on cuda:0 (cells 5, 7-9), the other cells on the CPU`` or ``""``."""
        rec = self.device
        if not rec:
            return ""
        asked = rec.get("requested") or "?"
        cells = rec.get("cells") or {}
        if not rec.get("used"):
            return f"device: asked {asked}; the cells' devices were not recorded (not run in a Jupyter kernel)"
        on = {d for devs in cells.values() for d in devs if d != "cpu"}
        if not on:
            line = f"device: asked {asked}; every cell computed on the CPU"
            if is_accelerator(asked):
                line += f" (this notebook did not use {asked})"
            return line
        parts = []
        for d in sorted(on):
            runs = _ranges(sorted(int(k) for k, devs in cells.items() if d in devs))
            parts.append(f"{d} (cells {runs})")
        return f"device: asked {asked}; computed on " + ", ".join(parts) + ", the other cells on the CPU"

    def markdown(self) -> str:
        """The ledger as a Markdown table, verdict first."""
        head = "| verdict | claim | statement | paper | ours | criterion | power |\n|---|---|---|---|---|---|---|\n"
        body = "".join(
            f"| **{r.verdict_detail}** | {r.id} | {r.statement} | {format_value(r.paper)} | {format_value(r.ours)} "
            f"| {r.criterion} | {r.power_text or '—'} |\n"
            for r in self.rows
        )
        return head + body

    def html(self) -> str:
        """The ledger as an HTML table that wraps to the window: verdict first, coloured by verdict; dict
        values as lines and lists of records as small tables (:func:`html_value`); the device line
        (:meth:`device_line`) above it, highlighted when an accelerator was asked for and not used."""
        from html import escape

        cols = ("verdict", "claim", "statement", "paper", "ours", "criterion", "power")
        widths = ("19%", "9%", "17%", "11%", "22%", "14%", "8%")
        head = "".join(f'<th style="text-align:left;width:{w}">{c}</th>' for c, w in zip(cols, widths))
        rows = []
        for r in self.rows:
            colour = VERDICT_COLOURS.get(r.verdict, "#ffffff")
            verdict = f"<b>{escape(r.verdict)}</b>"
            rest = r.verdict_detail[len(r.verdict) :].lstrip(": ")
            if rest:
                verdict += f"<br><small>{escape(rest)}</small>"
            cells = [
                verdict,
                f"<code>{escape(r.id)}</code>",
                escape(r.statement),
                html_value(r.paper),
                html_value(r.ours),
                escape(r.criterion),
                escape(r.power_text or "—"),
            ]
            tds = "".join(
                f'<td style="text-align:left;vertical-align:top;white-space:normal;word-break:break-word">{c}</td>'
                for c in cells
            )
            rows.append(f'<tr style="background:{colour}">{tds}</tr>')
        table = (
            '<table style="table-layout:fixed;width:100%;border-collapse:collapse;font-size:0.9em">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        line = self.device_line()
        if not line:
            return table
        rec = self.device or {}
        unused = is_accelerator(rec.get("requested")) and rec.get("used") == ["cpu"]
        style = "background:#f8d7da;padding:2px 6px" if unused else "padding:2px 0"
        return f'<p style="{style}"><small>{escape(line)}</small></p>{table}'

    def show(self) -> None:
        """Display the table (coloured, wrapping HTML in Jupyter; Markdown text elsewhere)."""
        try:
            from IPython import get_ipython
            from IPython.display import HTML, display

            if get_ipython() is not None:
                display(HTML(self.html()))
                return
        except ImportError:  # pragma: no cover - IPython is a dependency
            pass
        line = self.device_line()
        print((line + "\n\n" if line else "") + self.markdown())

    def print_verdicts(self) -> None:
        """Print ``id: verdict`` per claim -- deterministic text for nbval's checked cell."""
        for r in self.rows:
            print(f"{r.id}: {r.verdict}")
