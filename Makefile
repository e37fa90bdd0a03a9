# hgutils companion -- the two commands of the README, each bootstrapping .venv/ on first use.
#
#   make reproduce                 execute every numbered notebook at SCALE (default: medium) into
#                                  results/runs/ (untracked); prints the plan, resumes what is complete
#   make reproduce SCALE=smoke     ... at another preset; ONLY=05,06 selects notebooks, JOBS=2 runs two
#                                  at once, FORCE=1 reruns complete ones, PUBLISH=1 also copies ledgers
#                                  and figures into the tracked results/<scale>/ and figures/<scale>/
#   make reproduce SCALE=paper DEVICE=cuda
#   make torch-cuda                replace .venv's torch by the CUDA build of the same version (PyPI's Linux wheels)
#   make claims                    CLAIMS.md of SCALE from results/runs/ (what reproduce wrote); PUBLISHED=1: results/
#   make test                      lint + unit/property tests + nbval over notebooks/
#   make dryrun                    every notebook's paper preset, counts cut to a handful, on the CPU: builds
#                                  and trains every model one or two steps, prints peak memory per model
#                                  (ledger in DRYRUN_OUT; its own CI step after make test)
#   make lab                       JupyterLab on notebooks/ with the .venv kernel (LAB_ARGS="--no-browser ...")
#   make sync                      after editing or executing notebooks: clean stored outputs and metadata,
#                                  refresh the Binder/medium-run links, regenerate the jupytext .py twins
#   make docs                      the documentation site in docs/_build/html (Sphinx, offline, warnings are
#                                  errors): docs/ pages, the published medium notebooks, the API reference
#
# torch is installed first, alone, so that geoopt's dependency on torch does not pull a CUDA build.
# TORCH_SPEC / TORCH_PIP_ARGS choose the build (e.g. TORCH_PIP_ARGS="--index-url
# https://download.pytorch.org/whl/cpu" for a CPU-only wheel on a machine without a local one).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
SCALE ?= medium
DEVICE ?= cpu
ONLY ?=
JOBS ?= 1
NBVAL_TIMEOUT ?= 900
LAB_ARGS ?=
DRYRUN_OUT ?= results/runs/paper_dryrun

# Development copies of CIFAR-10 / TEB (../shared/data) are used by `make reproduce` when present;
# an explicit HGUTILS_DATA wins. The product never requires them (see docs/data.md).
HGUTILS_DATA ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)

.PHONY: reproduce test unit nbval lint claims venv clean-results lab sync torch-cuda dryrun docs

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[test]"
	$(PY) -m pip install -q -e ".[docs]"
	touch $(STAMP)

reproduce: $(STAMP)
	HGUTILS_DATA="$(HGUTILS_DATA)" $(PY) -m hgutils reproduce --scale $(SCALE) --device $(DEVICE) --jobs $(JOBS) \
		$(if $(ONLY),--only $(ONLY),) $(if $(FORCE),--force,) $(if $(PUBLISH),--publish,)

claims: $(STAMP)
	$(PY) -m hgutils claims --scale $(SCALE) $(if $(PUBLISHED),--published,)

# a CUDA build of the pinned torch, for DEVICE=cuda (PyPI's Linux x86-64 wheels are CUDA builds;
# TORCH_CUDA_PIP_ARGS="--index-url https://download.pytorch.org/whl/cuXYZ" picks another CUDA version)
TORCH_CUDA_PIP_ARGS ?=
torch-cuda: $(STAMP)
	$(PY) -m pip install --force-reinstall $(TORCH_CUDA_PIP_ARGS) "$(TORCH_SPEC)"

# notebooks/ holds the .ipynb files and their jupytext .py twins: both are linted; formatting is
# checked on the .ipynb (see [tool.ruff.format] in pyproject.toml)
lint: $(STAMP)
	$(PY) -m ruff check hgutils tests benchmarks notebooks
	$(PY) -m ruff format --check hgutils tests benchmarks notebooks

lab: $(STAMP)
	$(PY) -m hgutils.notebook_tools lab $(LAB_ARGS)

sync: $(STAMP)
	$(PY) -m hgutils.notebook_tools sync

unit: $(STAMP)
	HGUTILS_PROGRESS=0 MPLBACKEND=Agg $(PY) -m pytest tests -q

nbval: $(STAMP)
	@if ls notebooks/*.ipynb >/dev/null 2>&1; then \
		HGUTILS_PROGRESS=0 $(PY) -m pytest -q --nbval-lax --nbval-current-env \
			--nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=$(NBVAL_TIMEOUT) notebooks; \
	else echo "no notebooks to check"; fi

test: lint unit nbval

# the site from scratch (autosummary pages and the notebook copies are regenerated); tests/test_docs_site.py
# builds it the same way and opens it in headless Chromium
docs: $(STAMP)
	rm -rf docs/_build/html docs/api/generated
	HGUTILS_PROGRESS=0 MPLBACKEND=Agg $(PY) -m sphinx -b html -q -W --keep-going docs docs/_build/html
	@echo "site: docs/_build/html/index.html"

# zoos and caches of the dry run go to a temporary folder, so it never reuses (or leaves) a cache entry
dryrun: $(STAMP)
	tmp=$$(mktemp -d) && HGUTILS_CACHE=$$tmp HGUTILS_PROGRESS=0 MPLBACKEND=Agg OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		$(PY) -W ignore -m hgutils.runner.paper_dryrun --out $(DRYRUN_OUT) --device $(DEVICE); \
		status=$$?; rm -rf $$tmp; exit $$status

clean-results:
	rm -rf results/runs results/sweeps results/smoke  # run outputs; published ledgers (results/<scale>/) stay
