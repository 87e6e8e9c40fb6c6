"""The lattice path of the reference: VTK's case table, exact zeros, the cube search index."""

from __future__ import annotations

import numpy as np
import pytest

from reference import analytic, lattice
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
    """No element's centroid is on a cube face: the cube of an element is well defined."""
    for dim in (2, 3):
        for elements in lattice.case_table(dim):
            total = elements.sum(axis=1)
            n = elements.shape[1] if len(elements) else dim
            assert np.all((total > 0) & (total < 2 * n))


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
