"""Shared fixtures (analytic spheres, one small synthetic dataset generated once per run) and
the `slow` mark that `make test-fast` leaves out."""

from __future__ import annotations

import numpy as np
import pytest
import vtk

from study.dataset.meshes import finish_surface
from study.dataset.synthetic import generate_case

SEED = 20240215
AGREEMENT_CASES = (1, 2, 3)

SLOW_MODULES = frozenset(
    {
        "test_workflow",
        "test_workflow_study",
        "test_workflow_realdata",
        "test_workflow_lidc",
        "test_notebook",
        "test_benchmarks",
        "test_adding_a_tool",
        "test_rerun_keys",
        "test_cli",
        "test_cluster",
    }
)
"""Modules that run the workflow, the notebook, the benchmarks or the commands as processes."""

SLOW_TESTS = frozenset(
    {
        "test_default_subdivision_converges_on_synthetic_oars",
        "test_concentric_spheres_as_surfaces",
        "test_figure_a3_a4_a5",
        "test_figure_4",
        "test_deterministic_and_seed_dependent",
        "test_real_tools_known_cases",
        "test_two_processes_on_a_cold_kernel_cache",
        "test_the_reference_gives_the_same_scores_on_both_grids",
        "test_a_study_in_both_environments_runs_to_its_end",
    }
)
"""Single tests of five seconds or more (measured with --durations)."""


def pytest_collection_modifyitems(config, items):
    """Mark as slow the slow modules' and tests' items, and every test that needs the 90
    synthetic OARs (about a minute to generate)."""
    for item in items:
        if (
            item.module.__name__ in SLOW_MODULES
            or item.originalname in SLOW_TESTS
            or "synthetic_cases" in item.fixturenames
        ):
            item.add_marker(pytest.mark.slow)


def make_sphere(radius: float, center=(0.0, 0.0, 0.0), resolution: int = 96) -> vtk.vtkPolyData:
    """Closed, outward-oriented triangulated UV sphere."""
    source = vtk.vtkSphereSource()
    source.SetRadius(radius)
    source.SetCenter(*center)
    source.SetThetaResolution(resolution)
    source.SetPhiResolution(resolution)
    source.Update()
    return finish_surface(source.GetOutput())


@pytest.fixture(scope="session")
def sphere_factory():
    return make_sphere


@pytest.fixture(scope="session")
def synthetic_cases():
    """All 30 OARs of cases 1-3 (about a minute): volumes, agreement, closedness."""
    return {case: generate_case(case, SEED) for case in AGREEMENT_CASES}


@pytest.fixture(autouse=True)
def fresh_workers():
    """Tool workers inherit the environment variables they start with: each test starts its
    own, and none outlives it."""
    from adapters.worker import stop_all

    stop_all()
    yield
    stop_all()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
