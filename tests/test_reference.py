"""Accuracy of the mesh-based reference against shapes with known answers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from reference import (
    analytic,
    api,
    biou,
    compute_metrics,
    compute_surface_metrics,
    crossings,
    elements,
    geometry,
    percentiles,
    within_tau,
)
from reference.api import mesh_surface
from reference.biou import count_bands
from reference.closest import SurfaceIndex
from reference.dense_grid import DenseGrid, dense_grid_of_image
from reference.distance_pass import (
    Directed,
    _corner_distance,
    directed_distances,
    linear_share_within,
    opened_pair,
    split_elements,
    subdivided,
    tie_threshold,
)
from reference.geometry import brute_force_distances
from reference.hausdorff import directed_hausdorff
from reference.metrics import weighted_metrics
from reference.signed import SignedSurface

DISTANCES = ("HD", "HD95", "MASD", "ASSD")


def _close(got, want, mm, rel, keys, overrides=None):
    for key in keys:
        tol = (overrides or {}).get(key, mm if key in DISTANCES else rel) + 1e-9
        assert abs(got[key] - want[key]) <= tol, (key, got[key], want[key])


def triangle(apex):
    """Paper Fig. A1: base (0,0)-(4,0) of 100 uniformly spaced points, apex closing it."""
    base = np.column_stack([np.linspace(0, 4, 100), np.zeros(100)])
    vertices = np.vstack([base, [apex]])
    cells = np.array([[i, i + 1] for i in range(99)] + [[99, 100], [100, 0]])
    return vertices, cells


def test_paper_triangle_example_weighted_vs_point_based():
    # The paper's definition: one query point per element centre, no subdivision.
    a, b = triangle((2.0, 6.0)), triangle((2.0, 2.0))
    scores = compute_surface_metrics(a, b, subdivision=0, quadrature="midpoint", bounds=False)
    assert scores["HD95"] == pytest.approx(np.sqrt(2), abs=1e-9)
    a_to_b = directed_distances(
        a,
        SurfaceIndex(*b),
        percentile=95,
        threshold=2,
        subdivision=0,
        quadrature="midpoint",
    )
    b_to_a = directed_distances(
        b,
        SurfaceIndex(*a),
        percentile=95,
        threshold=2,
        subdivision=0,
        quadrature="midpoint",
    )
    # Same distances with unit weights: the point-based HD95 is the 96th of 101 = 0.
    unit = [Directed(d.distance, np.ones_like(d.size)) for d in (a_to_b, b_to_a)]
    assert max(u.percentile(95) for u in unit) == 0.0
    assert sorted(np.round(a_to_b.distance, 2))[-2:] == [1.41, 1.41]
    assert sorted(np.round(b_to_a.distance, 2))[-2:] == [0.63, 0.63]
    # DSC is counted on a grid; at the default step (0.2) whole rows of grid points lie on the
    # sides y = x of B, so count it on a finer grid.
    fine = compute_surface_metrics(a, b, subdivision=0, grid_step=0.05)
    assert fine["DSC"] == pytest.approx(0.5, abs=0.01)


def _affine_samples(corners, slope, offset, count):
    """Values of x -> slope . x + offset at `count` points spread uniformly over each
    element (segments (k, 2, dim) or triangles (k, 3, dim)), (k, count)."""
    rng = np.random.default_rng(5)
    if corners.shape[1] == 2:
        weights = rng.random((count, 1))
        weights = np.hstack([1 - weights, weights])
    else:
        weights = rng.dirichlet(np.ones(3), count)  # uniform over a triangle
    points = np.einsum("pn,knd->kpd", weights, corners)
    return points @ slope + offset[:, None]


@pytest.mark.parametrize("dim", [2, 3])
def test_linear_share_within_equals_sampled_affine_functions(dim):
    """The share of an element where an affine function is <= t, from its corner values,
    against the share of 200,000 uniform samples of the same function."""
    rng = np.random.default_rng(dim)
    corners = rng.normal(size=(40, dim, dim))
    slope, offset = rng.normal(size=dim), rng.normal(size=40)
    samples = _affine_samples(corners, slope, offset, 200_000)
    corner_values = corners @ slope + offset[:, None]
    for t in np.quantile(samples, [0.0, 0.1, 0.37, 0.5, 0.83, 1.0]):
        want = (samples <= t).mean(axis=1)
        assert linear_share_within(corner_values, t) == pytest.approx(want, abs=4e-3)
    # Ties: a flat element lies wholly within t = its value; an element with two equal
    # corners at t has none of its area below.
    assert linear_share_within(np.array([[2.0, 2.0, 2.0]]), 2.0) == [1.0]
    assert linear_share_within(np.array([[2.0, 2.0, 3.0]]), 2.0) == [0.0]
    assert linear_share_within(np.array([[1.0, 3.0, 3.0]]), 3.0) == [1.0]


def test_interpolated_percentile_equals_the_sampled_distribution():
    """HDp with open elements: the size-weighted percentile of closed steps plus affine
    open elements, against the percentile of a sample of both."""
    rng = np.random.default_rng(11)
    corners = rng.normal(size=(30, 3, 3))
    slope, offset = rng.normal(size=3), rng.normal(size=30) + 3
    corner_values = corners @ slope + offset[:, None]
    sizes = 0.5 * np.linalg.norm(
        np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1
    )
    steps = rng.uniform(2, 4, 50)
    step_sizes = rng.uniform(0.1, 1.0, 50)
    directed = Directed(
        np.concatenate([steps, corner_values.mean(axis=1)]),
        np.concatenate([step_sizes, sizes]),
        open=np.arange(50, 80),
        corner_distance=corner_values,
    )
    # The same distribution as a weighted sample: each open element by 20,000 points.
    samples = _affine_samples(corners, slope, offset, 20_000)
    values = np.concatenate([steps, samples.ravel()])
    weights = np.concatenate([step_sizes, np.repeat(sizes / 20_000, 20_000)])
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    for p in (5, 50, 95):
        want = values[order][np.searchsorted(cumulative, p / 100 * cumulative[-1])]
        assert directed.percentile(p) == pytest.approx(want, abs=0.01)
    # No open element: d[n_p] of the sorted distances, n_p the first whose cumulative size
    # reaches p %, written out here independently of the module.
    for open_ in (None, np.arange(0)):
        closed = Directed(steps, step_sizes, open=open_, corner_distance=np.empty((0, 3)))
        for p in (5, 50, 95):
            n_p = next(
                n
                for n, total in enumerate(np.cumsum(step_sizes[np.argsort(steps)]))
                if total >= p / 100 * step_sizes.sum()
            )
            assert closed.percentile(p) == np.sort(steps)[n_p]


@pytest.mark.parametrize("shape", [(9, 7, 5), (12, 10), (1, 1, 4)])
def test_union_box_is_the_extent_of_the_foreground(shape):
    """The crop box: first and one-past-last foreground index of a | b along every axis, as
    np.argwhere gives it; a mask empty or with one voxel at a corner of the grid."""
    rng = np.random.default_rng(len(shape))
    for trial in range(20):
        a = rng.random(shape) < (0.02 if trial % 2 else 0.2)
        b = np.zeros(shape, bool) if trial % 3 == 0 else rng.random(shape) < 0.05
        if trial == 4:
            a[:], b[:] = False, False
            a[(-1,) * len(shape)] = True
        union = np.argwhere(a | b)
        if len(union) == 0:
            continue
        lower, upper = api._union_box(a, b)
        np.testing.assert_array_equal(lower, union.min(axis=0))
        np.testing.assert_array_equal(upper, union.max(axis=0) + 1)


def _smallest_reaching(size_within, target: float) -> float:
    """The smallest t in [0, 3] with size_within(t) >= target, by bisection to 1e-13."""
    low, high = 0.0, 3.0
    while high - low > 1e-13:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if size_within(middle) >= target else (middle, high)
    return high


@pytest.mark.parametrize("corners_per_element", [2, 3])
def test_interpolated_percentile_is_the_smallest_t_reaching_the_target(corners_per_element):
    """The percentile with open elements is the smallest t at which the size within t reaches
    p %, the size within counted straight from the definition (closed steps plus
    `linear_share_within`) and its smallest t found by bisection to 1e-13. On lattice-like
    values: ties between steps and corners, and open elements flat at one value, which make
    the size within jump where no step is."""
    rng = np.random.default_rng(5)
    grid = np.array([0.5, 1.0, 1.5, 2.0, 2.5])  # shared values: ties everywhere
    for trial in range(40):
        count = rng.integers(1, 12)
        corner_values = np.where(
            rng.random((count, corners_per_element)) < 0.5,
            rng.choice(grid, (count, corners_per_element)),
            rng.uniform(0.4, 2.6, (count, corners_per_element)),
        )
        corner_values[rng.random(count) < 0.3] = rng.choice(grid)  # flat open elements
        steps = rng.choice(grid, 10) if trial % 2 else rng.uniform(0.4, 2.6, 10)
        sizes = rng.uniform(0.1, 1.0, 10 + count)
        directed = Directed(
            np.concatenate([steps, corner_values.mean(axis=1)]),
            sizes,
            open=np.arange(10, 10 + count),
            corner_distance=corner_values,
        )

        def size_within(t, steps=steps, sizes=sizes, corner_values=corner_values):
            open_share = linear_share_within(corner_values, t)
            return sizes[:10][steps <= t].sum() + sizes[10:] @ open_share

        for p in (5, 50, 95):
            want = _smallest_reaching(size_within, p / 100 * sizes.sum())
            assert directed.percentile(p) == pytest.approx(want, abs=1e-9), (trial, p)


@pytest.mark.parametrize("count", [7, 3_000, 40_000])
def test_weighted_select_is_the_step_percentile_of_the_sorted_values(count):
    """percentiles.weighted_select against the definition written out with a sort: the value at
    which the cumulative size, in ascending order, first reaches the target (the largest
    value when it never does). Ties, zero sizes, targets of 0 and beyond the total, and sizes
    that the select's sample of every k-th value does not see (zero there), so its guessed
    band misses and the whole array is selected."""
    rng = np.random.default_rng(count)
    for trial in range(12):
        values = rng.choice(np.linspace(0, 3, 13), count) if trial % 2 else rng.random(count)
        sizes = rng.uniform(0, 1, count) * (rng.random(count) < 0.8)
        if trial % 4 == 3:
            sizes[:: max(count // 512, 1)] = 0.0  # the sample sees no size at all
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(sizes[order])
        for fraction in (0.0, 0.05, 0.5, 0.95, 1.0, 1.01):
            target = fraction * sizes.sum()
            position = min(int(np.searchsorted(cumulative, target)), count - 1)
            want = values[order][position]
            assert percentiles.weighted_select(values, sizes, target) == want, (trial, fraction)


def test_interpolated_percentile_with_many_closed_elements():
    """Thousands of closed elements below the bracket count as one step: the percentile is
    still the smallest t at which the size within (closed steps plus `linear_share_within`)
    reaches p %, found here by bisection to 1e-13."""
    rng = np.random.default_rng(9)
    steps = rng.uniform(0.0, 3.0, 6_000)
    corner_values = rng.uniform(1.5, 3.0, (300, 3))
    sizes = rng.uniform(0.1, 1.0, 6_300)
    directed = Directed(
        np.concatenate([steps, corner_values.mean(axis=1)]),
        sizes,
        open=np.arange(6_000, 6_300),
        corner_distance=corner_values,
    )

    def size_within(t):
        return sizes[:6_000][steps <= t].sum() + sizes[6_000:] @ linear_share_within(
            corner_values, t
        )

    for p in (50, 95, 99):
        want = _smallest_reaching(size_within, p / 100 * sizes.sum())
        assert directed.percentile(p) == pytest.approx(want, abs=1e-9), p


@pytest.mark.parametrize("segments, offset, tau", [(90, 2.1, 1.5), (60, 1.3, 1.0)])
def test_linear_quadrature_converges_faster_than_midpoint(segments, offset, tau):
    """Offset polygons: at equal subdivision, interpolating the open elements lands closer to
    the polygons' own values (every element split 11 times, centres only) than their centres
    alone. The analytic circle is not the yardstick: the polygon differs from it by more."""
    a = analytic.circle_surface(5.0, segments=segments)
    b = analytic.circle_surface(5.0, (offset, 0.0), segments=segments)
    index_a, index_b = SurfaceIndex(*a), SurfaceIndex(*b)

    def scores(level, refine, quadrature):
        directed = [
            directed_distances(
                src,
                target,
                percentile=95,
                threshold=tau,
                subdivision=level,
                refine=refine,
                quadrature=quadrature,
            )
            for src, target in ((a, index_b), (b, index_a))
        ]
        return weighted_metrics(*directed, percentile=95, threshold=tau)

    fine = scores(11, "uniform", "midpoint")
    for level in (1, 2, 3):
        error = {
            quadrature: {key: abs(got[key] - fine[key]) for key in ("HD95", "NSD")}
            for quadrature in ("midpoint", "linear")
            for got in [scores(level, "adaptive", quadrature)]
        }
        assert error["linear"]["NSD"] < error["midpoint"]["NSD"] / 5, (level, error)
        assert error["linear"]["HD95"] <= error["midpoint"]["HD95"] + 1e-12, (level, error)
    assert error["linear"]["NSD"] < 1e-5 and error["linear"]["HD95"] < 1e-4, error


@pytest.mark.parametrize("r_b", [11.5, 12.1])
def test_concentric_spheres_as_surfaces(r_b):
    tau = 2.0
    # Concentric shells keep every element near the percentile and tau, so each level splits
    # all of them: level 2 (16x) is enough for 0.01 mm here and keeps the test fast.
    # 80 x 80 tessellation: chords 0.4 mm, sagitta 0.01 mm; volumes counted on a 0.2 mm grid,
    # whose quantization moves the thin-shell BIoU by up to ~1e-3 (circles below pin 1e-3).
    got = compute_surface_metrics(
        analytic.sphere_surface(10.0, resolution=80),
        analytic.sphere_surface(r_b, resolution=80),
        tau=tau,
        grid_step=0.2,
        subdivision=2,
    )
    _close(got, analytic.concentric(10.0, r_b, tau, 3), 0.01, 0.001, got, {"BIoU": 0.002})


@pytest.mark.parametrize("r_b", [6.5, 8.1])
def test_concentric_circles_as_surfaces(r_b):
    got = compute_surface_metrics(
        analytic.circle_surface(5.0), analytic.circle_surface(r_b), tau=3.0, grid_step=0.02
    )
    _close(got, analytic.concentric(5.0, r_b, 3.0, 2), 0.01, 0.001, got)


def test_offset_spheres_as_surfaces():
    want = analytic.offset_spheres(10.0, 3.0, tau=2.0)
    got = compute_surface_metrics(
        analytic.sphere_surface(10.0, resolution=80),
        analytic.sphere_surface(10.0, (3.0, 0, 0), resolution=80),
        tau=2.0,
        grid_step=0.2,
    )
    _close(got, want, 0.01, 0.001, want)
    # BIoU has no closed form here: count the bands of the exact sphere distances |x - c| - R
    # on an independent, finer grid (0.1 mm).
    axes = [np.arange(-12.0, 15.0, 0.1), np.arange(-12.0, 12.0, 0.1), np.arange(-12.0, 12.0, 0.1)]
    x, y, z = np.meshgrid(*axes, indexing="ij", sparse=True)
    bands = [
        (r <= 10.0) & (r >= 8.0)
        for r in (np.sqrt(x**2 + y**2 + z**2), np.sqrt((x - 3.0) ** 2 + y**2 + z**2))
    ]
    exact_biou = np.count_nonzero(bands[0] & bands[1]) / np.count_nonzero(bands[0] | bands[1])
    assert got["BIoU"] == pytest.approx(exact_biou, abs=0.003)


def _ball_pair(spacing, centre_b, r_b):
    shape = tuple(int(40 / s) for s in spacing)
    centre = (20.0,) * len(spacing)
    return (
        analytic.ball_mask(shape, spacing, 10.0, centre),
        analytic.ball_mask(shape, spacing, r_b, centre_b),
    )


def test_concentric_spheres_as_masks():
    a, b = _ball_pair((1.0, 1.0, 1.0), (20.0, 20.0, 20.0), 11.5)
    got = compute_metrics(a, b, (1.0, 1.0, 1.0))
    # BIoU of voxelized shells: see test_mask_biou_follows_the_masks_mean_gap.
    keys = [k for k in got if k != "BIoU"]
    _close(got, analytic.concentric(10.0, 11.5, 2.0, 3), 0.5, 0.02, keys)


def test_offset_spheres_as_masks():
    a, b = _ball_pair((1.0, 1.0, 1.0), (21.5, 21.5, 20.0), 10.0)
    want = analytic.offset_spheres(10.0, np.hypot(1.5, 1.5), tau=2.0)
    _close(compute_metrics(a, b, (1.0, 1.0, 1.0)), want, 0.5, 0.02, want)


@pytest.mark.parametrize("centre_b, r_b", [((20.0, 20.0, 20.0), 11.5), ((21.5, 21.5, 20.0), 10.0)])
def test_anisotropic_masks_measure_the_masks_not_the_spheres(centre_b, r_b):
    """On 2 mm slices the masks are not the spheres: agree with DeepMind on the same masks.

    Sampling a sphere with 2 mm slices quantizes its caps by up to a slice, so the masks' HD
    differs from the continuous one (concentric 2.05 against 1.5). An independent code path
    on the same masks (DeepMind's surfels) finds the same HD, and the Hausdorff distance
    between each sphere and its mesh is at most one dual-cell diagonal g, so
    |HD(masks) - HD(spheres)| <= 2 g (triangle inequality) is all that analytic values prove.
    """
    import surface_distance

    spacing = (0.5, 0.5, 2.0)
    a, b = _ball_pair(spacing, centre_b, r_b)
    got = compute_metrics(a, b, spacing)
    surfels = surface_distance.compute_surface_distances(a, b, spacing)
    assert got["HD"] == pytest.approx(
        surface_distance.compute_robust_hausdorff(surfels, 100), abs=0.05
    )
    assert got["NSD"] == pytest.approx(
        surface_distance.compute_surface_dice_at_tolerance(surfels, 2.0), abs=0.03
    )
    offset = float(np.linalg.norm(np.subtract(centre_b, 20.0)))
    true_hd = max(abs(r_b - 10.0), offset)
    assert abs(got["HD"] - true_hd) <= 2 * np.linalg.norm(spacing)
    assert got["DSC"] == pytest.approx(2 * np.count_nonzero(a & b) / (a.sum() + b.sum()), abs=1e-12)


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (0.5, 0.5, 2.0)])
def test_mask_biou_follows_the_masks_mean_gap(spacing):
    """BIoU of concentric shells of thickness tau and gap g is about (tau - g) / (tau + g):
    with g = 1.5 the overlap is only 0.5 mm thick, so BIoU moves by ~0.1 per 0.1 mm of mean
    gap. The voxelized spheres' meshes are on average MASD = 1.42 (1 mm) or 1.34 mm (2 mm
    slices) apart, not 1.5, and their BIoU follows that gap, not the continuous 0.141."""
    a, b = _ball_pair(spacing, (20.0, 20.0, 20.0), 11.5)
    got = compute_metrics(a, b, spacing)
    gap = got["MASD"]
    assert got["BIoU"] == pytest.approx((2.0 - gap) / (2.0 + gap), abs=0.015)
    assert got["BIoU"] > analytic.concentric(10.0, 11.5, 2.0, 3)["BIoU"] + 0.015


@pytest.mark.parametrize("r_b", [11.5, 13.0])
def test_concentric_circles_as_masks(r_b):
    """2D masks at 0.25 mm: distances within one pixel diagonal, overlaps within 0.01."""
    spacing = (0.25, 0.25)
    a, b = _ball_pair(spacing, (20.0, 20.0), r_b)
    got = compute_metrics(a, b, spacing)
    want = analytic.concentric(10.0, r_b, 2.0, 2)
    _close(got, want, 0.36, 0.01, ["HD", "HD95", "MASD", "ASSD", "NSD", "DSC"])


def test_closest_points_match_brute_force():
    rng = np.random.default_rng(1)
    vertices, cells = analytic.sphere_surface(5.0, resolution=24)
    points = rng.normal(size=(300, 3)) * 4
    fast = SurfaceIndex(vertices, cells).query(points).distance
    assert np.max(np.abs(fast - brute_force_distances(points, vertices, cells))) < 1e-6


def test_closest_on_triangles_equals_plane_or_edge_distance():
    """Independent formula: the distance to a triangle is the distance to its plane where the
    projection falls inside (barycentric coordinates >= 0), else the nearest of its edges.
    Random triangles, points near and far, and degenerate (collinear, point) triangles."""
    rng = np.random.default_rng(7)
    n = 4000
    a = rng.normal(size=(n, 3))
    b, c = a + rng.normal(size=(n, 3)), a + rng.normal(size=(n, 3))
    c[:200] = a[:200] + 0.3 * (b[:200] - a[:200])  # collinear
    b[200:250] = c[200:250] = a[200:250]  # a point
    points = a + rng.normal(size=(n, 3)) * rng.choice([0.1, 1.0, 10.0], size=(n, 1))
    closest, feature = geometry.closest_on_triangles(points, a, b, c)
    got = np.linalg.norm(points - closest, axis=1)

    edges = np.min(
        [
            np.linalg.norm(points - geometry.closest_on_segments(points, s, e)[0], axis=1)
            for s, e in ((a, b), (b, c), (c, a))
        ],
        axis=0,
    )
    normal = np.cross(b - a, c - a)
    area2 = np.einsum("ij,ij->i", normal, normal)
    proper = area2 > 1e-12
    unit = normal[proper] / np.sqrt(area2[proper])[:, None]
    height = np.einsum("ij,ij->i", points[proper] - a[proper], unit)
    foot = points[proper] - height[:, None] * unit
    # Barycentric coordinates of the foot from signed sub-areas.
    inside = np.ones(proper.sum(), bool)
    for s, e in ((a, b), (b, c), (c, a)):
        sub = np.einsum(
            "ij,ij->i", np.cross(e[proper] - s[proper], foot - s[proper]), normal[proper]
        )
        inside &= sub >= 0
    want = edges.copy()
    want[np.flatnonzero(proper)[inside]] = np.abs(height[inside])
    assert np.max(np.abs(got - want)) < 1e-9
    assert np.all(np.isfinite(closest))
    # The feature code names where the closest point lies: a vertex code means that vertex.
    for code, vertex in ((geometry.VERT0, a), (geometry.VERT1, b), (geometry.VERT2, c)):
        at = (feature == code) & proper
        assert np.allclose(closest[at], vertex[at])


def test_tie_rule_counts_distances_equal_to_tau():
    """Cubes of half-sides 2 and 4 on unit grids: inner-to-outer distances are all exactly
    2 = tau; on the outer faces only the central 4 x 4 squares are within 2, so
    NSD = (96 + 96) / (96 + 384). A shift of 1e-7 mm is a tie (counted), 1e-3 mm is not.
    The plain call counts the ties; the default call's bracket holds that share, which the
    distance pass's tie tolerance would not (it adds a strip beyond tau along the squares'
    edges: [0.4005, 0.4012]; `bounds.TIE_ROUNDING`)."""
    inner, outer = _cube_surface(2.0), _cube_surface(4.0)
    exact = compute_surface_metrics(inner, outer, tau=2.0, bounds=False)
    assert exact["NSD"] == pytest.approx(192 / 480, abs=1e-12)
    nudged = (outer[0] * (1 + 1e-7 / 4), outer[1])
    assert compute_surface_metrics(inner, nudged, tau=2.0, bounds=False)["NSD"] == pytest.approx(
        192 / 480, abs=1e-6
    )
    beyond = (outer[0] * (1 + 1e-3 / 4), outer[1])
    assert compute_surface_metrics(inner, beyond, tau=2.0, bounds=False)["NSD"] < 0.3
    bracket = compute_surface_metrics(inner, outer, tau=2.0).brackets["NSD"]
    assert bracket.lower <= 192 / 480 + 1e-5 and bracket.upper >= 192 / 480, bracket


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
    return (
        vtk_to_numpy(data.GetPoints().GetData()).astype(float),
        vtk_to_numpy(data.GetPolys().GetConnectivityArray()).reshape(-1, 3).astype(int),
    )


def _invariance_runs():
    spacing = (1.0, 0.8, 1.2)
    a = analytic.ball_mask((24, 28, 22), spacing, 7.0, (11.0, 11.0, 12.0))
    b = analytic.ball_mask((24, 28, 22), spacing, 6.0, (13.0, 10.0, 12.5))
    base = compute_metrics(a, b, spacing)
    swapped = compute_metrics(b, a, spacing)
    moved = compute_metrics(
        np.roll(a, 2, axis=1), np.roll(b, 2, axis=1), spacing, origin=(5.0, -3.0, 2.0)
    )
    order = (2, 0, 1)
    permuted = compute_metrics(
        a.transpose(order), b.transpose(order), tuple(spacing[i] for i in order)
    )
    return base, (swapped, moved, permuted)


def test_invariances_swap_translate_permute():
    base, others = _invariance_runs()
    for other in others:
        for key, value in base.items():
            # Permuting axes changes how marching cubes splits voxel faces into triangles,
            # and with it where selective subdivision lands: 1e-3 mm, not bit-identical.
            assert other[key] == pytest.approx(value, abs=1e-3), key
        # Spacing 0.8 mm puts dense points exactly tau = 2.5 voxels from voxel faces; the
        # tie rule keeps them in the band however translation rounds their coordinates.
        assert other["BIoU"] == pytest.approx(base["BIoU"], abs=1e-9)


def _every_point_counts(surface_a, surface_b, tau, grid):
    """Band counts from pseudo-normal signed distances at every dense point (no raster, no
    blocks): the independent path the fast counts must equal."""
    axes = [grid.origin[i] + np.arange(n) * grid.step[i] for i, n in enumerate(grid.shape)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(grid.shape))
    sd_a = SignedSurface(*surface_a).signed_distance(points)
    sd_b = SignedSurface(*surface_b).signed_distance(points)
    band_a, band_b = (sd_a >= -tau) & (sd_a <= 0), (sd_b >= -tau) & (sd_b <= 0)
    return (band_a.sum(), band_b.sum(), (band_a & band_b).sum(), ((sd_a <= 0) & (sd_b <= 0)).sum())


def test_biou_shortcut_equals_every_point_on_circles():
    """Raster + blocks give exactly the counts of evaluating every dense point."""
    a = analytic.circle_surface(3.0, segments=64)
    b = analytic.circle_surface(2.5, (0.7, 0.2), segments=64)
    # Offset so no grid point sits on a polygon vertex: points on a surface are inside or out
    # by the convention of each method, and neither convention is the "right" one.
    grid = DenseGrid(np.array([-4.013, -3.987]), np.array([0.1, 0.1]), (81, 81))
    counts = count_bands(a, b, 1.0, grid)
    assert (
        counts.band_a,
        counts.band_b,
        counts.band_both,
        counts.inside_both,
    ) == _every_point_counts(a, b, 1.0, grid)


def _ball_mask_surfaces(spacing):
    """Meshes of two overlapping voxelized balls (r = 4 and 3 mm) and their dense grid."""
    shape = tuple(int(12 / s) for s in spacing)
    a = analytic.ball_mask(shape, spacing, 4.0, (6.0, 6.0, 6.0))
    b = analytic.ball_mask(shape, spacing, 3.0, (6.8, 5.6, 6.4))
    origin = np.zeros(3)
    surfaces = [
        mesh_surface(m, np.array(spacing), origin, "discrete_marching_cubes") for m in (a, b)
    ]
    return surfaces, dense_grid_of_image(origin, spacing, -np.ones(3, int), np.array(shape) + 1)


def _assert_counts_equal_every_point(surfaces, tau, grid):
    counts = count_bands(*surfaces, tau, grid)
    assert (
        counts.band_a,
        counts.band_b,
        counts.band_both,
        counts.inside_both,
    ) == _every_point_counts(*surfaces, tau, grid)


@pytest.mark.parametrize(
    "spacing, slab_points",
    [
        ((1.0, 1.0, 1.0), None),
        ((0.5, 0.5, 2.0), None),
        ((1.0, 0.8, 1.2), None),
        ((1.0, 0.8, 1.2), 20_000),
    ],
)
def test_biou_shortcut_equals_every_point_on_masks(spacing, slab_points, monkeypatch):
    """Meshes of voxelized balls on the study grids (and one with exact ties at tau); counted
    in one slab and in many thin slabs (a few slices each)."""
    if slab_points is not None:
        monkeypatch.setattr(biou, "SLAB_POINTS", slab_points)
    surfaces, grid = _ball_mask_surfaces(spacing)
    tau = 2.0 + 1e-6  # the tie rule of compute_metrics
    _assert_counts_equal_every_point(surfaces, tau, grid)


@pytest.mark.parametrize("cell_per_tau", [0.0, 1.5])
def test_point_stage_at_any_block_size_equals_every_point(cell_per_tau, monkeypatch):
    """The point stage's bounds (concavity of d^2 - |x|^2 out, known closest points in) decide
    exactly what the blocks would: with it off (0: blocks down to single points) and with it
    taking over at blocks of 3 mm (1.5 tau), where the bounds are loose and most decided."""
    monkeypatch.setattr(within_tau, "POINT_CELL_PER_TAU", cell_per_tau)
    stage_blocks = []
    decide_points = within_tau._decide_points

    def spy(surface, pending, *args):
        stage_blocks.append(len(pending.index))
        return decide_points(surface, pending, *args)

    monkeypatch.setattr(within_tau, "_decide_points", spy)
    spacing = (1.0, 0.8, 1.2)
    surfaces, grid = _ball_mask_surfaces(spacing)
    _assert_counts_equal_every_point(surfaces, 2.0, grid)
    assert (sum(stage_blocks) > 0) == (cell_per_tau > 0)


@pytest.mark.parametrize(
    "shape, step",
    [
        ((400, 400, 100), (0.1, 0.1, 0.4)),
        ((200, 200, 200), (0.2, 0.2, 0.2)),
        ((8, 1000, 1000), (0.2, 0.2, 0.2)),
        ((500, 400), (0.16, 0.24)),
    ],
)
def test_blocks_stay_near_cubes_in_mm(shape, step):
    """Block extents (mm) approach cubes level by level (among the axes that may still grow,
    the ratio of the largest to the smallest never grows beyond 2 once it is at most 2, and
    ends there), no side passes a quarter of its axis, and the top level is small."""
    step = np.array(step)
    sides = within_tau.block_sides(shape, step)
    assert list(sides[0]) == [1] * len(shape)
    for finer, coarser in itertools.pairwise(sides):
        assert set(coarser // finer) <= {1, 2} and (coarser > finer).any()
        assert np.all(4 * finer[coarser > finer] <= np.array(shape)[coarser > finer])
    ratios = []
    for side in sides:
        extent = (side * step)[4 * side <= np.array(shape)]
        ratios.append(extent.max() / extent.min() if len(extent) else 1.0)
    assert all(later <= max(earlier, 2.0) for earlier, later in itertools.pairwise(ratios))
    assert ratios[-1] <= 2.0
    top = sides[-1]
    assert np.prod(-(-np.array(shape) // top)) <= within_tau.TOP_LEVEL_BLOCKS or not np.any(
        4 * top <= np.array(shape)
    )


@pytest.mark.parametrize("meshing", ["discrete_marching_cubes", "marching_cubes", "surface_nets"])
@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (0.5, 0.5, 2.0)])
def test_lattice_raster_equals_vtks(meshing, spacing):
    """The compiled inside test (exact integers on the lattice of half dense steps) gives
    VTK's raster point for point; surface nets' vertices (voxel centres) lie on the lattice
    too, the smoothed marching-cubes vertices do not and go to VTK whole."""
    spacing = np.asarray(spacing)
    shape = (24, 22, 20)
    mask = analytic.ball_mask(shape, spacing, 7.0, (11.3, 10.1, 12.2)) | analytic.ball_mask(
        shape, spacing, 4.0, (5.1, 15.2, 18.4)
    )
    origin = np.array([3.0, -7.5, 12.25])
    vertices, cells = mesh_surface(mask, spacing, origin, meshing)
    grid = dense_grid_of_image(origin, spacing, -np.ones(3, int), np.array(shape) + 1)
    raster = biou.SurfaceRaster(vertices, cells)
    assert (raster.lattice(grid) is None) == (meshing == "marching_cubes")
    np.testing.assert_array_equal(raster.inside(grid), _vtk_inside(raster, grid))


def _vtk_inside(raster, grid):
    """VTK's raster of the whole grid: the answer the exact crossings must give off the
    surface."""
    return biou.inside_raster(biou.to_polydata(raster.points, raster.cells), grid)


def test_lattice_raster_counts_points_on_the_surface_inside():
    """An octahedron with its corners on grid points has grid points on its faces: the
    compiled raster counts them in the closed region and agrees with VTK everywhere else."""
    centre, reach = np.array([4.0, 4.0, 4.0]), 3.0
    vertices = np.array([centre + sign * reach * axis for axis in np.eye(3) for sign in (1, -1)])
    cells = np.array([[a, b, c] for a in (0, 1) for b in (2, 3) for c in (4, 5)], dtype=np.int64)
    grid = DenseGrid(np.zeros(3), np.ones(3), (9, 9, 9))
    raster = biou.SurfaceRaster(vertices, cells)
    lattice = raster.lattice(grid)
    assert lattice is not None
    inside, ambiguous = crossings.lattice_inside(lattice, raster.cells, 9, 9, 0, 9)
    assert not ambiguous.any()
    points = np.argwhere(np.ones(grid.shape, bool)).astype(float)
    on_surface = (np.abs(points - centre).sum(axis=1) == reach).reshape(grid.shape)
    assert on_surface.sum() > 20 and inside[on_surface].all()
    vtk_inside = _vtk_inside(raster, grid)
    np.testing.assert_array_equal(inside[~on_surface], vtk_inside[~on_surface])


def test_cutting_the_dense_grid_changes_no_inside_answer(monkeypatch):
    """A synthetic buccal mucosa's mesh passes within rounding of dense points (in or out by
    the scan's arithmetic); rasterizing in runs of slices or counting in slabs must not move
    them. (Rasterizing each run with its own shifted origin moved 88 points here.)"""
    from study.dataset.synthetic import generate_case
    from study.dataset.voxelize import voxelize_pair

    organ = generate_case(1, 20240215, oars=["BuccalMucosa"])["BuccalMucosa"]
    pair = voxelize_pair(organ["A"], organ["B"], (1.0, 1.0, 1.0))
    spacing, origin = np.ones(3), np.zeros(3)
    surfaces = [
        mesh_surface(m, spacing, origin, "discrete_marching_cubes")
        for m in (pair.mask_a, pair.mask_b)
    ]
    grid = dense_grid_of_image(origin, spacing, -np.ones(3, int), np.array(pair.shape) + 1)
    raster = biou.SurfaceRaster(*surfaces[0])
    whole = _vtk_inside(raster, grid)
    monkeypatch.setattr(biou, "RASTER_SLICES", 7)
    vtk_runs = np.concatenate([raster._vtk_inside(grid, 0, 40), raster._vtk_inside(grid, 40, 61)])
    assert np.array_equal(vtk_runs, whole[:61])
    # The exact crossings count grid points on this mesh inside, in any run.
    assert raster.lattice(grid) is not None
    exact = raster.inside(grid)
    assert np.array_equal(raster.inside(grid, 40, 61), exact[40:61])
    assert np.array_equal(exact | whole, exact)  # VTK's answer, plus points on the mesh
    monkeypatch.setattr(biou, "SLAB_POINTS", whole.size)
    one_slab = count_bands(*surfaces, 2.0, grid)
    monkeypatch.setattr(biou, "SLAB_POINTS", 30 * grid.shape[1] * grid.shape[2])
    assert count_bands(*surfaces, 2.0, grid) == one_slab


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


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"b": np.zeros((4, 5, 4), bool)}, "same shape"),
        ({"a": np.full((4, 4, 4), 2)}, "binary"),
        ({"spacing": (1, 1)}, "spacing"),
        ({"spacing": (1, 0, 1)}, "positive"),
        ({"spacing": (1, np.nan, 1)}, "positive"),
        ({"percentile": 0}, "percentile"),
        ({"percentile": 101}, "percentile"),
        ({"tau": -1}, "tau"),
        ({"meshing": "voxels"}, "meshing"),
        ({"quadrature": "simpson"}, "quadrature"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    args = {
        "a": np.ones((4, 4, 4), bool),
        "b": np.ones((4, 4, 4), bool),
        "spacing": (1, 1, 1),
    } | kwargs
    with pytest.raises(ValueError, match=message):
        compute_metrics(args.pop("a"), args.pop("b"), args.pop("spacing"), **args)


def test_subdivision_error_falls_and_hd_bracket_holds_the_exact_value():
    """Offset circles: the centre maximum converges with subdivision; the HD bracket holds 1.3."""
    a = analytic.circle_surface(5.0, segments=40)
    b = analytic.circle_surface(5.0, (1.3, 0.0), segments=40)
    index_b = SurfaceIndex(*b)
    errors = [
        abs(
            directed_distances(
                a,
                index_b,
                percentile=95,
                threshold=2.0,
                subdivision=level,
                refine="uniform",
            ).distance.max()
            - 1.3
        )
        for level in (0, 2, 4)
    ]
    assert errors[0] > errors[1] > errors[2]
    # The polygon's farthest point from the other polygon is not the circle's: bracket the
    # polygon's own value against brute force on 20000 points per segment.
    fine = np.linspace(0, 1, 20000)[:, None, None]
    corners = a[0][a[1]]
    dense = (corners[:, 0] + fine * (corners[:, 1] - corners[:, 0])).reshape(-1, 2)
    brute = SurfaceIndex(*b).query(dense).distance.max()
    bracket = directed_hausdorff(*a, index_b)
    assert bracket.lower - 1e-9 <= brute <= bracket.upper + 1e-9
    assert bracket.upper - bracket.lower <= 1e-3
    hd = compute_surface_metrics(a, b, subdivision=0, grid_step=0.5)["HD"]
    assert hd == pytest.approx(1.3, abs=0.01) and hd >= bracket.lower
    # With a floor above h (the other direction's value, say) the bracket stays valid but
    # only needs to show that h does not exceed the floor.
    floored = directed_hausdorff(*a, index_b, floor=1.5)
    assert floored.lower - 1e-9 <= brute <= floored.upper + 1e-9
    assert floored.upper <= 1.5 + 1e-3 and floored.upper - floored.lower > 1e-3
    # The distance pass's centre queries, handed over, give the bracket its own query gives.
    passed = directed_distances(a, index_b, percentile=95, threshold=2.0, subdivision=2).centres
    assert directed_hausdorff(*a, index_b, centres=passed) == bracket


@pytest.fixture(scope="module")
def synthetic_pairs():
    """Two synthetic OAR pairs on small grids: a cochlea at 1 mm, a carotid at 2 mm."""
    from study.dataset.synthetic import generate_case
    from study.dataset.voxelize import voxelize_pair

    meshes = generate_case(2, 20240215, oars=["Cochlea_L", "A_Carotid_L"])
    return [
        (voxelize_pair(meshes[name]["A"], meshes[name]["B"], spacing), spacing)
        for name, spacing in (("Cochlea_L", (1.0, 1.0, 1.0)), ("A_Carotid_L", (2.0, 2.0, 2.0)))
    ]


def test_default_subdivision_converges_on_synthetic_oars(synthetic_pairs):
    """Default minus uniform level 4: distances within 0.01 mm, NSD within 0.001.

    Fine HD is the maximum at fine element centres, a lower bound of the true HD, so the
    default HD (a bracket's lower end) may only exceed it.
    """
    from reference.convergence import differences

    for pair, spacing in synthetic_pairs:
        diff = differences(pair.mask_a, pair.mask_b, spacing, fine=4)
        assert -1e-9 <= diff["HD"] <= 0.01, (spacing, diff)
        for key in ("HD95", "MASD", "ASSD"):
            assert abs(diff[key]) <= 0.01, (spacing, key, diff)
        assert abs(diff["NSD"]) <= 0.001, (spacing, diff)


def test_metrics_switch_gives_the_same_values_and_only_the_asked_keys(synthetic_pairs):
    pair, spacing = synthetic_pairs[0]
    everything = compute_metrics(pair.mask_a, pair.mask_b, spacing)
    for asked in (["DSC"], ["HD"], ["NSD", "HD95"], ["BIoU", "MASD"]):
        got = compute_metrics(pair.mask_a, pair.mask_b, spacing, metrics=asked)
        assert list(got) == [key for key in everything if key in asked]
        assert got == pytest.approx({key: everything[key] for key in asked}, abs=1e-12)
    voxels = (
        2
        * np.count_nonzero(pair.mask_a & pair.mask_b)
        / (np.count_nonzero(pair.mask_a) + np.count_nonzero(pair.mask_b))
    )
    assert everything["DSC"] == pytest.approx(voxels, abs=1e-12)
    with pytest.raises(ValueError, match="metrics must be"):
        compute_metrics(pair.mask_a, pair.mask_b, spacing, metrics=["HD", "Dice"])
    with pytest.raises(ValueError, match="metrics must be"):
        compute_metrics(pair.mask_a, pair.mask_b, spacing, metrics="HD")
    with pytest.warns(UserWarning, match="empty"):
        empty = compute_metrics(
            np.zeros((4, 4, 4), bool), np.ones((4, 4, 4), bool), (1, 1, 1), metrics=["BIoU", "HD"]
        )
    assert empty == {"HD": np.inf, "BIoU": 0.0}


def test_biou_is_never_computed_when_not_asked(synthetic_pairs, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("dense grid built although BIoU was not asked")

    monkeypatch.setattr(biou, "count_bands", forbidden)
    pair, spacing = synthetic_pairs[0]
    got = compute_metrics(
        pair.mask_a, pair.mask_b, spacing, metrics=["HD", "HD95", "MASD", "ASSD", "NSD", "DSC"]
    )
    assert "BIoU" not in got


@pytest.mark.parametrize("dim", [2, 3])
def test_corner_queries_give_each_elements_own_corner_distances(dim):
    """Corners shared within a family and between neighbouring families are queried once, each
    within the reach of an element that has it; every chosen element still gets the exact
    distances at its own corners (checked against a brute-force scan), in its order."""
    rng = np.random.default_rng(7)
    target_vertices = rng.normal(size=(40, dim)) * 5
    target_cells = np.array([rng.choice(40, dim, replace=False) for _ in range(60)])
    parents = rng.normal(size=(25, dim, dim)) * 3
    parents[1, :2] = parents[0, 1::-1]  # neighbours: a common edge, in the other direction
    children = split_elements(parents)
    chosen = np.sort(rng.choice(len(children), len(children) // 2, replace=False))
    corners = children[chosen]
    expected = brute_force_distances(
        corners.reshape(-1, dim), target_vertices, target_cells
    ).reshape(len(chosen), dim)
    # Each element's reach is the largest distance at its own corners: tight, so a point
    # searched under another element's reach would come back beyond it (inf).
    reach, hint = expected.max(axis=1), rng.integers(0, 60, len(chosen))
    got = _corner_distance(corners, reach, hint, SurfaceIndex(target_vertices, target_cells))
    np.testing.assert_allclose(got, expected, atol=1e-9)


@pytest.mark.parametrize("dim", [2, 3])
def test_children_get_the_distances_at_their_own_centres(dim):
    """A triangle's middle child takes its parent's query instead of its own (the same centre);
    every child's distance, closest point and element must still be those of its own centre
    (brute force), whichever child it is."""
    from reference import distance_pass

    rng = np.random.default_rng(17 + dim)
    target_vertices = rng.normal(size=(40, dim)) * 5
    target_cells = np.array([rng.choice(40, dim, replace=False) for _ in range(60)])
    target = SurfaceIndex(target_vertices, target_cells)
    corners = rng.normal(size=(30, dim, dim)) * 3
    parent = target.query(corners.mean(axis=1))
    split = rng.random(len(corners)) < 0.6
    found = distance_pass._children(
        corners, parent.point, parent.cell, parent.distance, split, target
    )
    centres = found.corners.mean(axis=1)
    expected = brute_force_distances(centres, target_vertices, target_cells)
    np.testing.assert_allclose(found.distance, expected, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(found.closest - centres, axis=1), expected, atol=1e-9)
    at_cell = target.distance_to_cells(centres, found.cell)[0]
    np.testing.assert_allclose(at_cell, expected, atol=1e-9)


def _surface_pairs(synthetic_pairs):
    """Pairs whose directed percentiles lie far apart (offset spheres of different radii, the
    synthetic OARs) and close together (concentric spheres, both directions about 0.5 mm;
    offset circles of one radius, the same by symmetry)."""
    origin = np.zeros(3)
    yield (
        analytic.sphere_surface(8.0, resolution=30),
        analytic.sphere_surface(9.5, (1.0, 0.5, -0.7), resolution=30),
    )
    yield analytic.sphere_surface(8.0, resolution=30), analytic.sphere_surface(8.5, resolution=30)
    yield analytic.circle_surface(5.0, segments=60), analytic.circle_surface(5.0, (1.3, 0.2), 60)
    for pair, spacing in synthetic_pairs:
        yield tuple(
            mesh_surface(mask, np.asarray(spacing), origin, "discrete_marching_cubes")
            for mask in (pair.mask_a, pair.mask_b)
        )


def test_the_smaller_percentile_opens_for_tau_alone_and_moves_no_metric(synthetic_pairs):
    """HDp is the larger directed percentile: `opened_pair` opens the other direction's leaves
    for tau alone when its percentile's ceiling lies below the larger one. Every metric must
    equal both directions opened in full; each percentile lies below its ceiling; and where the
    percentiles lie far apart, fewer leaves are opened."""
    skipped = 0
    for a, b in _surface_pairs(synthetic_pairs):
        threshold = tie_threshold(2.0, a[0], b[0])
        leaves = [
            subdivided(
                src, SurfaceIndex(*target), percentile=95, threshold=threshold, subdivision=2
            )
            for src, target in ((a, b), (b, a))
        ]
        full = [one.opened() for one in leaves]
        paired = opened_pair(*leaves)
        options = dict(percentile=95, threshold=threshold, tau=2.0)
        assert weighted_metrics(*paired, **options) == pytest.approx(
            weighted_metrics(*full, **options), abs=1e-12, rel=0
        )
        opened = [
            [0 if one.open is None else len(one.open) for one in way] for way in (full, paired)
        ]
        for one, whole, fewer in zip(leaves, full, paired, strict=True):
            ceiling = one.ceiling + 1e-9
            assert whole.percentile(95) <= ceiling and fewer.percentile(95) <= ceiling
        assert all(f >= p for f, p in zip(*opened, strict=True))
        skipped += sum(opened[0]) - sum(opened[1])
    assert skipped > 0


@pytest.mark.parametrize("percentile", [50, 95])
def test_openable_leaves_hold_every_leaf_the_opening_rounds_reach(percentile):
    """`subdivided` keeps the corners of the leaves that can be opened only: those whose range
    [low, high] reaches tau or the interval the percentile can take. Unsplit (subdivision 0),
    the leaves are the elements, whose bounds the test measures itself: every element whose
    range holds tau or the final percentile must be openable, and opened."""
    from reference.distance_pass import element_bounds

    a = analytic.sphere_surface(8.0, resolution=30)
    b = analytic.sphere_surface(9.5, (1.0, 0.5, -0.7), resolution=30)
    target = SurfaceIndex(*b)
    threshold = tie_threshold(2.0, a[0], b[0])
    leaves = subdivided(a, target, percentile=percentile, threshold=threshold, subdivision=0)
    opened = leaves.opened()
    corners = a[0][a[1]]
    hit = target.query(corners.mean(axis=1))
    low, high = element_bounds(corners, hit.distance, hit.point)
    final = opened.percentile(percentile)
    reached = np.flatnonzero(
        ((low <= final) & (high >= final)) | ((low <= threshold) & (high > threshold))
    )
    assert np.isin(reached, leaves.openable).all() and np.isin(reached, opened.open).all()
    assert len(leaves.openable) < len(corners)  # the others' corners are not kept


def test_both_directions_give_the_same_scores_deferred_or_not(synthetic_pairs, monkeypatch):
    """A -> B waits to be opened while its openable leaves fit in DEFERRED_BYTES, else it is
    opened at once in full; the scores are the same either way, and the same as opening both
    directions in full."""
    from reference import distance_pass

    for a, b in _surface_pairs(synthetic_pairs):
        threshold = tie_threshold(2.0, a[0], b[0])
        options = dict(percentile=95, threshold=threshold, subdivision=2)
        indexes = (SurfaceIndex(*a), SurfaceIndex(*b))
        scores = []
        for held in (1 << 40, 0):
            monkeypatch.setattr(distance_pass, "DEFERRED_BYTES", held)
            both = distance_pass.both_directions((a, b), indexes, **options)
            scores.append(weighted_metrics(*both, percentile=95, threshold=threshold, tau=2.0))
        full = [
            directed_distances(src, index, **options)
            for src, index in ((a, indexes[1]), (b, indexes[0]))
        ]
        scores.append(weighted_metrics(*full, percentile=95, threshold=threshold, tau=2.0))
        assert scores[0] == scores[1] == scores[2]


def test_opened_pair_resolves_the_second_percentile_when_it_can_be_the_larger():
    """Leaves made by hand: A's bounds reach higher (opened first, percentile 1.0 or 1.8),
    B's lie in [1.4, 1.6] with corners 1.4, 1.5, 1.6 (interpolated percentile
    1.6 - sqrt(0.001), the step at its centres 1.5). Below B's ceiling, B must be opened
    for its percentile and is HDp; above it, B opens for tau alone and is not."""
    from reference.distance_pass import Directed, Leaves

    count = 100
    ones, size = np.ones(count), np.full(count, 0.5)

    def leaves(centre, low, high, corners):
        return Leaves(
            Directed(centre * ones, size),
            95,
            2.0,
            high,  # the ceiling: the step percentile of the highs
            np.arange(count),
            low * ones,
            high * ones,
            lambda rows: np.tile(corners, (len(rows), 1)),
        )

    b = leaves(1.5, 1.4, 1.6, [1.4, 1.5, 1.6])
    for a_value, hdp, b_opened in ((1.0, 1.6 - np.sqrt(0.001), count), (1.8, 1.8, 0)):
        a = leaves(a_value, 1.0, 1.9, [a_value] * 3)
        pair = opened_pair(a, b)
        got = weighted_metrics(*pair, percentile=95, threshold=2.0)["HD95"]
        assert got == pytest.approx(hdp, abs=1e-9)
        assert (0 if pair[1].open is None else len(pair[1].open)) == b_opened


# ---------------------------------------------------------------------------------------------
# The compiled kernels against numpy's arithmetic, bit for bit.


@pytest.mark.parametrize("dim", [2, 3])
def test_compiled_remeasure_is_numpys_to_the_last_bit(dim):
    """The compiled exact distance repeats numpy's arithmetic in numpy's order
    (`geometry.closest_on_cells`): an ulp apart would move subdivision bounds (MASD moved by
    4e-6 mm on a study pair when it did)."""
    rng = np.random.default_rng(3 + dim)
    vertices = rng.normal(size=(60, dim)) * 40
    cells = np.array([rng.choice(60, dim, replace=False) for _ in range(100)])
    cells[0, 1] = cells[0, 0]  # a degenerate element
    if dim == 3:  # a sliver: measured by its edges
        vertices[cells[1, 2]] = (
            vertices[cells[1, 0]] + 1e-7 * (vertices[cells[1, 1]] - vertices[cells[1, 0]]) + 1e-12
        )
    points = rng.normal(size=(5000, dim)) * 60
    cell = rng.integers(0, len(cells), len(points))
    cell[:20] = np.repeat([0, 1], 10)
    closest, feature = geometry.closest_on_cells(points, vertices, cells, cell)
    want = np.linalg.norm(points - closest, axis=1), closest, feature
    got = SurfaceIndex(vertices, cells).distance_to_cells(points, cell)
    for mine, theirs in zip(got, want, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def _numpy_sizes(corners):
    """|b - a| per segment, |(b - a) x (c - a)| / 2 per triangle, in numpy."""
    if corners.shape[1] == 2:
        return np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return 0.5 * np.linalg.norm(cross, axis=1)


def _numpy_bounds(corners, distance, closest):
    """[d - r, min(d + r, max |v - p|)] per element, in numpy."""
    radius = np.linalg.norm(corners - corners.mean(axis=1)[:, None], axis=2).max(axis=1)
    reach = np.linalg.norm(corners - closest[:, None], axis=2).max(axis=1)
    return distance - radius, np.minimum(distance + radius, reach)


def _numpy_split_with_reach(corners, closest, split):
    """Children, their centres and their distances to the parent's closest point, in numpy."""
    rows = np.flatnonzero(split)
    children = split_elements(corners[rows])
    centres = children.mean(axis=1)
    parent_closest = np.repeat(closest[rows], len(children) // len(rows), axis=0)
    return children, centres, np.linalg.norm(centres - parent_closest, axis=1)


@pytest.mark.parametrize("dim", [2, 3])
def test_compiled_element_geometry_is_numpys_to_the_last_bit(dim):
    """Centres, sizes, bounds and splits of the distance pass, compiled, equal numpy's bit for
    bit (a mean or norm sums left to right, np.cross is a1 b2 - a2 b1), NaN included."""
    from reference import distance_pass

    rng = np.random.default_rng(11 + dim)
    count = 2000
    scale = rng.uniform(0.1, 300, size=(count, 1, 1))
    corners = rng.normal(size=(count, dim, dim)) * scale + rng.uniform(-100, 100, (count, 1, dim))
    distance = rng.uniform(0, 10, count)
    closest = corners[:, 0] + rng.normal(size=(count, dim))
    closest[:5] = np.nan  # no closest point: numpy's max and minimum let NaN through
    assert np.array_equal(elements.centres(corners), corners.mean(axis=1))
    assert np.array_equal(distance_pass.element_sizes(corners), _numpy_sizes(corners))
    for mine, theirs in zip(
        distance_pass.element_bounds(corners, distance, closest),
        _numpy_bounds(corners, distance, closest),
        strict=True,
    ):
        np.testing.assert_array_equal(mine, theirs)
    some = rng.random(count) < 0.5  # the rows split are read in place, not copied
    for mine, theirs in zip(
        distance_pass._split_with_reach(corners, closest, some),
        _numpy_split_with_reach(corners, closest, some),
        strict=True,
    ):
        np.testing.assert_array_equal(mine, theirs)


def test_compiled_band_counts_equal_numpys():
    from reference.biou import _slab_counts

    rng = np.random.default_rng(5)
    for shape in ((7, 9), (6, 5, 8)):
        flags = [rng.random(shape) < 0.5 for _ in range(4)]
        flags[1] = np.pad(flags[1], 1)[tuple(slice(1, n + 1) for n in shape)]  # a strided view
        inside_a, within_a, inside_b, within_b = flags
        band_a, band_b = inside_a & within_a, inside_b & within_b
        want = [band_a, band_b, band_a & band_b, inside_a, inside_b, inside_a & inside_b]
        assert list(_slab_counts(*flags)) == [int(np.count_nonzero(f)) for f in want]


def _numpy_child_blocks(pending, parent_side, side, grid, occupied, tau):
    """`within_tau._child_blocks` in numpy: the children (itertools.product order) that hold
    inside points, split by sum over axes of (|p - c| + h)^2 <= tau^2."""
    factor = parent_side // side
    half = 0.5 * (side - 1) * grid.step
    relative = pending.closest - pending.centre
    upper2 = np.zeros((len(relative), 1))
    for axis, count in enumerate(factor):
        shift = (np.arange(count) + 0.5 - 0.5 * count) * side[axis] * grid.step[axis]
        reach2 = (np.abs(relative[:, axis, None] - shift) + half[axis]) ** 2
        upper2 = (upper2[:, :, None] + reach2[:, None, :]).reshape(len(relative), -1)
    offsets = np.array(list(itertools.product(*(range(count) for count in factor))))
    index = (pending.index[:, None, :] * factor + offsets[None]).reshape(-1, len(factor))
    keep = occupied[tuple(index.T)]
    inner = keep & (upper2.ravel() <= tau * tau)
    return index[keep & ~inner], index[inner]


@pytest.mark.parametrize("parent_side", [(2, 2, 2), (4, 2, 1), (2, 1)])
def test_compiled_child_blocks_equal_numpys(parent_side):
    """BIoU's step from a level to the next, compiled: the same children to query and the
    same children settled by their parent's closest point, in the same order. The parents'
    closest points lie within a few block sides, so both outcomes occur (and ties at tau)."""
    from reference.biou import DenseGrid
    from reference.within_tau import _child_blocks, _Pending

    rng = np.random.default_rng(sum(parent_side))
    parent_side = np.array(parent_side)
    side = np.maximum(parent_side // 2, 1)  # halve every side above 1, as block_sides does
    dim = len(side)
    step = rng.uniform(0.1, 0.5, dim)
    grid = DenseGrid(rng.uniform(-50, 50, dim), step, tuple(parent_side * 6))
    occupied = rng.random(tuple(6 * parent_side // side)) < 0.7
    index = np.argwhere(rng.random((6,) * dim) < 0.5)
    centre = grid.origin + (index * parent_side + 0.5 * (parent_side - 1)) * step
    closest = centre + rng.normal(size=centre.shape) * float(np.max(parent_side * step))
    closest[0] = centre[0]  # a parent centre on the surface
    pending = _Pending(index, centre, np.zeros(len(index)), closest)
    tau = float(np.max(parent_side * step))
    got = _child_blocks(pending, parent_side, side, grid, occupied, tau)
    want = _numpy_child_blocks(pending, parent_side, side, grid, occupied, tau)
    for mine, theirs in zip(got, want, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert all(len(part) for part in want)  # both kinds of children occur


_KERNEL_PROBE = """
import json, numpy as np
from reference import analytic, compute_metrics, elements, lattice_bands
a = analytic.ball_mask((20, 20, 20), (1.0, 1.0, 1.0), 6.0, (10.0, 10.0, 10.0))
b = analytic.ball_mask((20, 20, 20), (1.0, 1.0, 1.0), 5.0, (10.8, 9.6, 10.3))
scores = compute_metrics(a, b, (1.0, 1.0, 1.0))
kernel = {"bounds": elements.bounds, "count_slabs": lattice_bands._count_slabs}
stats = {name: [sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values())]
         for name, f in kernel.items()}
print(json.dumps({"scores": scores, "stats": stats}))
"""


def test_two_processes_on_a_cold_kernel_cache(tmp_path):
    """Two processes compiling at once on an empty numba cache both finish with the same
    scores and leave a cache the next process loads without compiling anything."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    environment = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    )

    def start():
        return subprocess.Popen(
            [sys.executable, "-c", _KERNEL_PROBE],
            cwd=root,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def result(process):
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-2000:]
        return json.loads(out.strip().splitlines()[-1])

    first, second = start(), start()
    cold = [result(first), result(second)]
    assert cold[0]["scores"] == cold[1]["scores"]
    assert list(tmp_path.rglob("*.nbi")), "no cache index written"
    warm = result(start())
    assert warm["scores"] == cold[0]["scores"]
    for name, (hits, misses) in warm["stats"].items():
        assert misses == 0 and hits >= 1, (name, hits, misses)
