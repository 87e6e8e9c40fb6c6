"""Shared fixtures (analytic spheres) and the `slow` mark that `make test-fast` leaves out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import vtk
from project_copy import warm_kernel_cache

from study.dataset.meshes import finish_surface

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
        # the brackets against dense evaluations, and the command run as a process; the
        # bracket's own checks stay fast (paper triangles, exact distances, empty masks, 2D)
        "test_mask_brackets_hold_the_dense_evaluation",
        "test_a_value_outside_its_bracket_moves_to_the_nearer_end",
        "test_the_command_prints_the_brackets",
        "test_brackets_hold_offset_spheres",
        "test_a_shrunk_bracket_fails_the_dense_check",
        "test_brackets_hold_concentric_spheres",
        "test_the_element_budget_leaves_an_honest_bracket_and_says_so",
        "test_cube_index_finds_the_brute_force_distance[3]",  # its small cases stay fast
        "test_a_run_killed_hard_resumes_with_the_same_command",  # a workflow run, killed
    }
)
"""Single tests (a function, or one case of it as `name[id]`) of five seconds or more on a quiet
machine (measured with --durations)."""


FAST_TESTS = pytest.StashKey[dict]()
"""Test file -> the names of its fast test functions (neither slow nor cluster), of every test
collected, before -m and -k deselect any: tests/test_fast_coverage.py reads it."""


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    """Mark as slow the slow modules' and tests' items, and every test that needs the 90
    synthetic OARs (test_synthetic's `synthetic_cases`, about a minute to generate)."""
    fast: dict[Path, set[str]] = {}
    for item in items:
        if (
            item.module.__name__ in SLOW_MODULES
            or item.originalname in SLOW_TESTS
            or item.name in SLOW_TESTS
            or "synthetic_cases" in item.fixturenames
        ):
            item.add_marker(pytest.mark.slow)
        names = fast.setdefault(item.path, set())
        if not any(item.get_closest_marker(mark) for mark in ("slow", "cluster")):
            names.add(item.originalname)
    config.stash[FAST_TESTS] = fast


@pytest.fixture(scope="session")
def fast_tests(pytestconfig) -> dict[Path, set[str]] | None:
    """FAST_TESTS of the files that have a fast test; None unless every test file was
    collected."""
    fast = pytestconfig.stash.get(FAST_TESTS, {})
    every_file = set(Path(__file__).parent.glob("test_*.py"))
    if not every_file <= set(fast):
        return None
    return {path: names for path, names in fast.items() if names}


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
def compiled_kernels() -> None:
    """The reference's numba kernels in the repository's cache before a test runs the
    workflow: its first jobs would otherwise each compile them at once (`warm_kernel_cache`)."""
    warm_kernel_cache()


@pytest.fixture(scope="session")
def sphere_factory():
    return make_sphere


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
