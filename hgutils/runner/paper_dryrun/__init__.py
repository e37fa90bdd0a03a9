"""Paper-preset dry run of every notebook: the paper's sizes, a handful of networks and one step.

No notebook's ``paper`` preset has run end to end on a GPU yet. This package takes each notebook's
``CONFIG.from_scale("paper", **CUTS[nb])`` -- the paper preset with only the *counts* cut (networks,
images, seeds, optimiser steps, epochs, repetitions; :data:`CUTS` lists every override and why) -- and
drives it through the same library entry points the notebook calls, so that a shape error, a dtype
or device slip or a memory blow-up at the paper's widths, depths, snapshot counts T, image sizes,
sequence lengths and batch sizes shows up here, on the CPU, before the first GPU run.

Every model (each meta-network variant of notebooks 01-03, each ResNet-18 flavour and ablation and
each genomic CNN of 04, each stacked MLP sweep of 05 and the SDF grid of 06, and each zoo generator)
is one record of the ledger (:func:`run_dryrun` writes ``dryrun.json`` and ``DRYRUN.md``): what ran,
its parameter count, wall and CPU seconds, status (``ok``; ``error`` with the exception;
``skipped`` with the reason, e.g. a dataset that is not on this machine; ``over memory cap``, a call
stopped by :func:`memory_cap`) and its peak memory (:class:`hgutils.memory.PeakMemory`: the
process's peak RSS during the call; with ``track_tensors`` also the live tensor storages). For the
models whose memory grows with the batch (meta-networks, ResNets, genomic CNNs) one training step
(forward, loss, backward, optimiser) is also measured by its live tensor bytes at two small batches
and extrapolated to the paper's batch (:func:`step_memory`, ``step_mib@paper_batch``): the figure to
hold against a GPU's memory.

Device placement (``device="cuda"`` through papermill) cannot be exercised without a GPU, but the
``meta`` device stands in for it: :func:`device_audit` moves each model and its batch there and
runs its training objective and backward, which fails where a tensor created on the CPU would meet
a GPU tensor (``device_audit``: ``ok``, ``slip: ...`` -- an error of the run -- or ``partial: ...``
where an operator needing data, such as ``.item()``, stopped it; everything before was checked).

Deviations from the paper preset other than counts are named in :data:`CUTS` (``compile`` off:
``torch.compile`` takes minutes on a shared 2-core CPU and changes no shape; ``--compile`` keeps it).

Command line (the CI step ``make dryrun``)::

    python -m hgutils.runner.paper_dryrun --out results/runs/paper_dryrun [--only 01,04] [--device cpu]

Modules, each named for what it holds:

- :mod:`~hgutils.runner.paper_dryrun.core` -- :data:`CUTS`, the :class:`DryRun` ledger and its
  measuring (:func:`memory_cap`, :func:`step_memory`, :func:`device_audit`);
- :mod:`~hgutils.runner.paper_dryrun.weightspace` -- the dry runs of notebooks 01, 02, 03 and 07
  (meta-networks on zoos; :func:`metanet_step`);
- :mod:`~hgutils.runner.paper_dryrun.others` -- the dry runs of notebooks 04 (ResNet-18s, genomic
  CNNs; :func:`classifier_step`), 05 and 06 (stacked MLPs);
- :mod:`~hgutils.runner.paper_dryrun.run` -- :data:`DRIVERS`, :func:`run_dryrun` (the ledger files)
  and the command line :func:`main` (``__main__``).

Nothing in :mod:`hgutils.runner` imports this package: ``python -m hgutils`` starts without torch.
"""

from hgutils.runner.paper_dryrun.core import (
    CUTS,
    NOTEBOOKS,
    OVER_CAP,
    DryRun,
    device_audit,
    memory_cap,
    step_memory,
)
from hgutils.runner.paper_dryrun.others import classifier_step
from hgutils.runner.paper_dryrun.run import DRIVERS, dryrun_notebook, main, run_dryrun
from hgutils.runner.paper_dryrun.weightspace import metanet_step

__all__ = [
    "CUTS",
    "DRIVERS",
    "NOTEBOOKS",
    "OVER_CAP",
    "DryRun",
    "classifier_step",
    "device_audit",
    "dryrun_notebook",
    "main",
    "memory_cap",
    "metanet_step",
    "run_dryrun",
    "step_memory",
]
