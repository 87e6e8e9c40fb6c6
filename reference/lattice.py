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

from reference import lattice_kernels
from reference import meshing as meshing_lib
from reference.closest import ClosestPoints, SurfaceIndex, plain
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

    One compiled pass (`lattice_kernels.case_codes`). A 2D mask is one layer of squares over
    an empty layer: the 3D codes' bit 4 di + 2 dj + dk is then 2 dj + dk, the 2D bit."""
    padded = np.pad(np.asarray(mask, bool), 1)
    if padded.ndim == 2:
        return lattice_kernels.case_codes(np.stack([padded, np.zeros_like(padded)]))[0]
    return lattice_kernels.case_codes(padded)


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
    candidate, partner = lattice_kernels.equal_keys(
        keys[0], np.argsort(keys[0]), keys[1], np.argsort(keys[1])
    )
    same = lattice_kernels.same_corners(
        vertices_a, cells_a, vertices_b, cells_b, candidate, partner
    )
    element, partner = candidate[same], partner[same]
    return Coinciding(element, partner), Coinciding(partner, element)


def _keys(vertices: np.ndarray, cells: np.ndarray, lattice: Lattice) -> np.ndarray:
    """One integer per element: the flat index of the sum of its corners' 2u."""
    n = cells.shape[1]
    bound = np.array([2 * n * (c + 1) for c in lattice.cubes])
    return lattice_kernels.element_keys(
        lattice.doubled(vertices), np.ascontiguousarray(cells), bound
    )


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


BUCKETS_PER_ELEMENT = 8
"""At most this many buckets per element (`_bucket_sides`): beyond it (a large field around a
small surface) buckets grow along every axis."""


class LatticeIndex(SurfaceIndex):
    """Exact closest elements on a lattice mesh, searched over its cube buckets.

    The queries of `closest.SurfaceIndex` without a tree: each element lies in its cube
    (module docstring), so the cube grid is the index (`lattice_kernels.search`, exact
    float64). It names the closest element; "compiled" takes the search's own distances (the
    compiled re-measure's arithmetic), "classic" re-measures the named elements with numpy,
    as with the BVH: both give the same distances to the last bit.
    """

    def __init__(
        self,
        vertices: np.ndarray,
        cells: np.ndarray,
        lattice: Lattice,
        implementation: str = "compiled",
    ):
        self._keep(vertices, cells, implementation)  # no BVH: the cube grid is the index
        doubled = lattice.doubled(self.vertices)
        on_lattice = (doubled / 2.0 - 1.0) * lattice.spacing + lattice.origin
        side = _bucket_sides(lattice, len(self.cells))
        buckets = np.array([*(-(-np.array(lattice.cubes) // side)), *[1] * (3 - self.dim)])
        # int32 (the kernel reads either): at one bucket per cube or two the bucket table
        # is as large as the mask, and it lives through the distance pass.
        self._member, self._slot, self._corners, self._start, in_cube = (
            lattice_kernels.bucket_elements(doubled, self.vertices, self.cells, side, buckets)
        )
        if not in_cube:
            raise ValueError("the surface is not a mesh of the lattice: an element leaves its cube")
        self._buckets = buckets
        self._low = np.zeros(3)
        self._low[: self.dim] = lattice.origin - lattice.spacing  # u = 0
        self._step = np.ones(3)
        self._step[: self.dim] = side * lattice.spacing
        # Elements leave their buckets' boxes by VTK's float32 rounding of the vertices at
        # most; the slack covers that and float64 rounding of the box faces.
        extent = float(np.abs(self.vertices).max(initial=1.0))
        self._slack = float(np.abs(self.vertices - on_lattice).max(initial=0.0)) + 1e-12 * extent

    def _search(self, points: np.ndarray, radius, hint=None) -> ClosestPoints:
        radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(points),))
        cells, per = (np.empty(0, np.int64), 1) if hint is None else hint
        found = lattice_kernels.search(
            plain(points),
            plain(radius),
            np.ascontiguousarray(cells, np.int64),
            per,
            self._slot,
            self._corners,
            self._start,
            self._member,
            self._low,
            self._step,
            self._buckets,
            self._slack,
        )
        return ClosestPoints(*found)

    def _query(self, points: np.ndarray, radius: np.ndarray, hint=None) -> ClosestPoints:
        if self.compiled:
            return self._search(points, radius, hint)
        return super()._query(points, radius)  # classic: numpy re-measures closest_cells

    def closest_cells(self, points: np.ndarray, radius) -> np.ndarray:
        return self._search(points, radius).cell

    def nearest_cells(self, points: np.ndarray, radius) -> tuple[np.ndarray, np.ndarray]:
        found = self._search(points, radius)
        return found.cell, found.distance


def indexes(surface_a, surface_b, lattice: Lattice, implementation: str):
    """The `LatticeIndex` of both surfaces."""
    return tuple(
        LatticeIndex(*surface, lattice, implementation) for surface in (surface_a, surface_b)
    )


def _bucket_sides(lattice: Lattice, elements: int) -> np.ndarray:
    """Bucket sides in cubes per axis: as near to the same length in mm along every axis as
    whole cubes allow, starting from the voxel's geometric-mean edge, and grown until there
    are at most BUCKETS_PER_ELEMENT buckets per element.

    The search's rings grow by one bucket along every axis at once, so on an anisotropic grid
    cube-sized buckets make it visit many buckets along the fine axes to cover a distance the
    coarse axis covers in one (0.5 x 0.5 x 2 mm: 4 rings for 2 mm in-plane, which reach 8 mm
    along the slices)."""
    cubes = np.array(lattice.cubes)
    spacing = np.asarray(lattice.spacing, float)
    edge = float(np.exp(np.log(spacing).mean()))
    while True:
        side = np.maximum(1, np.round(edge / spacing)).astype(np.int64)
        if np.prod(-(-cubes // side)) <= BUCKETS_PER_ELEMENT * max(elements, 1):
            return side
        edge += float(spacing.min())
