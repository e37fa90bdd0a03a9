"""Every published notebook's code still imports against today's library.

A reader copies a cell of a published medium run (``results/medium/NN_*.ipynb``, or its copy rendered by the
documentation site, ``docs/notebooks/``, which ``make docs`` writes from ``results/medium/``) into a session of
their own. The cell must not fail on an ``ImportError`` or an ``AttributeError`` because a name has moved since
the run was published. For every code cell this test reads, with :mod:`ast` and without executing anything:

- each ``import a.b.c [as x]`` -- the module must import;
- each ``from a.b import name [as x]`` -- the module must import and ``name`` be one of its attributes or a
  submodule of it;
- each attribute read through a name bound to a module by those statements (``ex.paper_table``,
  ``cmp.run_comparison``, ``hgutils.repro.seed_everything``) -- followed as long as it reaches a module, each
  step must exist (``getattr``).

Third-party modules are checked the same way (an import of a package that is no longer a dependency fails too).
One test per notebook, so a notebook republished against today's library turns green on its own; the message
lists, per cell, every name that does not resolve. A notebook declared as awaiting republication
(``results/medium/AWAITING_REPUBLICATION.json``, :mod:`hgutils.runner.republication`: the claims report and the
README mark it with its reason) is skipped with that reason instead of failing; one not declared fails.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from hgutils.runner.republication import awaiting_republication

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = sorted((ROOT / "results" / "medium").glob("[0-9][0-9]_*.ipynb"))
# the site's copies (docs/conf.py writes them from results/medium/ on every build; untracked, so present only
# after a build)
SITE_COPIES = sorted((ROOT / "docs" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NOTEBOOKS = PUBLISHED + SITE_COPIES


@dataclass(frozen=True)
class Unresolved:
    """One name a notebook's code uses that today's library does not have."""

    cell: int  # index of the code cell, counted from 1 over code cells
    line: int
    name: str  # what the cell wrote, e.g. "hgutils.repro.Claims" or "ex.paper_table"
    why: str

    def __str__(self) -> str:
        return f"code cell {self.cell}, line {self.line}: {self.name} -- {self.why}"


def _parse(source: str) -> ast.Module | None:
    """A cell's code with IPython's magics and shell escapes blanked (they are not Python)."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _import(module: str) -> tuple[types.ModuleType | None, str]:
    try:
        return importlib.import_module(module), ""
    except Exception as err:  # noqa: BLE001 - any failure to import is what the reader would see
        return None, f"{type(err).__name__}: {err}"


def _member(module: types.ModuleType, name: str) -> tuple[object | None, str]:
    """``from module import name``'s object: an attribute, or else a submodule of that name; or why neither
    (an empty reason when it resolved)."""
    if hasattr(module, name):
        return getattr(module, name), ""
    if hasattr(module, "__path__") and importlib.util.find_spec(f"{module.__name__}.{name}") is not None:
        sub, err = _import(f"{module.__name__}.{name}")
        return sub, err  # the submodule exists: it imports, or the reader sees this error
    return None, f"{module.__name__} has no attribute or submodule {name!r}"


def _attribute_chain(node: ast.Attribute) -> tuple[str, list[str]] | None:
    """``a.b.c`` as ``("a", ["b", "c"])``; None when the chain does not start at a plain name."""
    attrs: list[str] = []
    cur: ast.expr = node
    while isinstance(cur, ast.Attribute):
        attrs.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    return cur.id, attrs[::-1]


def unresolved_names(cells: list[str]) -> list[Unresolved]:
    """What in these code cells (in notebook order) does not resolve against the library installed now."""
    bound: dict[str, types.ModuleType] = {}  # names the cells bound to modules so far
    found: list[Unresolved] = []
    for i, source in enumerate(cells, start=1):
        tree = _parse(source)
        if tree is None:
            continue
        # the imports first, in source order, so that a later line's alias is known
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    module, err = _import(alias.name)
                    if module is None:
                        found.append(Unresolved(i, node.lineno, f"import {alias.name}", err))
                        continue
                    if alias.asname:
                        bound[alias.asname] = module
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = importlib.import_module(top)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                module, err = _import(node.module)
                if module is None:
                    names = ", ".join(a.name for a in node.names)
                    found.append(Unresolved(i, node.lineno, f"from {node.module} import {names}", err))
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    obj, why = _member(module, alias.name)
                    if why:
                        found.append(Unresolved(i, node.lineno, f"{node.module}.{alias.name}", why))
                    elif isinstance(obj, types.ModuleType):
                        bound[alias.asname or alias.name] = obj
        # then every attribute read through a module name (outermost chains only)
        inner: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) not in inner:
                cur = node.value
                while isinstance(cur, ast.Attribute):
                    inner.add(id(cur))
                    cur = cur.value
                chain = _attribute_chain(node)
                if chain is None or chain[0] not in bound:
                    continue
                obj: object = bound[chain[0]]
                path = chain[0]
                for attr in chain[1]:
                    if not isinstance(obj, types.ModuleType):
                        break  # past the modules: a value's attribute, not the library's layout
                    nxt, why = _member(obj, attr)
                    if why:
                        found.append(Unresolved(i, node.lineno, f"{path}.{attr}", why))
                        break
                    obj, path = nxt, f"{path}.{attr}"
    return sorted(found, key=lambda u: (u.cell, u.line))


