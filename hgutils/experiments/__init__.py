"""One driver module per notebook: ``nbNN_<name>`` belongs to ``notebooks/NN_<name>.ipynb``.

Each module holds what its notebook needs and nothing the library should own: the preset
(``CONFIG``, a :class:`hgutils.presets.Preset`), the paper's numbers with their source, the run
functions and the notebook's own figures. No library module imports them: besides its notebook,
a driver is imported only by the runner above it (:mod:`hgutils.runner.params` reads its ``CONFIG``
to check a run's parameters; the paper dry run :mod:`hgutils.runner.paper_dryrun` builds and steps
every model of every paper preset), the tests and the benchmarks. Everything reusable lives in the
library subpackages (:mod:`hgutils.manifolds`, :mod:`hgutils.nn`, :mod:`hgutils.weightspace`,
:mod:`hgutils.similarity`, :mod:`hgutils.symmetry`, :mod:`hgutils.data`) and the one training loop
:mod:`hgutils.loop`.

``nb00_template`` is the template for a new notebook (docs/contributing.md). Two modules serve several
notebooks: :mod:`hgutils.experiments.weightspace_protocol` (the one-split, same-budget comparison of notebooks
01-03: :func:`~hgutils.experiments.weightspace_protocol.run.run_comparison` with its
:class:`~hgutils.experiments.weightspace_protocol.settings.RunSettings`, its results and tables, imported as
``cmp``) and :mod:`hgutils.experiments.gth_selection` (GTH-GMN's protocol, size and learning rate chosen on
validation, imported as ``gsel``).
"""
