"""Sphinx configuration of the hgutils documentation site (``make docs``).

The site is built offline with warnings as errors: the pages of ``docs/``, the published medium
notebooks rendered from their stored outputs (never executed) and an API reference generated from
the docstrings. MathJax comes from the ``jupyter-server-mathjax`` package (MathJax 2.7, shipped
inside the wheel), so formulas render without a network.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

project = "hgutils"
author = "the hgutils authors"
copyright = "2026, the hgutils authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build", "examples", "README.md"]
suppress_warnings: list[str] = []

# ------------------------------------------------------------------ notebooks
# The published medium notebooks and CLAIMS.md live in results/medium/; they are copied next to the pages
# (docs/notebooks/, untracked) with their links to each other made local, and rendered from their stored outputs.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3


def _copy_notebooks() -> None:
    out = DOCS / "notebooks"
    out.mkdir(exist_ok=True)
    wanted = set()
    for src in sorted((ROOT / "results" / "medium").glob("[0-9][0-9]_*.ipynb")):
        text = re.sub(r"\]\(\.\./results/medium/", "](", src.read_text(encoding="utf-8"))
        dst = out / src.name
        wanted.add(dst.name)
        if not dst.is_file() or dst.read_text(encoding="utf-8") != text:
            dst.write_text(text, encoding="utf-8")
    claims = ROOT / "results" / "medium" / "CLAIMS.md"
    if claims.is_file():
        text = "# Every claim (medium)\n\n" + claims.read_text(encoding="utf-8")
        wanted.add("CLAIMS.md")
        if not (out / "CLAIMS.md").is_file() or (out / "CLAIMS.md").read_text(encoding="utf-8") != text:
            (out / "CLAIMS.md").write_text(text, encoding="utf-8")
    for stale in out.iterdir():
        if stale.name not in wanted:
            stale.unlink()


def _published_links(app, docname: str, source: list[str]) -> None:  # noqa: ANN001 - sphinx's Sphinx object
    """A page of docs/ links a published run as ``../results/medium/X`` (right on GitHub); on the site it is
    the copy in ``notebooks/``."""
    if "/" not in docname:
        source[0] = source[0].replace("](../results/medium/", "](notebooks/")


_MODULE = re.compile(r"(?<![`{])`(hgutils(?:\.[a-z_0-9]+)+)`")


def _api_links(app, docname: str, source: list[str]) -> None:  # noqa: ANN001 - sphinx's Sphinx object
    """On the site, a module named in a page as ```hgutils.x.y``` links its API reference page."""
    if docname.startswith(("api/", "notebooks/")):
        return

    def link(m: re.Match) -> str:
        try:
            is_module = importlib.util.find_spec(m.group(1)) is not None
        except (ImportError, ValueError):  # a function or class named in full, or no such module
            is_module = False
        return f"{{py:mod}}`{m.group(1)}`" if is_module else m.group(0)

    source[0] = _MODULE.sub(link, source[0])


_copy_notebooks()

# ------------------------------------------------------------------ API reference
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True

# ------------------------------------------------------------------ math, offline
_mathjax = importlib.util.find_spec("jupyter_server_mathjax")
if _mathjax is None or _mathjax.origin is None:
    raise RuntimeError("the docs need the jupyter-server-mathjax package (pip install -e '.[docs]')")
_MATHJAX_DIR = Path(_mathjax.origin).parent / "static"


def _stage_mathjax(app) -> None:  # noqa: ANN001 - sphinx's Sphinx object
    dst = Path(app.outdir) / "_static" / "mathjax"
    if not (dst / "MathJax.js").is_file():
        shutil.copytree(_MATHJAX_DIR, dst, dirs_exist_ok=True)


mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "HTML-CSS": {"availableFonts": ["STIX-Web"], "preferredFont": "STIX-Web", "webFont": "STIX-Web"},
    # MyST marks its pages' sections mathjax_ignore and its formulas class "math" (the MathJax 3 options Sphinx
    # writes say the same); MathJax 2 needs them as tex2jax classes
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": True,
        "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
}

# ------------------------------------------------------------------ HTML
html_theme = "furo"
html_title = "hgutils"
html_static_path: list[str] = []
templates_path = ["_templates"]


def setup(app) -> None:  # noqa: ANN001
    app.connect("builder-inited", _stage_mathjax)
    app.connect("source-read", _published_links)
    app.connect("source-read", _api_links)
