"""The lattice structure of discrete-marching-cubes meshes of masks.

A mask padded by one voxel (as `meshing.mesh_mask` pads it) is cut into cubes of 2^dim
neighbouring voxels (squares in 2D). With u = (x - origin) / spacing + 1 the padded voxel
index of a point x in mm, cube c spans u in [c, c + 1] along every axis, and its case code is
the bit pattern of its corner voxels: bit ravel(o) set when voxel c + o is foreground, o in
{0, 1}^dim in C order (8 bits in 3D, 4 in 2D).

Discrete marching cubes (VTK's discrete flying edges, the default meshing) puts every vertex
at the midpoint of a lattice edge, so 2u is an integer vector, and it emits in each cube the
triangles (segments in 2D) of a table indexed by the case code alone. `case_table` reads that
table off VTK's own output at run time: each single-cube pattern is meshed once, through
`meshing.mesh_mask` (the reference's axis order; VTK's table depends on its version and on
the axis order handed to it, which resolves ambiguous cubes differently). Two facts follow,
both checked by the tests on all cases and on whole masks:

* every element lies in the closed box of its cube, strictly inside it (its centroid is never
  on a cube face), so the cube of an element is floor(sum of its 2u / (2 n)), n = corners;
* where both masks have the same case code in a cube, their elements there coincide, vertex
  for vertex: their distance to the other surface is exactly 0 (`coinciding_elements`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from reference import meshing as meshing_lib
from reference.closest import ClosestPoints
from reference.elements import JIT
from reference.geometry import FACE

LATTICE_MESHING = "discrete_marching_cubes"
"""The meshing whose elements are a function of the case codes (see the module docstring)."""


@dataclass(frozen=True)
class Lattice:
    """The padded voxel lattice of one cropped pair: u = (x - origin) / spacing + 1.

    origin: mm of voxel 0 of the (unpadded) masks; shape: the masks' shape.
    """

    origin: np.ndarray
    spacing: np.ndarray
    shape: tuple[int, ...]

    @property
    def cubes(self) -> tuple[int, ...]:
        """Cubes per axis: the padded mask has shape + 2 voxels, hence shape + 1 cubes."""
        return tuple(n + 1 for n in self.shape)

    def doubled(self, vertices: np.ndarray) -> np.ndarray:
        """2u of lattice-edge midpoints (n, dim) as integers (VTK's float32 rounding undone)."""
        return np.rint(2.0 * ((vertices - self.origin) / self.spacing + 1.0)).astype(np.int64)


def case_codes(mask: np.ndarray) -> np.ndarray:
    """Case code of every cube of the mask padded by one voxel: shape mask.shape + 1, uint8.

    One compiled pass (`_padded_codes`). A 2D mask is one layer of squares over
    an empty layer: the 3D codes' bit 4 di + 2 dj + dk is then 2 dj + dk, the 2D bit."""
    padded = np.pad(np.asarray(mask, bool), 1)
    if padded.ndim == 2:
        return _padded_codes(np.stack([padded, np.zeros_like(padded)]))[0]
    return _padded_codes(padded)


@functools.cache
def pattern_meshes(dim: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per case code, VTK's mesh (vertices, cells) of the single-cube pattern of that code
    (voxels at 0 and 1 mm per axis, so the cube spans [0, 1]), through `meshing.mesh_mask`:
    the reference's axis order. Built once per process."""
    meshes = []
    for code in range(2 ** (2**dim)):
        bits = [(code >> bit) & 1 for bit in range(2**dim)]
        pattern = np.array(bits, bool).reshape((2,) * dim)
        meshes.append(meshing_lib.mesh_mask(pattern, np.ones(dim), np.zeros(dim), LATTICE_MESHING))
    return tuple(meshes)


@functools.cache
def case_table(dim: int) -> tuple[np.ndarray, ...]:
    """Per case code, the elements VTK emits in one cube: (t, n, dim) integer 2u offsets from
    the cube's first corner (values 0, 1, 2), corners in VTK's order: the elements of
    `pattern_meshes` that lie in the pattern's cube."""
    table = []
    for vertices, cells in pattern_meshes(dim):
        doubled = np.rint(2.0 * vertices).astype(np.int64)[cells]  # (m, n, dim); cube at 0..2
        inside = _cube_of(doubled) == 0
        table.append(doubled[np.all(inside, axis=1)])
    return tuple(table)


def _cube_of(doubled_elements: np.ndarray) -> np.ndarray:
    """Cube index (k, dim) of elements given by the 2u of their corners (k, n, dim).

    The centroid is sum / (2 n) in u; it lies strictly inside its cube (checked by the tests),
    so integer floor division names the cube exactly."""
    n = doubled_elements.shape[1]
    return doubled_elements.sum(axis=1) // (2 * n)


def table_elements(mask: np.ndarray) -> np.ndarray:
    """The elements the case table puts in every cube of the mask: (k, n, dim) integer 2u,
    cube by cube in C order. Equals VTK's own mesh of the mask as a set (the tests)."""
    codes = case_codes(mask)
    table = case_table(mask.ndim)
    counts = np.array([len(elements) for elements in table])[codes.ravel()]
    cubes = np.repeat(np.flatnonzero(counts), counts[counts > 0])
    if len(cubes) == 0:
        return np.empty((0, mask.ndim, mask.ndim), np.int64)
    elements = np.concatenate([table[code] for code in codes.ravel()[counts > 0]])
    first_corner = np.column_stack(np.unravel_index(cubes, codes.shape))
    return elements + 2 * first_corner[:, None, :]


@dataclass
class Coinciding:
    """Elements of one surface that coincide with an element of the other, vertex for vertex.

    element: indices into this surface's cells; partner: the coinciding cell of the other.
    """

    element: np.ndarray
    partner: np.ndarray


def coinciding_elements(surface_a, surface_b, lattice: Lattice) -> tuple[Coinciding, Coinciding]:
    """Elements of A that coincide with one of B (and the reverse), on the lattice.

    An element is matched by the sum of the 2u of its corners (it names the cube, and no two
    elements of one cube share it), and accepted only when the partner's corners are the same
    points to the last bit, so every accepted element is at distance exactly 0 from the other
    surface all over. Where both masks share a case code, every element of the cube is matched.
    """
    (vertices_a, cells_a), (vertices_b, cells_b) = surface_a, surface_b
    keys = [_keys(vertices, cells, lattice) for vertices, cells in (surface_a, surface_b)]
    candidate, partner = equal_keys(keys[0], np.argsort(keys[0]), keys[1], np.argsort(keys[1]))
    same = same_corners(vertices_a, cells_a, vertices_b, cells_b, candidate, partner)
    element, partner = candidate[same], partner[same]
    return Coinciding(element, partner), Coinciding(partner, element)


def _keys(vertices: np.ndarray, cells: np.ndarray, lattice: Lattice) -> np.ndarray:
    """One integer per element: the flat index of the sum of its corners' 2u."""
    n = cells.shape[1]
    bound = np.array([2 * n * (c + 1) for c in lattice.cubes])
    return element_keys(lattice.doubled(vertices), np.ascontiguousarray(cells), bound)


def query_centres(target, centres: np.ndarray, coinciding: Coinciding) -> ClosestPoints:
    """Closest points on `target` (a `closest.SurfaceIndex`) of the element centres, with no
    search for the elements that coincide with one of target's: their distance is 0, their
    closest point the centre itself, on the partner element's face."""
    rest = np.ones(len(centres), bool)
    rest[coinciding.element] = False
    hit = target.query(centres[rest])
    distance, cell = np.zeros(len(centres)), np.empty(len(centres), np.int64)
    point, feature = centres.copy(), np.full(len(centres), FACE, np.int64)
    distance[rest], cell[rest], point[rest], feature[rest] = (
        hit.distance,
        hit.cell,
        hit.point,
        hit.feature,
    )
    cell[coinciding.element] = coinciding.partner
    return ClosestPoints(distance, cell, point, feature)


@njit(inline="always", **JIT)
def _has_corner(vertices, cells, element, other_vertices, other_cells, other):
    """Is every corner of `element` one of the corners of `other`, coordinate for coordinate?"""
    for i in range(cells.shape[1]):
        found = False
        for j in range(other_cells.shape[1]):
            same = True
            for axis in range(vertices.shape[1]):
                if vertices[cells[element, i], axis] != other_vertices[other_cells[other, j], axis]:
                    same = False
            found = found or same
        if not found:
            return False
    return True


@njit(**JIT)
def same_corners(vertices_a, cells_a, vertices_b, cells_b, element, partner):
    """Per row: do elements cells_a[element[i]] and cells_b[partner[i]] have the same corners
    (as sets, in any order), bit for bit?"""
    same = np.empty(len(element), np.bool_)
    for i in range(len(element)):
        a, b = element[i], partner[i]
        same[i] = _has_corner(vertices_a, cells_a, a, vertices_b, cells_b, b) and _has_corner(
            vertices_b, cells_b, b, vertices_a, cells_a, a
        )
    return same


@njit(**JIT)
def element_keys(doubled, cells, bound):
    """One integer per element: the C-order flat index, in a grid of shape `bound`, of the sum
    of its corners' 2u (doubled (n, dim): the 2u of every vertex)."""
    keys = np.empty(len(cells), np.int64)
    for i in range(len(cells)):
        key = 0
        for axis in range(doubled.shape[1]):
            total = 0
            for j in range(cells.shape[1]):
                total += doubled[cells[i, j], axis]
            key = key * bound[axis] + total
        keys[i] = key
    return keys


@njit(**JIT)
def equal_keys(keys_a, order_a, keys_b, order_b):
    """(element, partner): the rows of A and B with equal keys (keys distinct within each),
    found by one walk over both in ascending order."""
    element = np.empty(min(len(keys_a), len(keys_b)), np.int64)
    partner = np.empty_like(element)
    found = i = j = 0
    while i < len(order_a) and j < len(order_b):
        a, b = keys_a[order_a[i]], keys_b[order_b[j]]
        if a == b:
            element[found], partner[found] = order_a[i], order_b[j]
            found += 1
        if a <= b:
            i += 1
        if b <= a:
            j += 1
    return element[:found], partner[:found]


@njit(**JIT)
def _padded_codes(padded):
    """Case codes of the cubes of a 3D bool mask already padded by one voxel: bit
    4 di + 2 dj + dk set when voxel (i + di, j + dj, k + dk) is foreground. One pass, where
    numpy's shifted ORs make eight (label 6 of the 3 mm CT: 0.53 ms a pair, 0.10 ms here)."""
    n0, n1, n2 = padded.shape[0] - 1, padded.shape[1] - 1, padded.shape[2] - 1
    codes = np.zeros((n0, n1, n2), np.uint8)
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                code = 0
                bit = 0
                for di in range(2):
                    for dj in range(2):
                        for dk in range(2):
                            if padded[i + di, j + dj, k + dk]:
                                code |= 1 << bit
                            bit += 1
                codes[i, j, k] = code
    return codes
