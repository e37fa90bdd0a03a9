"""Cleaning a notebook's stored outputs and metadata so that it can be committed or published.

:func:`clean_notebook` returns a copy of a notebook (an ``nbformat`` node or plain dict) with

- every machine path in outputs, in the papermill ``injected-parameters`` cell and in the
  papermill parameters rewritten portably (:func:`hgutils.runner.machine_paths.strip_machine_paths`);
- papermill's per-run metadata removed (input/output paths, start/end times, durations, versions;
  the notebook-level ``parameters`` are kept when a run injected any);
- per-cell execution timestamps (``execution``, ``papermill``, ``ExecuteTime``) removed;
- saved widget state and widget views (tqdm bars from an interactive session, which render
  nowhere else) removed;
- the ``python3`` kernelspec written as ipykernel installs it (:data:`KERNELSPEC`): JupyterLab
  writes the running kernel's spec into the notebook when the kernel starts, and a stored spec that
  differs (``"Python 3"`` instead of ``"Python 3 (ipykernel)"``) marks the notebook modified on open.

Cell sources other than the injected parameters, and every other output, stay as they are:
content problems are reported by :mod:`hgutils.notebook_tools.hygiene`, not hidden. Cleaning is
idempotent; :func:`clean_file` rewrites a file only when cleaning changes it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hgutils.runner.machine_paths import strip_machine_paths
from hgutils.runner.notebooks import REPO_ROOT

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: cell metadata holding execution timestamps (Jupyter, papermill, the ExecuteTime extension)
TIMING_CELL_KEYS = ("execution", "papermill", "ExecuteTime")
#: notebook-level metadata written by an interactive session or an extension, never reviewed
SESSION_KEYS = ("widgets",)
#: the kernelspec metadata JupyterLab writes for the ``python3`` kernel that ipykernel installs
#: (``make lab``, Binder): ``{name, display_name, language}`` of the spec, exactly these keys
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _text(value: Any, repo_root: Path) -> Any:
    if isinstance(value, str):
        return strip_machine_paths(value, repo_root)
    if isinstance(value, list):
        return [_text(v, repo_root) for v in value]
    if isinstance(value, dict):
        return {k: _text(v, repo_root) for k, v in value.items()}
    return value


def _clean_output(out: dict, repo_root: Path) -> dict | None:
    data = out.get("data")
    if data is not None and WIDGET_VIEW in data:
        return None
    if "text" in out:
        out["text"] = _text(out["text"], repo_root)
    if "traceback" in out:
        out["traceback"] = _text(out["traceback"], repo_root)
    if "evalue" in out:
        out["evalue"] = _text(out["evalue"], repo_root)
    if data is not None:
        for mime in list(data):
            if mime.startswith("text/") or mime.endswith("json"):
                data[mime] = _text(data[mime], repo_root)
    return out


def _join(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else source


def clean_notebook(nb: dict, repo_root: Path = REPO_ROOT) -> dict:
    """A cleaned deep copy of ``nb`` (see the module docstring); ``nb`` itself is not modified."""
    nb = copy.deepcopy(nb)
    meta = nb.setdefault("metadata", {})
    for key in SESSION_KEYS:
        meta.pop(key, None)
    spec = meta.get("kernelspec")
    if isinstance(spec, dict) and spec.get("name") == KERNELSPEC["name"]:
        meta["kernelspec"] = dict(KERNELSPEC)
    pm = meta.pop("papermill", None)
    if isinstance(pm, dict) and pm.get("parameters"):
        meta["papermill"] = {"parameters": _text(pm["parameters"], repo_root)}
    for cell in nb.get("cells", []):
        cmeta = cell.setdefault("metadata", {})
        for key in TIMING_CELL_KEYS:
            cmeta.pop(key, None)
        if cell.get("cell_type") != "code":
            continue
        if "injected-parameters" in cmeta.get("tags", []):
            cell["source"] = strip_machine_paths(_join(cell["source"]), repo_root)
        outputs = [_clean_output(o, repo_root) for o in cell.get("outputs", [])]
        cell["outputs"] = [o for o in outputs if o is not None]
    return nb


def _normalised(nb: dict) -> dict:
    """Sources joined into strings, so that two spellings of one notebook compare equal."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        cell["source"] = _join(cell.get("source", ""))
        for out in cell.get("outputs", []):
            if "text" in out:
                out["text"] = _join(out["text"])
            for mime, value in out.get("data", {}).items():
                if isinstance(value, list):
                    out["data"][mime] = "".join(value)
    return nb


def is_clean(nb: dict, repo_root: Path = REPO_ROOT) -> bool:
    """True when cleaning ``nb`` would change nothing."""
    return _normalised(clean_notebook(nb, repo_root)) == _normalised(nb)


def clean_file(path: str | Path, repo_root: Path = REPO_ROOT) -> bool:
    """Clean the notebook file ``path`` in place; return whether it changed."""
    import nbformat

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    cleaned = clean_notebook(nb, repo_root)
    if _normalised(cleaned) == _normalised(nb):
        return False
    nbformat.write(nbformat.from_dict(cleaned), path)
    return True
