# Two commands do all set-up on a fresh machine:
#   make run    build .venv if missing or stale, then run the default study (Snakemake)
#   make test   build .venv (and panoptica's .envs/panoptica) if missing or stale, then run the test suite
#   make test-fast   the tests that are not slow, every module covered (tests/test_fast_coverage.py)
#   make test-cluster   the SLURM profile on a one-node SLURM started here (root; tests/test_cluster.py)
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Rebuilt whenever a pinned file changes.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt constraints.txt pyproject.toml | cksum | cut -d' ' -f1)
CORES ?= all
SNAKEMAKE_ARGS ?=
# A preset or a study of your own instead of config.yaml: make run CONFIG=workflow/presets/lidc.yaml
CONFIG ?=
CONFIG_ARGS := $(if $(CONFIG),--configfile $(CONFIG))
# pytest-xdist workers of make test and make test-fast (this machine and CI have 2 cores).
# --dist loadfile: a test file's tests run on one worker, so a module's fixture (a workflow
# run, a copy of the project) is built once. TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

.PHONY: run test test-cluster test-fast lint format venv clean-venv tools env-paper env-panoptica bench-study bench-reference crosscheck

venv: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[slurm]"
	@rm -f $(VENV)/.installed-*
	@touch $@

# A run killed hard (SIGKILL) leaves Snakemake's lock: released first when no run is alive here.
# A dry run (SNAKEMAKE_ARGS="--dry-run" or -n) lists the jobs only: it has no results to report.
DRY_RUN := $(filter -n --dry-run --dryrun,$(SNAKEMAKE_ARGS))
run: $(STAMP)
	$(BIN)/python -m study.pipeline.locks
	$(BIN)/snakemake --cores $(CORES) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)
	$(if $(DRY_RUN),,$(BIN)/snakemake --cores $(CORES) $(CONFIG_ARGS) --report results/report.html $(SNAKEMAKE_ARGS))

test: lint env-panoptica
	$(PYTEST)

# The SLURM profile run for real: a reduced study through sbatch on a one-node cluster that
# workflow/cluster/start-local-slurm starts (as root; installs the Debian packages if missing)
# and stops again. make test leaves it out (pyproject's addopts); skipped where SLURM cannot run.
test-cluster: $(STAMP)
	$(BIN)/python -m pytest -m cluster -s tests/test_cluster.py

# The tests without the workflow runs, commands run as processes and single tests of 5 s or more
# (the slow mark, tests/conftest.py): about two minutes, for the edit-test loop; every module of
# the packages is imported by one of them (tests/test_fast_coverage.py). make test stays the
# promise CI checks.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow and not cluster" -q

# Opt-in: builds Anima and EvaluateSegmentation into tools/built/bin and installs Metrics
# Reloaded into .venv (tools/build.py; local sources via ANIMA_SRC, EVALUATESEGMENTATION_SRC,
# METRICSRELOADED_SRC). make run and make test never need it.
tools: $(STAMP)
	$(BIN)/python tools/build.py

# Opt-in: the paper's tool versions in .envs/paper (workflow/envs/paper.txt), for scoring each
# tool in its paper version beside today's (config environments: [study, paper]); about 2 GB.
# A no-op when up to date. make run and make test never need it.
env-paper: $(STAMP)
	$(BIN)/python tools/build_environment.py paper

# Opt-in: panoptica, whose numpy < 2.3 conflicts with the study's pins, in its own home
# environment .envs/panoptica (workflow/envs/panoptica.txt); about 0.9 GB. A no-op when up to
# date. Without it panoptica is recorded as unavailable.
env-panoptica: $(STAMP)
	$(BIN)/python tools/build_environment.py panoptica

# Style and formatting are checked, not applied: make format applies them.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt Snakefile workflow/rules

# Benchmarks print their figures (docs/workflow.md, docs/validation.md).
# Another study measured, another projected: make bench-study BENCH_CONFIG=workflow/presets/lidc-test.yaml
#   BENCH_PAPER=workflow/presets/lidc.yaml
BENCH_CONFIG ?= config.yaml
BENCH_PAPER ?= workflow/presets/paper.yaml
bench-study: $(STAMP)
	$(BIN)/python benchmarks/study_speed.py --cores 2 --configfile $(BENCH_CONFIG) --paper $(BENCH_PAPER)

# Also time the pairs of two mask files of your own, one per label value:
#   make bench-reference BENCH_MASKS="reference.nii.gz prediction.nii.gz" BENCH_LABELS="1 2 5"
#   make bench-reference BENCH_PAIRS="results/masks/lidc/1x1x1/*/pairs.csv" (20 of a study's pairs)
BENCH_MASKS ?=
BENCH_LABELS ?=
BENCH_PAIRS ?=
bench-reference: $(STAMP)
	$(BIN)/python benchmarks/reference_speed.py $(if $(BENCH_MASKS),--masks $(BENCH_MASKS)) $(if $(BENCH_LABELS),--label $(BENCH_LABELS)) $(if $(BENCH_PAIRS),--pairs $(BENCH_PAIRS))

crosscheck: $(STAMP)
	$(BIN)/python benchmarks/crosscheck_meshmetrics.py

clean-venv:
	rm -rf $(VENV)
