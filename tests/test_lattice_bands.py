"""BIoU by case-code tables (module `lattice_bands`) against the dense-grid count (module
`biou`): two independent code paths to the same six counts."""

from __future__ import annotations

import numpy as np
import pytest

from reference import analytic, biou, lattice, lattice_bands
from reference.api import mesh_surface
from reference.dense_grid import dense_grid_of_image
from reference.distance_pass import tie_threshold
from reference.geometry import brute_force_distances


def _blobs(shape, seed, fill=0.45):
    rng = np.random.default_rng(seed)
    noise = rng.random(shape)
    # Smooth random blobs: a few box-filter passes, then a threshold.
    for axis in range(len(shape)):
        noise = (noise + np.roll(noise, 1, axis) + np.roll(noise, -1, axis)) / 3
    return noise > np.quantile(noise, 1 - fill)


def _pairs():
    spacing = np.array([0.8, 1.0, 2.0])
    ball_a = analytic.ball_mask((30, 24, 14), spacing, 8.0, (12.2, 12.1, 13.7))
    ball_b = analytic.ball_mask((30, 24, 14), spacing, 8.5, (12.9, 11.8, 14.3))
    blobs = _blobs((16, 15, 14), 3)
    flat = _blobs((30, 26), 5)
    return {
        "blobs, 1 mm, tau 2 mm": (blobs, blobs ^ _blobs((16, 15, 14), 4, 0.1), [1.0] * 3, 2.0),
        # tau = 0.3 voxel: dense points at exactly tau from the faces, the tie rule decides.
        "blobs, ties at tau": (blobs, np.roll(blobs, 1, axis=2), [1.0] * 3, 0.3),
        "balls, anisotropic": (ball_a, ball_b, spacing, 2.0),
        "balls, tau of several voxels": (ball_a, ball_b, spacing, 3.7),
        "2D": (flat, flat | np.roll(flat, 2, axis=1), [0.6, 0.9], 2.0),
    }


def _dense_counts(a, b, spacing, threshold):
    """The dense-grid path's counts (module `biou`; compiled raster, exact distances)."""
    origin = np.zeros(a.ndim)
    surfaces = [mesh_surface(m, spacing, origin, lattice.LATTICE_MESHING) for m in (a, b)]
    grid = dense_grid_of_image(origin, spacing, -np.ones(a.ndim, int), np.array(a.shape) + 1)
    return biou.count_bands(*surfaces, threshold, grid)


def _brute_force_counts(a, b, spacing, threshold):
    """Every dense point decided on its own: in X if on the mesh or if a ray from it crosses
    the mesh an odd number of times; within tau by its brute-force distance."""
    origin = np.zeros(a.ndim)
    grid = dense_grid_of_image(origin, spacing, -np.ones(a.ndim, int), np.array(a.shape) + 1)
    points = grid.origin + np.argwhere(np.ones(grid.shape, bool)) * grid.step
    flags = []
    for mask in (a, b):
        vertices, cells = mesh_surface(mask, spacing, origin, lattice.LATTICE_MESHING)
        distance = brute_force_distances(points, vertices, cells)
        crossings = lattice_bands._crossings(points, vertices[cells], lattice_bands.RAY[: a.ndim])
        inside = (distance < 1e-9) | (crossings % 2 == 1)
        flags.append((inside & (distance <= threshold), inside))
    (band_a, in_a), (band_b, in_b) = flags
    counts = [band_a, band_b, band_a & band_b, in_a, in_b, in_a & in_b]
    return biou.BandCounts(*(int(np.count_nonzero(c)) for c in counts))


@pytest.mark.parametrize("name", list(_pairs()))
def test_tables_count_what_the_dense_grid_counts(name):
    """The six counts equal the dense-grid path's (compiled raster, exact distances) point
    for point, ties at tau included. In 2D the dense path's raster is VTK's, which misplaces
    points on blob-shaped masks (docs/reference.md, limits): there every point is decided by
    brute force instead."""
    a, b, spacing, tau = _pairs()[name]
    spacing = np.asarray(spacing, float)
    surfaces = [mesh_surface(m, spacing, np.zeros(a.ndim), lattice.LATTICE_MESHING) for m in (a, b)]
    threshold = tie_threshold(tau, surfaces[0][0], surfaces[1][0])
    independent = _brute_force_counts if a.ndim == 2 else _dense_counts
    tables = lattice_bands.count_by_tables(a, b, spacing, threshold)
    assert tables == independent(a, b, spacing, threshold)
    assert 0 < tables.band_both < tables.band_a


