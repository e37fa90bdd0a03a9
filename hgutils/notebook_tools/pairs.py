"""Notebooks as reviewable text: each ``notebooks/NN_name.ipynb`` paired with ``NN_name.py`` (py:percent).

The pairing is configured by ``notebooks/jupytext.toml`` (also read by JupyterLab's jupytext
extension and the ``jupytext`` command line), so the scripts carry only cell sources, cell tags
and the kernelspec: no outputs, no execution metadata, no jupytext version.

- :func:`write_pair` -- regenerate the script from its notebook (the notebook is the source of
  truth: papermill and nbval run the ``.ipynb``), after giving the notebook the ``jupytext``
  metadata that JupyterLab's jupytext contents manager merges into it from the script on opening
  (:func:`paired_metadata`), so that saving it from JupyterLab writes back the same file;
- :func:`pair_differences` -- what differs between a notebook and its script after reading the
  script back with jupytext (cell count, kinds, sources); empty when they agree.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

FORMAT = "py:percent"


def pair_path(notebook: Path) -> Path:
    """``notebooks/NN_name.py`` for ``notebooks/NN_name.ipynb``."""
    return Path(notebook).with_suffix(".py")


def _config(folder: Path) -> Any:
    from jupytext.config import load_jupytext_config

    return load_jupytext_config(str(folder))


def script_text(notebook: Path) -> str:
    """The py:percent text of ``notebook`` under the folder's jupytext configuration."""
    import jupytext
    import nbformat

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    return jupytext.writes(nb, FORMAT, config=_config(notebook.parent))


def paired_metadata(notebook: Path) -> dict[str, Any]:
    """The ``jupytext`` notebook metadata the script's header carries (its ``text_representation`` aside).

    Opening a paired notebook, jupytext's contents manager combines the ``.ipynb`` with its script
    and the notebook takes the script header's ``jupytext`` entry; the ``.ipynb`` it saves drops only
    ``text_representation``. A notebook that already holds this entry is saved unchanged.
    """
    import jupytext

    header = jupytext.reads(script_text(notebook), fmt=FORMAT).metadata.get("jupytext", {})
    return {k: v for k, v in header.items() if k != "text_representation"}


def write_pair(notebook: Path) -> bool:
    """Write ``notebook``'s script next to it, and its :func:`paired_metadata`; return whether a file changed."""
    import nbformat

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    wanted = paired_metadata(notebook)
    meta_changed = nb.metadata.get("jupytext") != wanted
    if meta_changed:
        nb.metadata["jupytext"] = wanted
        nbformat.write(nb, notebook)
    path = pair_path(notebook)
    text = script_text(notebook)
    if path.is_file() and path.read_text(encoding="utf-8") == text and not meta_changed:
        return False
    path.write_text(text, encoding="utf-8")  # the script last: jupytext reads the newer file's inputs
    return True


def _cells(nb: Any) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]


def pair_differences(notebook: Path) -> list[str]:
    """How ``notebook`` and its script disagree (one line each, the first differing cell in detail)."""
    import jupytext
    import nbformat

    notebook = Path(notebook)
    script = pair_path(notebook)
    if not script.is_file():
        return [f"{notebook.name} has no jupytext pair {script.name} (run `make sync`)"]
    ours = _cells(nbformat.read(notebook, as_version=4))
    theirs = _cells(jupytext.read(script, fmt=FORMAT))
    if ours == theirs:
        return []
    problems = []
    if len(ours) != len(theirs):
        problems.append(f"{notebook.name} has {len(ours)} cells, {script.name} has {len(theirs)} (run `make sync`)")
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a == b:
            continue
        if a[0] != b[0]:
            problems.append(f"cell {i} is {a[0]} in {notebook.name} but {b[0]} in {script.name}")
        else:
            diff = difflib.unified_diff(
                a[1].splitlines(), b[1].splitlines(), notebook.name, script.name, lineterm="", n=0
            )
            problems.append(f"cell {i} source differs (run `make sync`):\n" + "\n".join(list(diff)[:12]))
        break
    return problems or [f"{notebook.name} and {script.name} differ (run `make sync`)"]


def orphan_scripts(folder: Path) -> list[Path]:
    """``NN_name.py`` scripts in ``folder`` whose notebook is gone."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.py") if not p.with_suffix(".ipynb").is_file())
