"""Boundary IoU on a dense grid: rasterized inside tests plus exact distances near tau.

X_b = {x in X : d_X(x) <= tau} is the part of X within tau of its own surface (d_X = exact
unsigned distance to the surface of X; equivalently -tau <= sd_X <= 0 with sd negative inside).
BIoU = |A_b & B_b| / |A_b | B_b|, volumes counted as points of a dense grid (five times denser
than the image grid, as in the paper's Algorithm 1).

Two independent questions decide membership of a dense point x:

* inside X? A scanline rasterization of the closed surface on the dense grid answers it for
  every point at once. The sign is the expensive part of a signed distance near the surface;
  here it costs one raster pass: vtkPolyDataToImageStencil (C++), or, wherever the mesh's
  vertices lie on the lattice of half dense steps (as marching cubes' do on a mask),
  crossings counted in exact integers (module `crossings`), which give VTK's answer at every
  point not on the surface and count the points on it in X (X is closed); slices where a line
  crosses an odd number of times still go to VTK. (Masks meshed by discrete marching cubes
  are counted without this grid when the tables fit: module `lattice_bands`.)
* d_X(x) <= tau? Only inside points matter, and only near the level set d = tau is an exact
  distance needed: blocks of points decided coarse to fine by exact distances at their
  centres and corners (module `within_tau`).

The grid is counted in slabs along its first axis (`SLAB_POINTS` points each), so memory
stays bounded; each run of `RASTER_SLICES` slices is rasterized from only the cells that reach
into it, so the raster's cost (cells x slices) drops with the run's share of the cells.

The counts equal evaluating sd at every dense point (`tests/test_reference.py` checks this
against pseudo-normal signed distances, an independent code path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkImagingStencil import vtkImageStencilToImage, vtkPolyDataToImageStencil

from reference.closest import SurfaceIndex
from reference.crossings import lattice_inside
from reference.dense_grid import DenseGrid
from reference.elements import JIT
from reference.meshing import to_polydata, vtk_points
from reference.within_tau import within_tau


@dataclass
class BandCounts:
    """Dense points in A_b, in B_b, in both; and in A, in B, in both."""

    band_a: int = 0
    band_b: int = 0
    band_both: int = 0
    inside_a: int = 0
    inside_b: int = 0
    inside_both: int = 0

    def biou(self) -> float:
        union = self.band_a + self.band_b - self.band_both
        return self.band_both / union if union else float("nan")

    def dsc(self) -> float:
        total = self.inside_a + self.inside_b
        return 2.0 * self.inside_both / total if total else float("nan")


RASTER_SLICES = 16
"""Grid slices per raster call. A call costs about 46 ns per (cell given x slice) plus 2.5 ms:
runs of 16 slices took the rasters of the benchmark pairs from 4.1 s to 1.4 s."""


class SurfaceRaster:
    """Inside tests of one closed surface, a run of slices at a time.

    vtkPolyDataToImageStencil cuts every cell it is given with every grid slice, so a call
    costs (cells x slices). A run of slices (planes of constant first coordinate) only meets
    the cells whose first-coordinate range overlaps it; handing over just those cells gives the
    same cut contours, hence the same raster, at a fraction of the cost.
    """

    def __init__(self, vertices: np.ndarray, cells: np.ndarray):
        self.points = vtk_points(vertices[:, ::-1])  # VTK's order: x = last array axis
        self.cells = np.ascontiguousarray(cells, dtype=np.int64)
        first = vertices[:, 0][self.cells]
        self.low, self.high = first.min(axis=1), first.max(axis=1)
        self.vertices = vertices
        self.exact = vertices.shape[1] == 3  # crossings counted exactly (module `crossings`)
        self._lattice: tuple[tuple, np.ndarray | None] | None = None  # (grid key, lattice)

    def lattice(self, grid: DenseGrid) -> np.ndarray | None:
        """The vertices in half grid steps from grid.origin, as integers, if they lie that
        close to such a lattice that no grid point off the lattice surface can change side.

        Grid point (i, j, k) sits at (2i, 2j, 2k). A grid point not on the lattice surface is
        at least 1/L half steps from it, L the largest norm of a triangle's integer normal
        (b - a) x (c - a) or edge: the plane's or the edge line's integer equation is then at
        least 1 off. Snapping moves the surface by at most sqrt(3) times the largest rounding
        of a coordinate; below 1/(2L) no point changes side. Discrete marching cubes and
        flying edges on a mask put every vertex on a lattice of half dense steps (DENSE_FACTOR
        is odd): their rounding here is about 1e-13.
        """
        key = (grid.origin.tobytes(), grid.step.tobytes())
        if self._lattice is None or self._lattice[0] != key:
            self._lattice = key, _snap_to_lattice(self.vertices, self.cells, grid)
        return self._lattice[1]

    def polydata(self, low: float, high: float) -> vtkPolyData:
        """The cells whose first coordinate reaches into [low, high], as VTK polydata."""
        return to_polydata(self.points, self.cells[(self.high >= low) & (self.low <= high)])

    def inside(self, grid: DenseGrid, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Bool array (slices start..stop-1 of grid): points enclosed by the surface (on the
        lattice, points on it too; VTK's raster: strictly enclosed ones).

        Every point's position is grid.origin + index * step whatever the run it is
        rasterized in, so cutting the grid into runs or slabs changes no answer, not even for
        points exactly on the surface (in or out by the rounding of the scan).
        """
        stop = grid.shape[0] if stop is None else stop
        lattice = self.lattice(grid) if self.exact else None
        if lattice is None:
            return self._vtk_inside(grid, start, stop)
        inside, ambiguous = lattice_inside(
            lattice, self.cells, grid.shape[1], grid.shape[2], start, stop
        )
        # Slices where a line crosses an odd number of times (the surface is not closed
        # there): VTK decides, run by run of consecutive slices (every VTK call has a fixed
        # cost, see RASTER_SLICES).
        flagged = np.flatnonzero(ambiguous)
        for run in np.split(flagged, np.flatnonzero(np.diff(flagged) > 1) + 1):
            if len(run):
                first, last = run[0], run[-1] + 1
                inside[first:last] = self._vtk_inside(grid, start + first, start + last)
        return inside

    def _vtk_inside(self, grid: DenseGrid, start: int, stop: int) -> np.ndarray:
        inside = np.empty((stop - start, *grid.shape[1:]), bool)
        margin = 0.5 * grid.step[0]  # extra cells cut no slice: harmless
        for first in range(start, stop, RASTER_SLICES):
            last = min(first + RASTER_SLICES, stop) - 1
            low, high = (grid.origin[0] + index * grid.step[0] for index in (first, last))
            inside[first - start : last - start + 1] = inside_raster(
                self.polydata(low - margin, high + margin), grid, first, last
            )
        return inside


