"""The Snakemake workflow: lint, dry runs, a tiny real run of the first stages."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from project_copy import VENV, copy_for_make

from adapters import CallSettings
from study.pipeline.config import load_config
from study.pipeline.scoring_plan import ScoringPlan

# The workflow runs in the repository: its reference jobs start with compiled kernels.
pytestmark = pytest.mark.usefixtures("compiled_kernels")


ROOT = Path(__file__).resolve().parent.parent
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def snakemake(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SNAKEMAKE), "--snakefile", str(ROOT / "Snakefile"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_lint_is_clean_for_the_whole_workflow():
    result = snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


def test_dry_run_of_the_default_and_test_configs(tmp_path):
    workdir = _workdir(tmp_path)
    for args in ([], ["--configfile", str(ROOT / "workflow/presets/test.yaml")]):
        result = snakemake("-n", *args, cwd=workdir)
        assert result.returncode == 0, result.stderr
        assert "synthesize_case" in result.stdout and "voxelize_case" in result.stdout
        assert_reference_jobs_have_priority(result.stdout)


@pytest.fixture(scope="module")
def project_for_make(tmp_path_factory) -> Path:
    return copy_for_make(tmp_path_factory.mktemp("project"))


@pytest.mark.parametrize("dry_run", ["--dry-run", "-n"])
def test_make_run_as_a_dry_run_lists_the_jobs_and_makes_nothing(project_for_make, dry_run):
    """docs/workflow.md's `make run SNAKEMAKE_ARGS="--dry-run"`, in a copy of the project: the
    jobs listed, no report asked of results that do not exist, nothing written."""
    project = project_for_make
    command = ["make", "-C", str(project), "run", f"SNAKEMAKE_ARGS={dry_run}", f"VENV={VENV}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "score_case" in done.stdout and "--report" not in done.stdout
    assert not (project / "results").exists() and not (project / "data").exists()


def assert_reference_jobs_have_priority(dry_run: str) -> None:
    """Every reference scoring job, and no tool's, carries the raised scheduling priority."""
    jobs = [block for block in dry_run.split("rule ")[1:] if block.startswith("score_case:")]
    assert jobs
    for job in jobs:
        tool = job.split("tool=")[1].split(",")[0]
        assert ("priority: 1" in job) == tool.startswith("reference"), job


def test_bad_config_stops_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("voxel_sizes: [[1, 1, -2]]\n")
    result = snakemake("-n", "--configfile", str(bad))
    assert result.returncode != 0
    assert "voxel_sizes[0][2]" in result.stdout + result.stderr


def _workdir(tmp_path: Path) -> Path:
    """A scratch working directory, so the test never touches the repository's data/."""
    shutil.copy(ROOT / "config.yaml", tmp_path / "config.yaml")
    return tmp_path


def test_foreign_data_folder_is_refused(tmp_path):
    workdir = _workdir(tmp_path)
    (workdir / "data/synthetic").mkdir(parents=True)
    (workdir / "data/synthetic/scan.nrrd").write_text("user data")
    result = snakemake("-n", cwd=workdir)
    assert result.returncode != 0
    assert "not made by the synthetic generator" in result.stdout + result.stderr
    assert (workdir / "data/synthetic/scan.nrrd").read_text() == "user data"


def test_tiny_run_produces_meshes_and_masks(tmp_path):
    workdir = _workdir(tmp_path)
    config = workdir / "tiny.yaml"
    config.write_text(
        "dataset: {name: tiny, cases: 1, oars: [Cochlea_L, Glottis]}\n"
        "voxel_sizes: [[2, 2, 2], [1, 1, 2]]\n"
        "timing: {voxel_size: [2, 2, 2]}\n"
    )
    targets = [
        "data/tiny/manifest.csv",
        "results/masks/tiny/2x2x2/case_01/pairs.csv",
        "results/masks/tiny/1x1x2/case_01/pairs.csv",
    ]
    # Targets first: --configfile takes every following word as a config file.
    result = snakemake(*targets, "--cores", "2", "--configfile", str(config), cwd=workdir)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = pd.read_csv(workdir / "data/tiny/manifest.csv")
    assert len(manifest) == 4 and set(manifest["observer"]) == {"A", "B"}
    assert all((workdir / "data/tiny" / p).is_file() for p in manifest["path"])
    pairs = pd.read_csv(workdir / "results/masks/tiny/1x1x2/case_01/pairs.csv")
    assert list(pairs["oar"]) == ["Cochlea_L", "Glottis"]
    assert (workdir / "results/logs/voxelize_case/tiny/case_01.log").is_file()
    # A rerun finds nothing to do and does not rewrite the dataset.
    rerun = snakemake(*targets, "-n", "--configfile", str(config), cwd=workdir)
    assert "Nothing to be done" in rerun.stdout + rerun.stderr


