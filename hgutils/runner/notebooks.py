"""Which notebooks exist, how a name selects them, and what identifies a notebook's code.

- :func:`numbered_notebooks` -- the companion's ``NN_name.ipynb`` (the template ``00_`` excluded);
- :func:`select_notebooks` / :func:`resolve_notebook` -- ``--only 01,05`` and ``sweep 05``; an
  explicit ``00`` selects the template;
- :func:`driver_module` -- the ``hgutils.experiments.nbNN_name`` module that holds the notebook's
  ``CONFIG`` preset class;
- :func:`notebook_fingerprint` -- a hash of the notebook's code cells (outputs and markdown do not
  count), part of every run key.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
_PATTERN = "[0-9][0-9]_*.ipynb"


def numbered_notebooks(notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """The companion's notebooks ``NN_name.ipynb`` (NN ≥ 01; the template ``00_`` is excluded)."""
    return sorted(p for p in Path(notebook_dir).glob(_PATTERN) if not p.name.startswith("00_"))


def _all_numbered(notebook_dir: Path) -> list[Path]:
    return sorted(Path(notebook_dir).glob(_PATTERN))


def check_notebook_dir(notebook_dir: str | os.PathLike) -> Path:
    """``notebook_dir`` as a path; ``ValueError`` naming it when it does not exist or is not a folder."""
    d = Path(notebook_dir)
    if not d.is_dir():
        what = "is not a folder" if d.exists() else "does not exist"
        raise ValueError(f"--notebook-dir {str(d)!r} {what}; give the folder holding the NN_name.ipynb notebooks")
    return d


def select_notebooks(only: str | Sequence[str] | None, notebook_dir: Path = NOTEBOOK_DIR) -> list[Path]:
    """Filter the notebooks by number prefixes (``"01,05"``) or names; ``None`` selects all of them.

    ``None`` means every numbered notebook (the template excluded); an explicit ``"00"`` selects
    the template ``00_template.ipynb``.

    Raises
    ------
    ValueError
        If ``notebook_dir`` is missing, the selection is empty (``""``, ``","``) or a requested
        prefix matches no notebook.
    """
    check_notebook_dir(notebook_dir)
    if only is None:
        return numbered_notebooks(notebook_dir)
    wanted = [w.strip() for w in (only.split(",") if isinstance(only, str) else only) if w.strip()]
    if not wanted:
        raise ValueError(
            f"--only needs at least one notebook number or name (e.g. --only 01,05); got {only!r}. "
            "Leave --only out to run every notebook"
        )
    books = _all_numbered(notebook_dir)
    chosen: list[Path] = []
    for w in wanted:
        hits = [b for b in books if b.stem == w or b.name == w or b.name.startswith(f"{w}_")]
        if not hits:
            have = ", ".join(b.stem for b in books) or "none"
            raise ValueError(f"no notebook matches {w!r}; available: {have}")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


def resolve_notebook(name: str | os.PathLike, notebook_dir: Path = NOTEBOOK_DIR) -> Path:
    """A notebook path from a path, a stem (``05_msa_rich_vs_lazy``) or a number (``05``).

    Raises
    ------
    ValueError
        If ``name`` is neither an existing ``.ipynb`` file nor matches exactly one notebook.
    """
    p = Path(name)
    if p.suffix == ".ipynb":
        if p.is_file():
            return p.resolve()
        raise ValueError(f"notebook {str(p)!r} does not exist")
    check_notebook_dir(notebook_dir)
    hits = select_notebooks(str(name), notebook_dir)
    if len(hits) != 1:
        raise ValueError(f"{name!r} matches {len(hits)} notebooks; give the full name")
    return hits[0]


def driver_module(notebook: Path) -> str:
    """``hgutils.experiments.nbNN_name`` for ``NN_name.ipynb`` (the module holding its ``CONFIG``)."""
    return f"hgutils.experiments.nb{Path(notebook).stem}"


def code_cells(source: bytes | str) -> list[str]:
    """The source of every code cell of a notebook file's content, in order."""
    nb = json.loads(source)
    out = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            out.append("".join(src) if isinstance(src, list) else src)
    return out


def notebook_fingerprint(source: bytes | str) -> str:
    """sha256 (16 hex) of the notebook's code cells: a changed line of code changes it, outputs do not."""
    blob = json.dumps(code_cells(source), separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