def report(missing: list[Unresolved]) -> list[str]:
    """One line per name that does not resolve: where it is first used, how many cells use it, why."""
    by_name: dict[str, list[Unresolved]] = {}
    for u in missing:
        by_name.setdefault(u.name, []).append(u)
    lines = []
    for name, uses in by_name.items():
        cells = sorted({u.cell for u in uses})
        where = f"code cell{'s' if len(cells) > 1 else ''} {', '.join(map(str, cells))}"
        lines.append(f"{name} ({where}): {uses[0].why}")
    return lines


def code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


def _id(path: Path) -> str:
    return ("site:" if path.parent.name == "notebooks" else "") + path.stem


def test_the_published_medium_runs_are_found():
    assert len(PUBLISHED) >= 7, [p.name for p in PUBLISHED]


def test_the_site_renders_every_published_notebook():
    """docs/conf.py copies every ``results/medium/NN_*.ipynb`` (the same pattern as here) and the index's
    toctree globs them all: a newly published notebook (08's included) gets its page without registering."""
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert '(ROOT / "results" / "medium").glob("[0-9][0-9]_*.ipynb")' in conf
    assert ":glob:" in index and "notebooks/*" in index
    assert Path("08_your_own_networks.ipynb").match("[0-9][0-9]_*.ipynb")


def test_the_check_catches_a_moved_name():
    """The check bites: names that moved (or never existed) are reported, names that exist are not."""
    cells = [
        "from hgutils.repro import Claims, seed_everything\nfrom hgutils.ledger import Claims as C",
        "from hgutils.experiments import weightspace_protocol as cmp\nimport hgutils.verdicts as v",
        "cmp.run_comparison(1)\ncmp.no_such_function(2).x\nv.compare_seeds.__name__\nhgutils_x = 3\n",
        "from hgutils.weightspace import comparison\nimport hgutils.no_such_module\n%matplotlib inline",
    ]
    names = [u.name for u in unresolved_names(cells)]
    assert names == [
        "hgutils.repro.Claims",
        "cmp.no_such_function",
        "hgutils.weightspace.comparison",
        "import hgutils.no_such_module",
    ], names


def test_the_republication_ledger_names_published_notebooks():
    """Every notebook listed as awaiting republication is a published one (an entry outliving its notebook, or
    misspelled, fails) and gives a reason the claims report can print."""
    waiting = awaiting_republication(ROOT / "results" / "medium")
    assert set(waiting) <= {p.stem for p in PUBLISHED}, sorted(set(waiting) - {p.stem for p in PUBLISHED})
    assert all(len(reason) > 40 for reason in waiting.values()), waiting


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[_id(p) for p in NOTEBOOKS])
def test_published_notebook_imports_resolve(path: Path):
    missing = unresolved_names(code_cells(path))
    waiting = awaiting_republication(ROOT / "results" / "medium")
    if missing and path.stem in waiting:
        # declared: the claims report and the README mark it, with this reason, until it is republished
        pytest.skip(f"{path.stem} awaits republication ({len(missing)} stale name(s)): {waiting[path.stem]}")
    assert not missing, (
        f"{path.relative_to(ROOT)}: {len({u.name for u in missing})} name(s) its code uses do not resolve against "
        f"today's library (republish it: python -m hgutils reproduce --scale medium --only {path.name[:2]} "
        "--publish, or list it with its reason in results/medium/AWAITING_REPUBLICATION.json):\n  "
        + "\n  ".join(report(missing))
    )