def test_paper_preset_scores_four_cases_per_job(tmp_path):
    """scoring.cases_per_job batches cases: the paper's 52 cases make 13 score_case jobs per
    implementation, each reading its 4 cases' pairs at every voxel size (the last batch may be
    shorter; here 52 = 13 x 4)."""
    result = snakemake(
        "-n",
        "--configfile",
        str(ROOT / "workflow/presets/paper.yaml"),
        cwd=_workdir(tmp_path),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    jobs = [block for block in result.stdout.split("rule ")[1:] if block.startswith("score_case:")]
    batches = Counter(job.split("batch=")[1].split(",")[0].split()[0] for job in jobs)
    assert set(batches) == {f"case_{first:02d}-case_{first + 3:02d}" for first in range(1, 53, 4)}
    assert len(set(batches.values())) == 1  # every implementation scores every batch
    for job in jobs:
        inputs = job.split("input: ")[1].split("\n")[0].split(", ")
        assert len(inputs) == 4 * 3, inputs


def test_batches_hold_every_case_once_in_order():
    config = load_config({"dataset": {"cases": 5}, "scoring": {"cases_per_job": 2}})
    cases = [f"case_{number:02d}" for number in range(1, 6)]
    plan = ScoringPlan(config, dataset="synthetic", cases=cases)
    assert list(plan.batches) == ["case_01-case_02", "case_03-case_04", "case_05"]
    assert sum((plan.cases_of(batch) for batch in plan.batches), []) == cases
    assert "results/scores/synthetic/reference/case_05.parquet" in plan.score_files()


def test_jobs_are_keyed_on_the_settings_they_call_with():
    """A job's param `settings` reads back into the settings of its calls, in the job's own
    environment; the timing's, HD alone, holds no percentile or tau to rerun it."""
    config = load_config({"metrics": {"percentile": 90}, "timeouts": {"tool_seconds": 30}})
    plan = ScoringPlan(config, dataset="synthetic", cases=["case_01"])
    assert CallSettings(**plan.settings("deepmind@paper")) == CallSettings(
        percentile=90, timeout=30, environment="paper"
    )
    timing = plan.settings("simpleitk", "timeout", "memory_gb", "environment")
    assert timing == {"timeout": 30, "memory_gb": 8, "environment": "study"}


def test_brackets_certify_the_yardstick_alone():
    """reference.brackets (the default): the yardstick's jobs prove brackets; the other
    meshings, compared with it, and the tools do not (switched off, none does)."""
    config = load_config({"reference": {"brackets": True}})
    plan = ScoringPlan(config, dataset="synthetic", cases=["case_01"])
    assert plan.variants == ["reference", "reference-marching-cubes", "reference-surface-nets"]
    assert [plan.certified(name) for name in [*plan.variants, "deepmind"]] == [
        True,
        False,
        False,
        False,
    ]
    plain = ScoringPlan(
        load_config({"reference": {"brackets": False}}), dataset="synthetic", cases=["case_01"]
    )
    assert not any(plain.certified(name) for name in plain.variants)


TINY = (
    "dataset: {name: tiny, cases: 1, oars: [Cochlea_L, Glottis]}\n"
    "voxel_sizes: [[2, 2, 2]]\ntools: [simpleitk]\n"
    "reference: {meshings: [discrete_marching_cubes]}\n"
)


def test_scoring_on_scan_sized_grids_runs_to_the_findings(tmp_path):
    """field_of_view.policy scan: the scored masks are scan-sized, the timing reuses them (no
    masks of its own), and with the grid check off the findings have no grid section."""
    workdir = _workdir(tmp_path)
    config = workdir / "scan.yaml"
    config.write_text(
        TINY + "field_of_view: {policy: scan, scan_mm: [200, 200, 200]}\n"
        "timing: {voxel_size: [2, 2, 2]}\n"
        "grid_check: {pairs_per_category: 0}\n"
    )
    result = snakemake("--cores", "2", "--configfile", str(config), cwd=workdir, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (workdir / "results/masks/tiny/scan").exists()
    assert not (workdir / "results/grid_check").exists()
    timing = pd.read_parquet(workdir / "results/timing/simpleitk.parquet")
    assert set(timing["grid"]) == {"scan"} and set(timing["shape"]) == {"101x101x101"}
    findings = (workdir / "results/findings.md").read_text()
    assert "Timed on scan-sized grids of 101 × 101 × 101 voxels" in findings
    assert "cropped and scan-sized grids" not in findings


def test_timing_on_the_scored_cropped_grids(tmp_path):
    """timing.grid scoring: the timed masks are the scored, cropped ones, of every OAR."""
    workdir = _workdir(tmp_path)
    config = workdir / "cropped.yaml"
    config.write_text(
        TINY + "timing: {voxel_size: [2, 2, 2], grid: scoring, pairs_per_category: null}\n"
    )
    target = "results/timing/simpleitk.parquet"
    result = snakemake(target, "--cores", "2", "--configfile", str(config), cwd=workdir)
    assert result.returncode == 0, result.stderr[-3000:]
    timing = pd.read_parquet(workdir / target)
    pairs = pd.read_csv(workdir / "results/masks/tiny/2x2x2/case_01/pairs.csv")
    assert list(timing["oar"]) == list(pairs["oar"]) == ["Cochlea_L", "Glottis"]
    assert set(timing["grid"]) == {"union_bbox"}
    assert not (workdir / "results/masks/tiny/scan").exists()
    for row in timing.itertuples():
        assert row.shape != "101x101x101" and row.status == "ok"


@pytest.mark.parametrize(
    "checked, expected",
    [
        ("coarsest", ["2x2x2"]),  # largest voxel volume: 8 mm^3
        ("all", ["1x1x1", "2x2x2", "0.5x0.5x2"]),
        ([[0.5, 0.5, 2], [2, 2, 2]], ["0.5x0.5x2", "2x2x2"]),
    ],
)
def test_grid_check_runs_at_its_voxel_sizes(checked, expected):
    config = load_config({"grid_check": {"voxel_sizes": checked}})
    masks = ScoringPlan(config, dataset="synthetic", cases=["case_01"]).grid_check_masks()
    assert masks == {
        grid: [f"results/grid_check/masks/{grid}/{spacing}/pairs.csv" for spacing in expected]
        for grid in ("cropped", "scan")
    }