def _snap_to_lattice(vertices, cells, grid: DenseGrid) -> np.ndarray | None:
    """`SurfaceRaster.lattice`: the integer half-step coordinates, or None."""
    half_steps = 2.0 * (vertices - grid.origin) / grid.step
    lattice = np.rint(half_steps)
    rounding = float(np.abs(half_steps - lattice).max(initial=0.0))
    if not np.all(np.abs(lattice) < 2**20):  # with edges below 2^16 (below), the kernel's
        return None  # sums of products stay below 3 * 2^58, inside int64
    lattice = lattice.astype(np.int64)
    corners = lattice[cells]
    edges = np.concatenate([corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]])
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    largest = max(
        float(np.linalg.norm(edges, axis=1).max(initial=1.0)),
        float(np.linalg.norm(normals, axis=1).max(initial=1.0)),
    )
    return lattice if largest < 2**16 and np.sqrt(3) * rounding < 0.5 / largest else None


def inside_raster(
    polydata: vtkPolyData, grid: DenseGrid, first: int = 0, last: int | None = None
) -> np.ndarray:
    """Bool array (slices first..last of grid): points strictly enclosed by the closed surface.

    vtkPolyDataToImageStencil cuts the surface with every grid slice and fills the enclosed
    spans of each scanline (zero tolerance: a point must be inside, not merely close).
    """
    last = grid.shape[0] - 1 if last is None else last
    dim = len(grid.shape)
    pad = 3 - dim
    origin = list(grid.origin[::-1]) + [0.0] * pad
    step = list(grid.step[::-1]) + [1.0] * pad
    extent = [0, 0] * 3
    for axis, n in enumerate(grid.shape[::-1]):
        extent[2 * axis + 1] = n - 1
    # The grid's first array axis is VTK's last used one: select the slices there.
    extent[2 * dim - 2], extent[2 * dim - 1] = first, last
    stencil = vtkPolyDataToImageStencil()
    stencil.SetInputData(polydata)
    stencil.SetOutputOrigin(*origin)
    stencil.SetOutputSpacing(*step)
    stencil.SetOutputWholeExtent(*extent)
    stencil.SetTolerance(0.0)
    to_image = vtkImageStencilToImage()
    to_image.SetInputConnection(stencil.GetOutputPort())
    to_image.SetInsideValue(1)
    to_image.SetOutsideValue(0)
    to_image.SetOutputScalarTypeToUnsignedChar()
    to_image.Update()
    values = vtk_to_numpy(to_image.GetOutput().GetPointData().GetScalars())
    # 0/1 bytes reinterpreted as bool: no copy of what can be hundreds of millions of points.
    return values.reshape(last - first + 1, *grid.shape[1:]).view(bool)


