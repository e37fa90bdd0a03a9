"""Machine paths in notebook text: how to find them and how to make them portable.

A *machine path* is an absolute path that only makes sense on the computer that ran the notebook:
the checkout itself, the runner's staging folders, home directories and the scratch roots of
development machines (``/work``, ``/tmp``, ``/root``, ``/home/<user>``, ``/Users/<user>``, ...).
:func:`find_machine_paths` reports them; :func:`strip_machine_paths` rewrites them:

- a runner staging folder ``.../hgutils-job-<id>/out`` becomes ``results`` (its ``figures``
  subfolder ``figures``) and ``.../hgutils-job-<id>/input`` becomes ``notebooks``: the places the
  published files end up in the repository;
- a path into an installed package keeps its part from ``site-packages/`` on;
- a path inside the checkout becomes relative to the repository root, and a path through another
  checkout's ``results``, ``figures``, ``notebooks`` or ``hgutils`` folder keeps its part from there;
- any other machine path keeps only its last component, after ``…/``.
"""

from __future__ import annotations

import re
from pathlib import Path

from hgutils.runner.notebooks import REPO_ROOT

#: characters that end a path inside text, a repr or a traceback line (``file.py:12``)
_END = r"""\s'"<>:;,()\[\]{}|`*"""
_PART = rf"[^{_END}/]+"
#: the roots of machine-specific absolute paths (the checkout's own root is added at run time)
MACHINE_ROOTS = (
    "work",
    "tmp",
    "root",
    "mnt",
    "builds",
    "scratch",
    "private/var",
    "var/folders",
    "var/tmp",
    "home/" + _PART,
    "Users/" + _PART,
)
_STAGING = rf"/(?:{_PART}/)*hgutils-job-{_PART}"


def _roots_pattern(repo_root: Path) -> str:
    roots = "|".join(MACHINE_ROOTS)
    return rf"(?:{re.escape(str(repo_root))}|/(?:{roots}))(?=/|[{_END}]|$)"


_ANCHORS = ("results", "figures", "notebooks", "hgutils")


def machine_path_regex(repo_root: Path = REPO_ROOT) -> re.Pattern[str]:
    """A regex matching a whole machine path (root and every following component)."""
    return re.compile(rf"(?:(?<=file://)|(?<![\w.~/…-])){_roots_pattern(repo_root)}(?:/{_PART})*/?")


def find_machine_paths(text: str, repo_root: Path = REPO_ROOT) -> list[str]:
    """Every machine path in ``text``, in order of appearance."""
    return [m.group(0) for m in machine_path_regex(repo_root).finditer(text)]


def _portable(path: str, repo_root: Path) -> str:
    parts = [p for p in path.split("/") if p]
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") :])
    root = str(repo_root)
    if path.rstrip("/") == root:
        return "."
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    anchors = [i for i, p in enumerate(parts) if p in _ANCHORS]
    if anchors:
        return "/".join(parts[anchors[0] :]) + ("/" if path.endswith("/") else "")
    return "…/" + parts[-1] if parts else "…"


def strip_machine_paths(text: str, repo_root: Path = REPO_ROOT) -> str:
    """``text`` with every machine path made portable (see the module docstring); idempotent."""
    text = re.sub(rf"{_STAGING}/out/figures(?=/|[{_END}]|$)", "figures", text)
    text = re.sub(rf"{_STAGING}/out(?=/|[{_END}]|$)", "results", text)
    text = re.sub(rf"{_STAGING}/input(?=/|[{_END}]|$)", "notebooks", text)
    return machine_path_regex(repo_root).sub(lambda m: _portable(m.group(0), repo_root), text)
