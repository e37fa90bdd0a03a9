"""Notebook tooling for readers and reviewers: hygiene checks, cleaning, links, text pairs, JupyterLab.

- :mod:`~hgutils.notebook_tools.paths` -- machine paths in notebook text, found and made portable;
- :mod:`~hgutils.notebook_tools.clean` -- stored outputs and metadata without machine paths,
  timings or widget state (what ``reproduce --publish`` and ``make sync`` apply);
- :mod:`~hgutils.notebook_tools.hygiene` -- the rules a committed or published notebook must pass;
- :mod:`~hgutils.notebook_tools.links` -- Binder launch URLs, links to the published medium runs,
  the README's badge and notebook table;
- :mod:`~hgutils.notebook_tools.pairs` -- jupytext py:percent scripts paired with the notebooks;
- :mod:`~hgutils.notebook_tools.tables` -- tables that fit a JupyterLab window (wrapping HTML);
- :mod:`~hgutils.notebook_tools.lab` -- ``make lab``.

Command line: ``python -m hgutils.notebook_tools clean | links | pair | sync | check | lab``.
"""

from hgutils.notebook_tools.clean import clean_file, clean_notebook, is_clean
from hgutils.notebook_tools.hygiene import RULES, Problem, check_file, find_problems
from hgutils.notebook_tools.links import BINDER_REF, BINDER_REPO, binder_url, published_notebook
from hgutils.notebook_tools.paths import find_machine_paths, strip_machine_paths

__all__ = [
    "BINDER_REF",
    "BINDER_REPO",
    "RULES",
    "Problem",
    "binder_url",
    "check_file",
    "clean_file",
    "clean_notebook",
    "find_machine_paths",
    "find_problems",
    "is_clean",
    "published_notebook",
    "strip_machine_paths",
]
