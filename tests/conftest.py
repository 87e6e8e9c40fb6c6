"""Shared fixtures: analytic spheres and one small synthetic dataset generated once per run."""

from __future__ import annotations

import numpy as np
import pytest
import vtk

from study.meshes import finish_surface
from study.synthetic import generate_case

SEED = 20240215
AGREEMENT_CASES = (1, 2, 3)


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


@pytest.fixture
def rng():
    return np.random.default_rng(0)
