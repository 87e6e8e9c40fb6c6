"""The lattice path of the reference: VTK's case table, exact zeros, the cube search index."""

from __future__ import annotations

import numpy as np
import pytest

from reference import analytic, lattice, lattice_index
from reference.api import _distance_metrics, mesh_surface
from reference.geometry import brute_force_distances
from reference.meshing import mesh_mask


def _element_set(elements: np.ndarray) -> np.ndarray:
    """Elements (k, n, dim) of integer 2u, each rotated to start at its smallest corner (a
    triangle's orientation is kept; a segment keeps its direction), rows sorted."""
    k, n, dim = elements.shape
    if n == 3:
        flat = np.ravel_multi_index(tuple(np.moveaxis(elements, 2, 0)), (1 << 20,) * dim)
        start = np.argmin(flat, axis=1)
        turn = (start[:, None] + np.arange(n)) % n
        elements = np.take_along_axis(elements, turn[:, :, None], axis=1)
    rows = elements.reshape(k, n * dim)
    return rows[np.lexsort(rows.T[::-1])]


def _vtk_elements(mask: np.ndarray, spacing, origin) -> np.ndarray:
    """VTK's own mesh of the mask as integer 2u, after checking every vertex is a lattice-edge
    midpoint to float32 rounding."""
    grid = lattice.Lattice(np.asarray(origin, float), np.asarray(spacing, float), mask.shape)
    vertices, cells = mesh_mask(mask, spacing, origin)
    doubled = grid.doubled(vertices)
    on_lattice = (doubled / 2.0 - 1.0) * grid.spacing + grid.origin
    assert np.all(np.abs(vertices - on_lattice) <= 1e-5 * (1 + np.abs(vertices).max(initial=0)))
    return doubled[cells]


def _assert_table_rebuilds_vtk(mask, spacing=None, origin=None):
    spacing = np.ones(mask.ndim) if spacing is None else np.asarray(spacing, float)
    origin = np.zeros(mask.ndim) if origin is None else np.asarray(origin, float)
    np.testing.assert_array_equal(
        _element_set(lattice.table_elements(mask)),
        _element_set(_vtk_elements(mask, spacing, origin)),
    )


@pytest.mark.parametrize("dim", [2, 3])
def test_case_table_rebuilds_vtk_on_every_single_cube(dim):
    """All 256 (16 in 2D) cases, each alone in its padded cube: the table's elements in every
    cube of the pattern (the case itself and the cases its neighbours see) are VTK's."""
    for code in range(2 ** (2**dim)):
        pattern = np.array([(code >> bit) & 1 for bit in range(2**dim)], bool)
        _assert_table_rebuilds_vtk(pattern.reshape((2,) * dim))


def test_elements_lie_strictly_inside_their_cube():
    """No element VTK emits for any single-cube pattern has its centroid on a cube face (a
    multiple of 2n in the 2u sum of its n corners), so the cube of an element is well
    defined. Checked on VTK's own output: the case table keeps only one cube's elements."""
    for dim in (2, 3):
        for code in range(2 ** (2**dim)):
            pattern = np.array([(code >> bit) & 1 for bit in range(2**dim)], bool)
            vertices, cells = mesh_mask(
                pattern.reshape((2,) * dim), np.ones(dim), np.zeros(dim), lattice.LATTICE_MESHING
            )
            total = np.rint(2.0 * vertices).astype(np.int64)[cells].sum(axis=1)
            assert np.all(total % (2 * dim) != 0), code


def _blobs(shape, seed, fill=0.45):
    """Random voxel blobs: noise, box-smoothed twice, thresholded (every case code appears)."""
    noise = np.random.default_rng(seed).random(shape)
    for _ in range(2):
        for axis in range(len(shape)):
            noise = (noise + np.roll(noise, 1, axis) + np.roll(noise, -1, axis)) / 3
    return noise > np.quantile(noise, 1 - fill)


