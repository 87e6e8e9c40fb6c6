"""The cluster projection of `make bench-study`, on numbers worked out by hand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd
import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks/study_speed.py"


@pytest.fixture(scope="module")
def study_speed():
    spec = importlib.util.spec_from_file_location("study_speed", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def rules():
    # 3,600 job-seconds: 400 of them in 4 exclusive timing jobs, 3,200 in 96 other jobs.
    return pd.DataFrame(
        {"projected": [400.0, 3200.0], "paper_jobs": [4, 96]}, index=["time_hd", "score_case"]
    )


def test_compute_bound_cluster_divides_the_work_by_its_cores(study_speed, rules):
    o, d = study_speed.SLURM_JOB_START_SECONDS, study_speed.SBATCH_DELAY_SECONDS
    run = study_speed.cluster_projection(rules, {"time_hd"}, 20, 1, 2, 0.8)
    # One node: the timing alone (400 s), the rest plus 20 start-ups on 2 cores at 80 %.
    assert run["wall"] == pytest.approx(400 + (3200 + 20 * o) / (2 * 0.8))
    assert run["overhead_share"] == pytest.approx(20 * o / 3600)
    assert run["mean_job_seconds"] == pytest.approx(3600 / 20)
    assert run["submission_bound"] == pytest.approx(20 * d)


def test_timing_jobs_spread_over_nodes_but_no_further_than_one_per_node(study_speed, rules):
    o = study_speed.SLURM_JOB_START_SECONDS
    two = study_speed.cluster_projection(rules, {"time_hd"}, 20, 2, 2, 1.0)
    many = study_speed.cluster_projection(rules, {"time_hd"}, 20, 8, 2, 1.0)
    assert two["wall"] == pytest.approx(400 / 2 + (3200 + 20 * o) / 4)
    assert many["wall"] == pytest.approx(400 / 4 + (3200 + 20 * o) / 16)


def test_many_short_jobs_on_a_big_cluster_wait_for_their_submissions(study_speed, rules):
    d = study_speed.SBATCH_DELAY_SECONDS
    run = study_speed.cluster_projection(rules, set(), 1000, 100, 2, 1.0)
    assert run["wall"] == run["submission_bound"] == pytest.approx(1000 * d)