@pytest.mark.parametrize("tau", [2.0, 0.3 - 1e-7])
def test_kept_tables_serve_later_pairs_and_thresholds_beyond_their_cut(tau):
    """Tables measured for one pair are kept for the next pairs of the same spacing and tau,
    and the counts stay the dense grid's. At tau = 0.3 - 1e-7 mm the dense points at 0.3 mm
    lie beyond the kept tables' cut yet within each pair's threshold (tau plus 1e-6 of the
    extent): those rows are measured again at the threshold."""
    spacing = np.ones(3)
    blobs = _blobs((16, 15, 14), 3)
    grown = blobs ^ _blobs((16, 15, 14), 4, 0.1)
    pairs = [(blobs, np.roll(blobs, 1, axis=2)), (blobs, grown), (grown, np.roll(grown, 1, 0))]
    lattice_bands.forget_tables()
    for a, b in pairs:
        surfaces = [mesh_surface(m, spacing, np.zeros(3), lattice.LATTICE_MESHING) for m in (a, b)]
        threshold = tie_threshold(tau, surfaces[0][0], surfaces[1][0])
        assert lattice_bands.count_by_tables(a, b, spacing, threshold, tau=tau) == _dense_counts(
            a, b, spacing, threshold
        )
    kept, _ = lattice_bands._kept(3, (1.0, 1.0, 1.0), tau)
    assert kept.measured.any()  # the calls filled the kept tables, not tables of their own
    beyond_cut = kept.measured & (kept.gap <= threshold)
    assert beyond_cut.any() == (tau < 0.3)


def test_a_wrong_within_bit_changes_the_count(monkeypatch):
    """The comparison above can fail: without the cube's own elements (offset 0) band points
    are lost."""
    a, b, spacing, tau = _pairs()["blobs, ties at tau"]
    full = lattice_bands.count_by_tables(a, b, spacing, tau)
    reach = lattice_bands.reach

    def without_own_cube(spacing, threshold):
        offsets = reach(spacing, threshold)
        return offsets[np.any(offsets != 0, axis=1)]

    monkeypatch.setattr(lattice_bands, "reach", without_own_cube)
    assert lattice_bands.count_by_tables(a, b, spacing, tau) != full


@pytest.mark.parametrize("dim", [2, 3])
def test_inside_table_is_the_closed_region(dim):
    """A cube's first corner point is in X exactly when its voxel is, every point on the
    pattern's mesh is in X, the empty code holds no point and the full code every one."""
    table = lattice_bands.inside_table(dim)
    points = lattice_bands.cube_points(dim)
    codes = 2 ** (2**dim)
    for code in range(1, codes - 1):
        bits = _unpack(table[code], len(points))
        assert bits[0] == bool(code & 1)  # point k = 0 is the cube's first corner voxel
        vertices, cells = lattice.pattern_meshes(dim)[code]
        on_mesh = brute_force_distances(points, vertices, cells) < 1e-9
        assert np.all(bits[on_mesh])
    assert not _unpack(table[0], len(points)).any()
    assert _unpack(table[codes - 1], len(points)).all()


def _unpack(words: np.ndarray, count: int) -> np.ndarray:
    bits = [(int(words[p // 64]) >> (p % 64)) & 1 for p in range(count)]
    return np.array(bits, bool)


def test_reach_holds_every_offset_within_tau():
    """Offsets in reach are exactly those whose cube box lies within the threshold of the box
    of a cube's points (brute force over a wide window)."""
    spacing, threshold = np.array([0.5, 1.0, 3.0]), 2.0
    found = {tuple(o) for o in lattice_bands.reach(spacing, threshold)}
    points = lattice_bands.cube_points(3) * spacing
    for offset in np.ndindex(13, 7, 5):
        o = np.array(offset) - (6, 3, 2)
        # Distance from each point to the box [o, o + 1] in mm.
        gap = np.maximum(np.maximum(o * spacing - points, points - (o + 1) * spacing), 0.0)
        near = np.sqrt((gap**2).sum(axis=1)).min() <= threshold
        assert near == (tuple(o) in found), o


def test_a_tau_beyond_the_tables_counts_on_the_dense_grid(monkeypatch):
    """A neighbourhood larger than the tables take goes to the dense grid, with the same
    BIoU (the two paths count alike)."""
    from reference import compute_metrics

    a, b, spacing, _ = _pairs()["balls, anisotropic"]
    with_tables = compute_metrics(a, b, spacing, metrics=["BIoU"])
    counted = []
    dense = biou.count_bands
    monkeypatch.setattr(lattice_bands, "MAX_OFFSETS", 10)
    monkeypatch.setattr(biou, "count_bands", lambda *a, **k: counted.append(1) or dense(*a, **k))
    assert compute_metrics(a, b, spacing, metrics=["BIoU"]) == with_tables
    assert counted


def test_tables_count_what_the_dense_grid_counts_on_random_voxels():
    """Random voxel noise holds every case code, ambiguous ones included: on a dozen such
    pairs, with random spacings and taus that put dense points exactly at tau, the tables
    and the dense grid count alike."""
    rng = np.random.default_rng(7)
    for _ in range(12):
        shape = tuple(rng.integers(3, 9, size=3))
        a = rng.random(shape) < rng.uniform(0.2, 0.7)
        b = a ^ (rng.random(shape) < 0.15)
        if not (a.any() and b.any()):
            continue
        spacing = rng.choice([0.5, 0.8, 1.0, 1.3, 2.0, 3.0], size=3)
        tau = float(rng.choice([0.3, 0.5, 1.0, 2.0, 2.5, 4.0]))
        surfaces = [mesh_surface(m, spacing, np.zeros(3), lattice.LATTICE_MESHING) for m in (a, b)]
        threshold = tie_threshold(tau, surfaces[0][0], surfaces[1][0])
        tables = lattice_bands.count_by_tables(a, b, spacing, threshold)
        assert tables == _dense_counts(a, b, spacing, threshold), (shape, spacing, tau)
