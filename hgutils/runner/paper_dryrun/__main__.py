"""``python -m hgutils.runner.paper_dryrun``: the paper-preset dry run (the CI step ``make dryrun``).

Arguments: ``--out DIR`` (ledger folder), ``--only 01,04``, ``--device cpu|cuda``, ``--seed``,
``--data-dir``, ``--track-tensors``, ``--compile``, ``--max-gib`` (see ``--help`` and
:func:`hgutils.runner.paper_dryrun.run.main`).
"""

from hgutils.runner.paper_dryrun.run import main

if __name__ == "__main__":
    raise SystemExit(main())