@pytest.mark.parametrize("seed", [1, 2])
def test_case_table_rebuilds_vtk_on_whole_masks(seed):
    """Random voxels, random blobs (3D and 2D) and a voxelized ball at anisotropic spacing
    and an off-zero origin: the table's elements, cube by cube, are VTK's mesh as a set."""
    noise = np.random.default_rng(seed).random((14, 12, 13)) < 0.5
    assert len(np.unique(lattice.case_codes(noise))) == 256  # every case, in context
    _assert_table_rebuilds_vtk(noise, (0.7, 1.1, 2.3), (3.0, -1.5, 20.25))
    _assert_table_rebuilds_vtk(_blobs((20, 18, 16), seed), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    _assert_table_rebuilds_vtk(_blobs((30, 25), seed), (0.5, 1.5), (-4.0, 2.0))
    spacing = np.array([0.5, 0.8, 2.0])
    ball = analytic.ball_mask((40, 28, 14), spacing, 8.5, (10.2, 11.1, 13.7))
    _assert_table_rebuilds_vtk(ball, spacing, (12.0, -30.0, 7.5))


def test_a_wrong_case_in_the_table_is_caught(monkeypatch):
    """The rebuild fails when one case of the table differs from VTK's (here: the last
    element of one ambiguous case reversed)."""
    table = list(lattice.case_table(3))
    code = next(c for c, elements in enumerate(table) if len(elements) >= 2)
    table[code] = table[code].copy()
    table[code][-1] = table[code][-1][::-1]
    monkeypatch.setattr(lattice, "case_table", lambda dim: tuple(table))
    pattern = np.array([(code >> bit) & 1 for bit in range(8)], bool).reshape(2, 2, 2)
    with pytest.raises(AssertionError):
        _assert_table_rebuilds_vtk(pattern)


def _mask_pairs():
    """Pairs of masks that share much of their boundary: blobs and a blob grown by a voxel
    in places, offset balls at anisotropic spacing, and a 2D pair."""
    blobs = _blobs((22, 20, 18), 3)
    grown = blobs | (np.roll(blobs, 1, axis=0) & _blobs((22, 20, 18), 4, fill=0.5))
    spacing = np.array([0.8, 1.0, 2.0])
    ball_a = analytic.ball_mask((36, 30, 16), spacing, 10.0, (14.2, 15.1, 15.7))
    ball_b = analytic.ball_mask((36, 30, 16), spacing, 10.5, (15.0, 14.9, 16.3))
    flat = _blobs((40, 36), 5)
    return [
        (blobs, grown, np.array([1.0, 1.0, 1.0]), np.array([2.0, -3.0, 5.0])),
        (ball_a, ball_b, spacing, np.array([-10.0, 4.0, 100.0])),
        (flat, flat | np.roll(flat, 2, axis=1), np.array([0.6, 0.9]), np.zeros(2)),
    ]


def _surfaces(a, b, spacing, origin):
    surface_a = mesh_surface(a, spacing, origin, lattice.LATTICE_MESHING)
    surface_b = mesh_surface(b, spacing, origin, lattice.LATTICE_MESHING)
    grid = lattice.Lattice(origin, spacing, a.shape)
    return surface_a, surface_b, grid


@pytest.mark.parametrize("pair", range(3))
def test_coinciding_elements_are_at_distance_zero(pair):
    """Every element matched as coinciding has its partner's corners, bit for bit; at a sample
    of their centres and corners the brute-force distance to the other mesh is 0 (to
    rounding); and every element in a cube whose case code both masks share is matched (the
    table's fact)."""
    a, b, spacing, origin = _mask_pairs()[pair]
    surface_a, surface_b, grid = _surfaces(a, b, spacing, origin)
    a_to_b, b_to_a = lattice.coinciding_elements(surface_a, surface_b, grid)
    assert len(a_to_b.element) > 0.2 * len(surface_a[1])
    for (vertices, cells), (other_vertices, other_cells), found in (
        (surface_a, surface_b, a_to_b),
        (surface_b, surface_a, b_to_a),
    ):
        corners = vertices[cells[found.element]]
        partner_corners = other_vertices[other_cells[found.partner]]
        assert all(
            sorted(map(tuple, mine)) == sorted(map(tuple, theirs))
            for mine, theirs in zip(corners, partner_corners, strict=True)
        )
        points = np.concatenate([corners.mean(axis=1), corners.reshape(-1, corners.shape[2])])
        sample = np.random.default_rng(pair).choice(len(points), 200, replace=False)
        assert brute_force_distances(points[sample], other_vertices, other_cells).max() < 1e-12
        cube = tuple(lattice._cube_of(grid.doubled(vertices)[cells]).T)
        shared = np.flatnonzero(lattice.case_codes(a)[cube] == lattice.case_codes(b)[cube])
        assert set(shared) <= set(found.element)


@pytest.mark.parametrize("pair", range(3))
def test_exact_zeros_leave_the_scores_unchanged(pair):
    """The distance pass with the coinciding elements skipped gives the scores of the full
    search (within 1e-9 mm and 1e-9)."""
    a, b, spacing, origin = _mask_pairs()[pair]
    surface_a, surface_b, grid = _surfaces(a, b, spacing, origin)
    coinciding = lattice.coinciding_elements(surface_a, surface_b, grid)
    options = {"percentile": 95, "tau": 2.0, "subdivision": 2, "refine": "adaptive"}
    keys = ("HD", "HD95", "MASD", "ASSD", "NSD")
    with_zeros = _distance_metrics(
        surface_a, surface_b, keys=keys, coinciding=coinciding, **options
    )[0]
    searched = _distance_metrics(surface_a, surface_b, keys=keys, **options)[0]
    for key in keys:
        assert abs(with_zeros[key] - searched[key]) <= 1e-9, key


@pytest.mark.parametrize("dim", [2, 3])
def test_cube_index_finds_the_brute_force_distance(dim):
    """Random points in and around a random lattice mesh (anisotropic spacing, off-zero
    origin): the index's distance is the brute-force minimum over all elements, its closest
    point lies on the element it names at that distance, and with a search radius it finds
    exactly the points within it; a hinted element (tried first) changes no distance, and
    its distances are the exact re-measure's (`elements.to_cells`) to the last bit."""
    rng = np.random.default_rng(dim)
    shape = (26, 22, 18)[:dim]
    spacing = np.array([0.8, 1.0, 2.0])[:dim]
    origin = np.array([-12.5, 40.0, 7.25])[:dim]
    mask = rng.random(shape) > 0.75
    vertices, cells = mesh_surface(mask, spacing, origin, lattice.LATTICE_MESHING)
    grid = lattice.Lattice(origin, spacing, shape)
    index = lattice_index.LatticeIndex(vertices, cells, grid)
    low, high = vertices.min(axis=0) - 8.0, vertices.max(axis=0) + 8.0
    points = np.concatenate(
        [low + rng.random((1500, dim)) * (high - low), vertices[cells].mean(axis=1)[:300]]
    )
    exact = brute_force_distances(points, vertices, cells)
    hit = index.query(points)
    np.testing.assert_allclose(hit.distance, exact, rtol=0, atol=1e-12)
    for per in (1, 4):  # a hinted element is only tried first: any hint, the same distances
        hint = rng.integers(0, len(cells), -(-len(points) // per))
        hinted = index.query(points, hint=(hint, per)).distance
        np.testing.assert_allclose(hinted, exact, rtol=0, atol=1e-12)
    again = index.distance_to_cells(points, hit.cell)[0]
    np.testing.assert_array_equal(again, hit.distance)
    radius = np.where(rng.random(len(points)) < 0.5, 0.9, 1.1) * exact
    within = index.query(points, radius)
    found = np.isfinite(within.distance)
    assert np.all(found[radius >= exact])
    assert np.all(~found | (exact <= radius * (1 + 1e-5) + 1e-4))


def _squared_gaps(points: np.ndarray, closest: np.ndarray) -> np.ndarray:
    """|p - q|^2 summed over the axes in order: the search's own arithmetic (`squared_gap`)."""
    gap = points - closest
    total = gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1]
    return total + gap[:, 2] * gap[:, 2] if points.shape[1] == 3 else total


@pytest.mark.parametrize("dim", [2, 3])
def test_cube_index_names_the_tied_element_the_rings_meet_first(dim):
    """Lattice points are equidistant from many elements of a lattice mesh. Of those, the
    search names the hinted one, else the one of lowest rank (the ring of its bucket around
    the point's, then its slot), whether it walks the rings (no hint) or the hinted ball in
    one pass: checked against every element's distance, brute force."""
    rng = np.random.default_rng(7 + dim)
    shape = (14, 12, 10)[:dim]
    spacing = np.array([0.5, 0.5, 2.0])[:dim]  # in 3D, buckets of 2 x 2 x 1 cubes
    origin = np.array([3.0, -2.0, 1.0])[:dim]
    mask = rng.random(shape) > 0.6
    vertices, cells = mesh_surface(mask, spacing, origin, lattice.LATTICE_MESHING)
    grid = lattice.Lattice(origin, spacing, shape)
    index = lattice_index.LatticeIndex(vertices, cells, grid)
    nodes = np.stack(np.meshgrid(*[np.arange(-2, n + 2) / 2 for n in shape], indexing="ij"), -1)
    points = nodes.reshape(-1, dim)[rng.permutation(nodes[..., 0].size)[:300]] * spacing + origin
    pairs = np.repeat(points, len(cells), axis=0), np.tile(np.arange(len(cells)), len(points))
    closest = index.distance_to_cells(*pairs)[1]
    gap2 = _squared_gaps(pairs[0], closest).reshape(len(points), len(cells))
    start, slot = index._start, index._slot
    bucket = np.unravel_index(np.searchsorted(start, slot, side="right") - 1, index._buckets)
    home = np.floor((points - index._low[:dim]) / index._step[:dim]).astype(int)
    home = np.clip(home, 0, index._buckets[:dim] - 1)
    ring = np.max(np.abs(np.stack(bucket[:dim], axis=1)[None] - home[:, None]), axis=2)
    rank = np.lexsort((np.broadcast_to(slot, gap2.shape), ring, gap2), axis=1)[:, 0]
    nearest = gap2 == gap2.min(axis=1, keepdims=True)
    assert np.sum(nearest.sum(axis=1) > 1) > 100  # ties are the rule on the lattice
    np.testing.assert_array_equal(index.query(points).cell, rank)
    last_tied = len(cells) - 1 - np.argmax(nearest[:, ::-1], axis=1)  # not the first, if tied
    for hint in (rng.integers(0, len(cells), len(points)), rank, last_tied):
        wins = nearest[np.arange(len(points)), hint]
        found = index.query(points, hint=(hint, 1)).cell
        np.testing.assert_array_equal(found, np.where(wins, hint, rank))


def test_cube_index_on_a_small_surface_in_a_large_field():
    """A few elements in a large field make buckets of hundreds of cubes (at most
    `BUCKETS_PER_ELEMENT` buckets an element): distances still equal brute force, with and
    without hints, for points near small blobs in neighbouring buckets and far from them."""
    rng = np.random.default_rng(5)
    mask = np.zeros((3000, 2000), bool)
    corners = rng.integers(1000, 1600, (4, 2))
    for row, column in corners:
        mask[row, column : column + 2] = True
    spacing, origin = np.array([0.7, 1.3]), np.array([-5.0, 2.0])
    vertices, cells = mesh_surface(mask, spacing, origin, lattice.LATTICE_MESHING)
    grid = lattice.Lattice(origin, spacing, mask.shape)
    index = lattice_index.LatticeIndex(vertices, cells, grid)
    assert np.all(index._step[:2] / spacing >= 100)  # buckets of 100 cubes or more a side
    near = (corners + 1) * spacing + origin
    points = np.concatenate(
        [
            (near[:, None] + rng.normal(0, 2, (4, 200, 2))).reshape(-1, 2),
            near.mean(axis=0) + rng.uniform(-900, 900, (100, 2)),
        ]
    )
    exact = brute_force_distances(points, vertices, cells)
    np.testing.assert_allclose(index.query(points).distance, exact, rtol=0, atol=1e-12)
    hint = rng.integers(0, len(cells), len(points))
    hinted = index.query(points, hint=(hint, 1)).distance
    np.testing.assert_allclose(hinted, exact, rtol=0, atol=1e-12)


@pytest.mark.parametrize("move", ["across cubes", "off the grid"])
def test_cube_index_refuses_a_mesh_off_its_lattice(move):
    """The index holds only elements that lie in their cube of the lattice it is given: a mesh
    moved by half a voxel (its elements straddle cubes), or one whose
    cubes fall outside the lattice, is refused with the reason."""
    spacing, origin = np.array([1.0, 1.5, 2.0]), np.array([3.0, -4.0, 5.0])
    mask = analytic.ball_mask((12, 12, 12), spacing, 4.0, origin + 6 * spacing)
    vertices, cells = mesh_surface(mask, spacing, origin, lattice.LATTICE_MESHING)
    grid = lattice.Lattice(origin, spacing, mask.shape)
    lattice_index.LatticeIndex(vertices, cells, grid)  # its own lattice: accepted
    shift = 0.5 * spacing if move == "across cubes" else -20 * spacing
    with pytest.raises(ValueError, match="not a mesh of the lattice"):
        lattice_index.LatticeIndex(vertices + shift, cells, grid)
