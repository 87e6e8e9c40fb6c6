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
ANISOTROPIC_OPEN = pytest.param((0.5, 0.5, 2.0), marks=pytest.mark.xfail(
    strict=True, reason="open: 2 mm slices put voxelized-sphere HD/NSD beyond 0.5 mm / 0.02"))


def _close(got, want, mm, rel, keys):
    for key in keys:
        tol = (mm if key in DISTANCES else rel) + 1e-9
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
                                  tau=tau, grid_step=0.125)
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


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), ANISOTROPIC_OPEN])
def test_concentric_spheres_as_masks(spacing):
    shape = tuple(int(40 / s) for s in spacing)
    centre = (20.0, 20.0, 20.0)
    a = analytic.ball_mask(shape, spacing, 10.0, centre)
    b = analytic.ball_mask(shape, spacing, 11.5, centre)
    got = compute_metrics(a, b, spacing)
    # BIoU of voxelized shells is checked on surfaces only: voxelizing a 2 mm shell at these
    # sizes moves the band volumes by more than 0.02 (open item in docs/reference.md).
    keys = [k for k in got if k != "BIoU"]
    _close(got, analytic.concentric(10.0, 11.5, 2.0, 3), 0.5, 0.02, keys)


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), ANISOTROPIC_OPEN])
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
    assert np.max(np.abs(fast - brute_force_distances(points, vertices, cells))) < 1e-6


def test_tie_rule_counts_distances_equal_to_tau():
    """Cubes of half-sides 2 and 4 on unit grids: inner-to-outer distances are all exactly
    2 = tau; on the outer faces only the central 4 x 4 squares are within 2, so
    NSD = (96 + 96) / (96 + 384). A shift of 1e-7 mm is a tie (counted), 1e-3 mm is not."""
    inner, outer = _cube_surface(2.0), _cube_surface(4.0)
    exact = compute_surface_metrics(inner, outer, tau=2.0)
    assert exact["NSD"] == pytest.approx(192 / 480, abs=1e-12)
    nudged = compute_surface_metrics(inner, (outer[0] * (1 + 1e-7 / 4), outer[1]), tau=2.0)
    assert nudged["NSD"] == pytest.approx(192 / 480, abs=1e-6)
    beyond = compute_surface_metrics(inner, (outer[0] * (1 + 1e-3 / 4), outer[1]), tau=2.0)
    assert beyond["NSD"] < 0.3


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


def _invariance_runs():
    spacing = (1.0, 0.8, 1.2)
    a = analytic.ball_mask((24, 28, 22), spacing, 7.0, (11.0, 11.0, 12.0))
    b = analytic.ball_mask((24, 28, 22), spacing, 6.0, (13.0, 10.0, 12.5))
    base = compute_metrics(a, b, spacing)
    swapped = compute_metrics(b, a, spacing)
    moved = compute_metrics(np.roll(a, 2, axis=1), np.roll(b, 2, axis=1), spacing,
                            origin=(5.0, -3.0, 2.0))
    order = (2, 0, 1)
    permuted = compute_metrics(a.transpose(order), b.transpose(order),
                               tuple(spacing[i] for i in order))
    return base, (swapped, moved, permuted)


def test_invariances_swap_translate_permute():
    base, others = _invariance_runs()
    for other in others:
        for key, value in base.items():
            # Permuting axes changes how marching cubes splits voxel faces into triangles,
            # and with it where selective subdivision lands: 1e-3 mm, not bit-identical.
            if key != "BIoU":
                assert other[key] == pytest.approx(value, abs=1e-3), key


@pytest.mark.xfail(strict=True, reason="open: BIoU moves by ~2e-3 under one of the transforms")
def test_biou_invariance():
    base, others = _invariance_runs()
    for other in others:
        assert other["BIoU"] == pytest.approx(base["BIoU"], abs=1e-6)


def test_biou_hierarchy_equals_every_point():
    """Counting by blocks gives exactly the counts of evaluating every dense point."""
    a = SignedSurface(*analytic.circle_surface(3.0, segments=64))
    b = SignedSurface(*analytic.circle_surface(2.5, (0.7, 0.2), segments=64))
    grid = DenseGrid(np.array([-4.0, -4.0]), np.array([0.1, 0.1]), (81, 81))
    counts = count_bands(a, b, 1.0, grid, with_volumes=True)
    axes = [grid.origin[i] + np.arange(n) * grid.step[i] for i, n in enumerate(grid.shape)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 2)
    sd_a, sd_b = a.signed_distance(points), b.signed_distance(points)
    band_a, band_b = (sd_a >= -1) & (sd_a <= 0), (sd_b >= -1) & (sd_b <= 0)
    assert (counts.band_a, counts.band_b, counts.band_both) == (
        band_a.sum(), band_b.sum(), (band_a & band_b).sum())
    assert counts.inside_both == ((sd_a <= 0) & (sd_b <= 0)).sum()


def test_empty_masks():
    a = np.zeros((5, 5, 5), bool)
    b = a.copy()
    b[2, 2, 2] = True
    with pytest.warns(UserWarning):
        one = compute_metrics(a, b, (1, 1, 1))
    assert one["HD"] == np.inf and one["NSD"] == 0 and one["BIoU"] == 0 and one["DSC"] == 0
    with pytest.warns(UserWarning):
        both = compute_metrics(a, a, (1, 1, 1))
    assert all(np.isnan(v) for v in both.values())


@pytest.mark.parametrize("kwargs, message", [
    ({"b": np.zeros((4, 5, 4), bool)}, "same shape"),
    ({"a": np.full((4, 4, 4), 2)}, "binary"),
    ({"spacing": (1, 1)}, "spacing"),
    ({"spacing": (1, 0, 1)}, "positive"),
    ({"spacing": (1, np.nan, 1)}, "positive"),
    ({"percentile": 0}, "percentile"),
    ({"percentile": 101}, "percentile"),
    ({"tau": -1}, "tau"),
    ({"meshing": "voxels"}, "meshing"),
])
def test_bad_input_names_the_argument(kwargs, message):
    args = {"a": np.ones((4, 4, 4), bool), "b": np.ones((4, 4, 4), bool),
            "spacing": (1, 1, 1)} | kwargs
    with pytest.raises(ValueError, match=message):
        compute_metrics(args.pop("a"), args.pop("b"), args.pop("spacing"), **args)


def test_subdivision_error_falls():
    """Offset circles: HD error against the exact value shrinks as subdivision rises."""
    a = analytic.circle_surface(5.0, segments=40)
    b = analytic.circle_surface(5.0, (1.3, 0.0), segments=40)
    errors = [abs(compute_surface_metrics(a, b, subdivision=level, grid_step=0.5)["HD"] - 1.3)
              for level in (0, 2, 4)]
    assert errors[0] > errors[1] > errors[2]
