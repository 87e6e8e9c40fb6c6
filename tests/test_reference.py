"""Accuracy of the mesh-based reference against shapes with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from reference import analytic, compute_metrics, compute_surface_metrics
from reference.biou import DenseGrid, count_bands
from reference.closest import SurfaceIndex
from reference.geometry import brute_force_distances
from reference.metrics import Directed, directed_distances
from reference.signed import SignedSurface

DISTANCES = ("HD", "HD95", "MASD", "ASSD")


def _close(got, want, mm, rel, keys):
    for key in keys:
        tol = mm if key in DISTANCES else rel
        assert abs(got[key] - want[key]) <= tol, (key, got[key], want[key])


def triangle(apex):
    """Paper Fig. A1: base (0,0)-(4,0) of 100 uniformly spaced points, apex closing it."""
    base = np.column_stack([np.linspace(0, 4, 100), np.zeros(100)])
    vertices = np.vstack([base, [apex]])
    cells = np.array([[i, i + 1] for i in range(99)] + [[99, 100], [100, 0]])
    return vertices, cells


def test_paper_triangle_example_weighted_vs_point_based():
    a, b = triangle((2.0, 6.0)), triangle((2.0, 2.0))
    scores = compute_surface_metrics(a, b, subdivision=0)
    assert scores["HD95"] == pytest.approx(np.sqrt(2), abs=1e-9)
    a_to_b = directed_distances(a[0][a[1]], SurfaceIndex(*b), percentile=95, threshold=2,
                                subdivision=0)
    b_to_a = directed_distances(b[0][b[1]], SurfaceIndex(*a), percentile=95, threshold=2,
                                subdivision=0)
    # Same distances with unit weights: the point-based HD95 is the 96th of 101 = 0.
    unit = [Directed(d.distance, np.ones_like(d.size)) for d in (a_to_b, b_to_a)]
    assert max(u.percentile(95) for u in unit) == 0.0
    assert sorted(np.round(a_to_b.distance, 2))[-2:] == [1.41, 1.41]
    assert sorted(np.round(b_to_a.distance, 2))[-2:] == [0.63, 0.63]
    assert scores["DSC"] == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("r_b", [11.5, 12.1])
def test_concentric_spheres_as_surfaces(r_b):
    tau = 2.0
    got = compute_surface_metrics(analytic.sphere_surface(10.0), analytic.sphere_surface(r_b),
                                  tau=tau, grid_step=0.1)
    _close(got, analytic.concentric(10.0, r_b, tau, 3), 0.01, 0.001, got)


@pytest.mark.parametrize("r_b", [6.5, 8.1])
def test_concentric_circles_as_surfaces(r_b):
    got = compute_surface_metrics(analytic.circle_surface(5.0), analytic.circle_surface(r_b),
                                  tau=3.0, grid_step=0.02)
    _close(got, analytic.concentric(5.0, r_b, 3.0, 2), 0.01, 0.001, got)


def test_offset_spheres_as_surfaces():
    want = analytic.offset_spheres(10.0, 3.0, tau=2.0)
    got = compute_surface_metrics(analytic.sphere_surface(10.0),
                                  analytic.sphere_surface(10.0, (3.0, 0, 0)), tau=2.0,
                                  grid_step=0.2)
    _close(got, want, 0.01, 0.001, want)


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (0.5, 0.5, 2.0)])
def test_concentric_spheres_as_masks(spacing):
    shape = tuple(int(40 / s) for s in spacing)
    centre = (20.0, 20.0, 20.0)
    a = analytic.ball_mask(shape, spacing, 10.0, centre)
    b = analytic.ball_mask(shape, spacing, 11.5, centre)
    got = compute_metrics(a, b, spacing)
    _close(got, analytic.concentric(10.0, 11.5, 2.0, 3), 0.5, 0.02, got)


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (0.5, 0.5, 2.0)])
def test_offset_spheres_as_masks(spacing):
    shape = tuple(int(40 / s) for s in spacing)
    a = analytic.ball_mask(shape, spacing, 10.0, (20.0, 20.0, 20.0))
    b = analytic.ball_mask(shape, spacing, 10.0, (21.5, 21.5, 20.0))
    want = analytic.offset_spheres(10.0, np.hypot(1.5, 1.5), tau=2.0)
    got = compute_metrics(a, b, spacing)
    _close(got, want, 0.5, 0.02, want)


def test_closest_points_match_brute_force():
    rng = np.random.default_rng(1)
    vertices, cells = analytic.sphere_surface(5.0, resolution=24)
    points = rng.normal(size=(300, 3)) * 4
    fast = SurfaceIndex(vertices, cells).query(points).distance
    assert np.max(np.abs(fast - brute_force_distances(points, vertices, cells))) < 1e-12


def test_tie_rule_counts_distances_equal_to_tau():
    """Cubes of half-sides 5 and 7: inner-to-outer distances are all exactly 2 = tau; on the
    outer faces only the central 10 x 10 squares are within 2. NSD = 1200 / 1776. A shift of
    1e-7 mm is a tie (counted), one of 1e-3 mm is not."""
    def cube(half):
        mask = np.zeros((3 * 2 * half,) * 3, bool)
        return mask
    inner, outer = _cube_surface(5.0), _cube_surface(7.0)
    exact = compute_surface_metrics(inner, outer, tau=2.0)
    assert exact["NSD"] == pytest.approx(1200 / 1776, abs=1e-12)
    nudged = compute_surface_metrics(inner, (outer[0] * (1 + 1e-7 / 7), outer[1]), tau=2.0)
    assert nudged["NSD"] == pytest.approx(1200 / 1776, abs=1e-12)
    beyond = compute_surface_metrics(inner, (outer[0] * (1 + 1e-3 / 7), outer[1]), tau=2.0)
    assert beyond["NSD"] < 0.01 + 0 * len(cube(1))


def _cube_surface(half: float):
    """Axis-aligned cube surface meshed on a unit grid (two triangles per unit square)."""
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy

    n = int(2 * half)
    source = vtk.vtkCubeSource()
    source.SetXLength(2 * half)
    source.SetYLength(2 * half)
    source.SetZLength(2 * half)
    faces = vtk.vtkTriangleFilter()
    faces.SetInputConnection(source.GetOutputPort())
    fine = vtk.vtkLinearSubdivisionFilter()
    fine.SetInputConnection(faces.GetOutputPort())
    fine.SetNumberOfSubdivisions(int(np.log2(n)) if 2 ** int(np.log2(n)) == n else 0)
    fine.Update()
    data = fine.GetOutput()
    return (vtk_to_numpy(data.GetPoints().GetData()).astype(float),
            vtk_to_numpy(data.GetPolys().GetConnectivityArray()).reshape(-1, 3).astype(int))
