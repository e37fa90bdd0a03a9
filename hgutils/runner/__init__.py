"""Headless notebook execution behind ``python -m hgutils``: ``reproduce``, ``sweep`` and the claims report.

Modules, each named for what it holds:

- :mod:`~hgutils.runner.notebooks` -- finding notebooks (``--only``, ``sweep 05``), code fingerprints;
- :mod:`~hgutils.runner.params` -- a notebook's parameters, their types, validation;
- :mod:`~hgutils.runner.cli_values` -- command-line text to typed values (``-p``, sweep axes), finite numbers;
- :mod:`~hgutils.runner.points` -- sweep point folder names that name every value exactly;
- :mod:`~hgutils.runner.datacheck` -- an explicitly given data folder must hold data;
- :mod:`~hgutils.runner.preflight` -- the device, a writable output root, one run per root (lock);
- :mod:`~hgutils.runner.records` -- run keys, ``run.json`` records, atomic writing of outputs;
- :mod:`~hgutils.runner.execute` -- papermill into a staging folder, outputs returned as bytes;
- :mod:`~hgutils.runner.machine_paths` -- machine paths in notebook text, found and made portable;
- :mod:`~hgutils.runner.notebook_cleaning` -- stored outputs and metadata without machine paths,
  timings or widget state (what ``reproduce --publish`` and ``make sync`` apply);
- :mod:`~hgutils.runner.backends` -- local worker processes or Dask;
- :mod:`~hgutils.runner.processes` -- finding and stopping a run's processes, Ctrl-C/SIGTERM, the staging
  folder and what a SIGKILLed run leaves (its workers exit, the next run removes its folder);
- :mod:`~hgutils.runner.sweep`, :mod:`~hgutils.runner.reproduce`, :mod:`~hgutils.runner.claims_report`.

Guarantees (each backed by a test; docs/guarantees.md): every input is validated before anything
runs (one ``error:`` line, exit 2, nothing written; names and values against the parameters cells
before any heavy import; NaN and infinity, absurd counts and unknown task or dataset names refused);
every output, the cache included (``<out>/.cache`` unless ``$HGUTILS_CACHE`` is set), goes under
the run's output root (the repository's tracked ``results/<scale>`` and ``figures/<scale>`` only with
``--publish``); a run is reused only when its recorded key (scale, parameters, notebook code,
hgutils code) matches, and a sweep point's folder names its values exactly; SIGINT/SIGTERM cancel
queued work, terminate kernels and workers, keep what completed, leave no kernel connection file or
empty folder, and exit 130.
"""

from hgutils.runner.backends import DaskBackend, LocalBackend, make_backend, run_jobs
from hgutils.runner.claims_report import README_END, README_START, claims_markdown, collect_claims, write_claims
from hgutils.runner.datacheck import check_data_dir, check_data_env, datasets_present
from hgutils.runner.execute import Job, JobResult, NotebookFailure, execute, run_job
from hgutils.runner.notebooks import (
    NOTEBOOK_DIR,
    REPO_ROOT,
    driver_module,
    notebook_fingerprint,
    numbered_notebooks,
    resolve_notebook,
    select_notebooks,
)
from hgutils.runner.params import (
    ParamSpec,
    grid_product,
    notebook_params,
    parse_value,
    parse_values,
    preset_class,
    split_values,
)
from hgutils.runner.points import point_slug
from hgutils.runner.preflight import RunLock, check_device, check_writable
from hgutils.runner.records import is_complete, library_fingerprint, read_record, run_key
from hgutils.runner.reproduce import DEFAULT_RUN_ROOT, ReproduceResult, RunRecord, publish_results, reproduce
from hgutils.runner.sweep import SweepResult, sweep

__all__ = [
    "DEFAULT_RUN_ROOT",
    "NOTEBOOK_DIR",
    "README_END",
    "README_START",
    "REPO_ROOT",
    "DaskBackend",
    "Job",
    "JobResult",
    "LocalBackend",
    "NotebookFailure",
    "ParamSpec",
    "ReproduceResult",
    "RunLock",
    "RunRecord",
    "SweepResult",
    "check_data_dir",
    "check_data_env",
    "check_device",
    "check_writable",
    "claims_markdown",
    "collect_claims",
    "datasets_present",
    "driver_module",
    "execute",
    "grid_product",
    "is_complete",
    "library_fingerprint",
    "make_backend",
    "notebook_fingerprint",
    "notebook_params",
    "numbered_notebooks",
    "parse_value",
    "parse_values",
    "point_slug",
    "preset_class",
    "publish_results",
    "read_record",
    "reproduce",
    "resolve_notebook",
    "run_job",
    "run_jobs",
    "run_key",
    "select_notebooks",
    "split_values",
    "sweep",
    "write_claims",
]