SLAB_POINTS = 1 << 24
"""Dense points per slab (about 16 M): the grid is counted slab by slab along the first axis,
so memory stays bounded (tens of MB per array) whatever the size of the image."""


def slabs(grid: DenseGrid, points: int):
    """(start, stop) slices of consecutive slabs along the grid's first axis, of at most
    `points` points (at least one slice each); together they hold every point exactly once."""
    per_slice = int(np.prod(grid.shape[1:]))
    thickness = max(1, points // per_slice)
    for start in range(0, grid.shape[0], thickness):
        yield start, min(start + thickness, grid.shape[0])


def count_bands(
    surface_a: tuple[np.ndarray, np.ndarray],
    surface_b: tuple[np.ndarray, np.ndarray],
    tau: float,
    grid: DenseGrid,
    *,
    index_a: SurfaceIndex | None = None,
    index_b: SurfaceIndex | None = None,
) -> BandCounts:
    """Dense points in A_b, B_b and both, and in A, B and both.

    surface_x = (vertices, cells), closed; index_x its `SurfaceIndex` (built if not given).
    Every point is decided exactly on its own, so counting slab by slab changes nothing.
    """
    indexes = [
        SurfaceIndex(*surface) if index is None else index
        for surface, index in ((surface_a, index_a), (surface_b, index_b))
    ]
    rasters = [SurfaceRaster(*surface) for surface in (surface_a, surface_b)]
    counts = np.zeros(6, np.int64)
    for start, stop in slabs(grid, SLAB_POINTS):
        slab = grid.slices(start, stop)
        flags = []
        for raster, index in zip(rasters, indexes, strict=True):
            inside = raster.inside(grid, start, stop)
            flags += [inside, within_tau(index, inside, tau, slab)]
        counts += _slab_counts(*flags)
    return BandCounts(*(int(count) for count in counts))


def _slab_counts(inside_a, within_a, inside_b, within_b) -> np.ndarray:
    """The six counts of BandCounts over one slab, from the inside and within-tau flags, in
    one pass (`band_counts`, which takes 3D arrays)."""
    flags = (inside_a, within_a, inside_b, within_b)
    return band_counts(*(flag.reshape(-1, *flag.shape[-2:]) for flag in flags))


@njit(**JIT)
def band_counts(inside_a, within_a, inside_b, within_b):
    """One pass over a slab of BIoU's dense grid (3D bool arrays, any layout): the points in
    A_b, B_b, both, and in A, B, both (X_b = inside X and within tau of X's surface).

    Branch-free byte arithmetic with per-row sums, so the inner loop vectorizes: 2 to 2.4x
    numpy's count_nonzero passes on a 16 M-point slab (with `and`/`if`, 4x slower than them)."""
    counts = np.zeros(6, np.int64)
    n0, n1, n2 = inside_a.shape
    for i in range(n0):
        for j in range(n1):
            band_a = band_b = band_both = in_a = in_b = in_both = 0
            for k in range(n2):
                a, b = np.uint8(inside_a[i, j, k]), np.uint8(inside_b[i, j, k])
                a_b, b_b = a & np.uint8(within_a[i, j, k]), b & np.uint8(within_b[i, j, k])
                band_a += a_b
                band_b += b_b
                band_both += a_b & b_b
                in_a += a
                in_b += b
                in_both += a & b
            counts[0] += band_a
            counts[1] += band_b
            counts[2] += band_both
            counts[3] += in_a
            counts[4] += in_b
            counts[5] += in_both
    return counts
