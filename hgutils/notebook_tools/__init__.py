"""Notebook tooling for readers and reviewers: hygiene checks, cleaning, links, text pairs, JupyterLab.

- :mod:`~hgutils.notebook_tools.hygiene` -- the rules a committed or published notebook must pass;
- :mod:`~hgutils.notebook_tools.links` -- Binder launch URLs, links to the published medium runs,
  the README's badge and notebook table;
- :mod:`~hgutils.notebook_tools.pairs` -- jupytext py:percent scripts paired with the notebooks;
- :mod:`~hgutils.notebook_tools.tables` -- tables that fit a JupyterLab window (wrapping HTML);
- :mod:`~hgutils.notebook_tools.lab` -- ``make lab``.

The cleaning of stored outputs and the machine paths it rewrites live one layer down, in the runner
(:mod:`hgutils.runner.notebook_cleaning`, :mod:`hgutils.runner.machine_paths`): ``reproduce --publish``
applies them too, and the runner imports nothing from this package.

Command line: ``python -m hgutils.notebook_tools clean | links | pair | sync | check | lab``.
"""

from hgutils.notebook_tools.hygiene import RULES, Problem, check_file, find_problems
from hgutils.notebook_tools.links import BINDER_REF, BINDER_REPO, binder_url, published_notebook

__all__ = [
    "BINDER_REF",
    "BINDER_REPO",
    "RULES",
    "Problem",
    "binder_url",
    "check_file",
    "find_problems",
    "published_notebook",
]
