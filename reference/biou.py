"""Boundary IoU on a dense grid: rasterized inside tests plus exact distances near tau.

X_b = {x in X : d_X(x) <= tau} is the part of X within tau of its own surface (d_X = exact
unsigned distance to the surface of X; equivalently -tau <= sd_X <= 0 with sd negative inside).
BIoU = |A_b & B_b| / |A_b | B_b|, volumes counted as points of a dense grid (five times denser
than the image grid, as in the paper's Algorithm 1).

Two independent questions decide membership of a dense point x:

* inside X? A scanline rasterization of the closed surface on the dense grid answers it for
  every point at once. The sign is the expensive part of a signed distance near the surface;
  here it costs one raster pass: vtkPolyDataToImageStencil (C++), or, in the compiled
  implementation, wherever the mesh's vertices lie on the lattice of half dense steps (as
  marching cubes' do on a mask), crossings counted in exact integers
  (`kernels.lattice_inside`), which give VTK's answer at every point not on the surface and
  count the points on it in X (X is closed); slices where a line crosses an odd number of
  times still go to VTK. (Masks meshed by discrete marching cubes are counted without this
  grid: module `lattice_bands`.)
* d_X(x) <= tau? Only inside points matter, and only near the level set d = tau is an exact
  distance needed. The grid is padded with outside points to whole blocks (sides of 2^k
  points, near cubes in mm: `block_sides`) and decided coarse to fine. For a block with centre
  c and half-diagonal rho, d is 1-Lipschitz, so d(x) lies in [d(c) - rho, d(c) + rho]: the
  block is all in if d(c) + rho <= tau, all out if d(c) - rho > tau. The closest point p of c
  on the surface also gives d(x) <= |x - p| for every x: a child block whose farthest corner
  is within tau of its parent's p is all in without a query. Only undecided blocks are split,
  down to blocks of about 0.4 tau; their points are then decided one by one, most of them
  from exact distances at the blocks' corners (concavity of d^2 - |x|^2 for out, the known
  closest points for in: `_decide_points`), the rest by their own exact distance. Blocks
  without inside points are never queried. The compiled implementation measures every
  queried block's exact float64 distance (and keeps it, with p, for the children); the
  classic one lets the BVH's float32 distance (error about 1e-5 mm) decide every block it
  places more than `APPROXIMATION_SLACK` from its threshold, and measures only the others:
  the same decisions.

The grid is counted in slabs along its first axis (`SLAB_POINTS` points each), so memory
stays bounded; each run of `RASTER_SLICES` slices is rasterized from only the cells that reach
into it, so the raster's cost (cells x slices) drops with the run's share of the cells.

The counts equal evaluating sd at every dense point (`tests/test_reference.py` checks this
against pseudo-normal signed distances, an independent code path).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkPolyData
from vtkmodules.vtkImagingStencil import vtkImageStencilToImage, vtkPolyDataToImageStencil

from reference import kernels
from reference.closest import SurfaceIndex
from reference.meshing import to_polydata, vtk_points

DENSE_FACTOR = 5
"""Dense grid points per image voxel along each axis (the paper's choice). Odd on purpose:
dense points then never fall on the voxel-face planes of a mask's mesh."""

TOP_LEVEL_BLOCKS = 4096
"""Upper bound on the number of blocks evaluated first; sets the size of the top blocks."""


@dataclass
class DenseGrid:
    """Points origin + j * step for integer j in [0, shape) along every axis."""

    origin: np.ndarray
    step: np.ndarray
    shape: tuple[int, ...]

    def slices(self, start: int, stop: int) -> DenseGrid:
        """The sub-grid of slices start..stop-1 along the first axis."""
        origin = self.origin.copy()
        origin[0] += start * self.step[0]
        return DenseGrid(origin, self.step, (stop - start, *self.shape[1:]))


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


def dense_grid_of_image(origin, spacing, lower, upper, factor: int = DENSE_FACTOR) -> DenseGrid:
    """Dense grid covering image voxels lower..upper-1: `factor` points per voxel and axis.

    The points of voxel i sit at the centres of its factor**dim sub-voxels:
    origin + (i - 1/2 + (k + 1/2) / factor) * spacing, k = 0..factor-1.
    """
    spacing = np.asarray(spacing, float)
    step = spacing / factor
    first = np.asarray(origin, float) + (np.asarray(lower) - 0.5 + 0.5 / factor) * spacing
    shape = tuple(int(n) * factor for n in np.asarray(upper) - np.asarray(lower))
    return DenseGrid(first, step, shape)


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

    def __init__(self, vertices: np.ndarray, cells: np.ndarray, compiled: bool = False):
        self.points = vtk_points(vertices[:, ::-1])  # VTK's order: x = last array axis
        self.cells = np.ascontiguousarray(cells, dtype=np.int64)
        first = vertices[:, 0][self.cells]
        self.low, self.high = first.min(axis=1), first.max(axis=1)
        self.vertices = vertices
        self.compiled = compiled and vertices.shape[1] == 3
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
        lattice = self.lattice(grid) if self.compiled else None
        if lattice is None:
            return self._vtk_inside(grid, start, stop)
        inside, ambiguous = kernels.lattice_inside(
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


def _pool_any(mask: np.ndarray, axes) -> np.ndarray:
    """OR over pairs of neighbouring points along each of `axes` (each of even length).

    One halving per axis, the outermost first: the strided reads along the innermost axis
    then touch the fewest points.
    """
    for axis in sorted(axes):
        pair = [slice(None)] * mask.ndim
        pair[axis] = slice(0, None, 2)
        first = mask[tuple(pair)]
        pair[axis] = slice(1, None, 2)
        mask = first | mask[tuple(pair)]
    return mask


def block_sides(shape: tuple[int, ...], step: np.ndarray) -> list[np.ndarray]:
    """Block sides in points per axis (powers of 2), level by level from single points up.

    Each level doubles the sides whose extent in mm is within a factor sqrt(2) of the
    smallest, so blocks stay close to cubes in mm on anisotropic grids (on a 0.5 x 0.5 x 2 mm
    image, 4 x 4 x 1 points of 0.1 x 0.1 x 0.4 mm before any doubling along the third axis):
    a block's half-diagonal, and so the band of blocks its bounds leave undecided, is then
    smallest for the points it holds. A side grows only while the grid holds four blocks
    along that axis (the padding to whole blocks stays small), up to TOP_LEVEL_BLOCKS blocks.
    """
    shape = np.asarray(shape)
    sides = [np.ones(len(shape), int)]
    while np.prod(-(-shape // sides[-1])) > TOP_LEVEL_BLOCKS:
        may_grow = 4 * sides[-1] <= shape
        if not may_grow.any():
            break
        extent = np.where(may_grow, sides[-1] * step, np.inf)
        sides.append(np.where(extent <= np.sqrt(2) * extent.min(), 2, 1) * sides[-1])
    return sides


def _occupancy(inside: np.ndarray, sides: list[np.ndarray]) -> list[np.ndarray]:
    """Per level of `sides`: which blocks hold inside points.

    The grid is padded with outside points to whole top-level blocks along every axis, so
    every block is whole and every block's children exist.
    """
    top = sides[-1]
    padded = np.zeros([-(-n // s) * s for n, s in zip(inside.shape, top, strict=True)], bool)
    padded[tuple(slice(0, n) for n in inside.shape)] = inside
    occupied = [padded]
    for finer, coarser in itertools.pairwise(sides):
        occupied.append(_pool_any(occupied[-1], np.flatnonzero(coarser > finer)))
    return occupied


def _centres(index: np.ndarray, side: np.ndarray, grid: DenseGrid) -> np.ndarray:
    """Centres (mm) of the blocks `index` of `side` points per axis."""
    return grid.origin + (index * side + 0.5 * (side - 1)) * grid.step


def _half_diagonal(side: np.ndarray, grid: DenseGrid) -> float:
    """Largest distance from a block's centre to one of its points."""
    return 0.5 * float(np.linalg.norm((side - 1) * grid.step))


def _paint(within: np.ndarray, index: np.ndarray, side: np.ndarray) -> None:
    """Set every point of the blocks `index` (of `side` points per axis) to True."""
    if len(index) == 0:
        return
    _block_view(within, side)[_blocks_at(index)] = True


def _block_view(values: np.ndarray, side: np.ndarray) -> np.ndarray:
    """A view of `values` with a (block, point-in-block) pair of axes per grid axis: one
    fancy-index read or write reaches every point of many blocks at once."""
    return values.reshape([m for n, s in zip(values.shape, side, strict=True) for m in (n // s, s)])


def _blocks_at(index: np.ndarray) -> tuple:
    """Index into a `_block_view`: the blocks `index` (k, dim), as (k, *side)."""
    return tuple(part for axis in index.T for part in (axis, slice(None)))


@dataclass
class _Pending:
    """Undecided blocks of one level: indices, centres, and the centres' exact closest points."""

    index: np.ndarray
    centre: np.ndarray
    distance: np.ndarray
    closest: np.ndarray

    def rows(self, part: slice) -> _Pending:
        """The blocks `part` of these."""
        return _Pending(
            self.index[part], self.centre[part], self.distance[part], self.closest[part]
        )


APPROXIMATION_SLACK = 1e-3
"""mm. The BVH's float32 distance is within about 1e-5 mm of the exact one (closest.py): a
block it places farther than this from the decision threshold is decided by it; the others
get the exact float64 distance."""


def _decide(
    surface: SurfaceIndex,
    index: np.ndarray,
    side: np.ndarray,
    grid: DenseGrid,
    tau: float,
    within: np.ndarray,
) -> _Pending:
    """Query the blocks' centres; paint the blocks all within tau, return the undecided ones.

    d is 1-Lipschitz: with rho the half-diagonal, a block is all within tau if d(c) + rho <=
    tau and has no point within tau if d(c) - rho > tau.
    """
    centre = _centres(index, side, grid)
    rho = _half_diagonal(side, grid)
    if surface.compiled:
        # The exact distance of every block: the kernel measures it in less time than reading
        # the BVH's float32 one takes, and it decides every block as that one would.
        hit = surface.query(centre, tau + rho)
        distance, closest = hit.distance, hit.point
    else:
        cell, approximate = surface.nearest_cells(centre, tau + rho)
        certain_in = approximate + rho <= tau - APPROXIMATION_SLACK
        certain_out = approximate - rho > tau + APPROXIMATION_SLACK
        _paint(within, index[certain_in], side)
        # Blocks the approximation leaves open: the exact distance, and its closest point.
        open_ = ~(certain_in | certain_out)
        index, centre, cell = index[open_], centre[open_], cell[open_]
        distance, closest, _ = surface.distance_to_cells(centre, cell)
    inner = distance + rho <= tau
    _paint(within, index[inner], side)
    undecided = ~inner & ~(distance - rho > tau)
    if rho == 0 and undecided.any():
        raise FloatingPointError("distance is NaN at a dense grid point")
    return _Pending(index[undecided], centre[undecided], distance[undecided], closest[undecided])


def _children(
    pending: _Pending,
    parent_side: np.ndarray,
    side: np.ndarray,
    grid: DenseGrid,
    occupied: np.ndarray,
    tau: float,
    compiled: bool = False,
):
    """Child blocks (`side` points per axis) of the pending blocks that hold inside points,
    and which of them lie wholly within tau of their parent's closest point p.

    d(x) <= |x - p| for every x; its largest value over a child block, reached at a corner,
    is sqrt(sum over axes of (|p - c| + h)^2) with c the child's centre and h its half-extent.
    """
    factor = parent_side // side  # 1 or 2 children along each axis
    if compiled:  # the same children, order and arithmetic in one loop
        return kernels.child_blocks(
            np.ascontiguousarray(pending.index, np.int64),
            pending.closest - pending.centre,  # a new array: contiguous
            np.asarray(factor, np.int64),
            np.asarray(side, np.int64),
            np.asarray(grid.step, np.float64),
            occupied.reshape(-1),
            np.asarray(occupied.shape, np.int64),
            float(tau),
        )
    half = 0.5 * (side - 1) * grid.step
    relative = pending.closest - pending.centre
    upper2 = np.zeros((len(relative), 1))
    for axis, count in enumerate(factor):
        # Child centre minus parent centre along this axis: 0, or -/+ half a child side.
        shift = (np.arange(count) + 0.5 - 0.5 * count) * side[axis] * grid.step[axis]
        reach2 = (np.abs(relative[:, axis, None] - shift) + half[axis]) ** 2
        # Children in the order of itertools.product over the axes.
        upper2 = (upper2[:, :, None] + reach2[:, None, :]).reshape(len(relative), -1)
    offsets = _box_offsets(factor)
    index = (pending.index[:, None, :] * factor + offsets[None]).reshape(-1, len(factor))
    keep = occupied[tuple(index.T)]
    inner = keep & (upper2.ravel() <= tau * tau)
    return index[keep & ~inner], index[inner]


def within_tau(
    surface: SurfaceIndex, inside: np.ndarray, tau: float, grid: DenseGrid
) -> np.ndarray:
    """Bool array (grid.shape): d(x) <= tau, decided exactly wherever `inside` is True.

    Where `inside` is False the value is False or True (such points are never in the band).
    Blocks are decided coarse to fine down to `point_level`; the points of blocks still
    undecided there are decided one by one (`_decide_points`).
    """
    if not inside.any():
        return inside  # nothing to decide (a slab this surface does not reach)
    sides = block_sides(grid.shape, grid.step)
    occupied = _occupancy(inside, sides)
    within = np.zeros(occupied[0].shape, bool)
    level = len(sides) - 1
    last = point_level(sides, grid.step, tau)
    pending = _decide(surface, np.argwhere(occupied[level]), sides[level], grid, tau, within)
    while len(pending.index) and level > last:
        level -= 1
        todo, inner = _children(
            pending, sides[level + 1], sides[level], grid, occupied[level], tau, surface.compiled
        )
        _paint(within, inner, sides[level])
        pending = _decide(surface, todo, sides[level], grid, tau, within)
    for start in range(0, len(pending.index), POINT_STAGE_BLOCKS):
        part = slice(start, start + POINT_STAGE_BLOCKS)
        _decide_points(surface, pending.rows(part), sides[level], grid, tau, occupied[0], within)
    return within[tuple(slice(0, n) for n in inside.shape)]


POINT_CELL_PER_TAU = 0.4
"""Largest side of the blocks whose points are decided one by one, as a fraction of tau (0.8
mm for tau = 2 mm). Finer, more blocks and their corners are queried; coarser, the corners'
bound is looser and more points are queried. On case 1 (90 pairs, BIoU alone): 8.16 M
queries with the point stage off, 6.45 M at 0.2 and 0.3, 4.55 M at 0.4 and 0.6."""

POINT_STAGE_BLOCKS = 1 << 15
"""Blocks per step of the point stage (bounds its memory: about 64 points per block)."""


def point_level(sides: list[np.ndarray], step: np.ndarray, tau: float) -> int:
    """The coarsest level whose blocks span at most POINT_CELL_PER_TAU * tau mm per axis."""
    fits = [
        level for level, side in enumerate(sides) if np.max(side * step) <= POINT_CELL_PER_TAU * tau
    ]
    return max(fits, default=0)


def _box_offsets(counts) -> np.ndarray:
    """(prod(counts), dim) integer offsets 0..counts-1 per axis, in itertools.product order
    (the order every block's points, children and cell corners are listed in)."""
    return np.array(list(itertools.product(*(range(count) for count in counts))))


def _decide_points(
    surface: SurfaceIndex,
    pending: _Pending,
    side: np.ndarray,
    grid: DenseGrid,
    tau: float,
    inside: np.ndarray,
    within: np.ndarray,
) -> None:
    """Decide every inside point of the pending blocks on its own; paint those within tau.

    The block of `side` points from index i * side lies in the closed cell from i * side to
    (i + 1) * side, whose corners y_j are queried once each (shared with neighbouring cells).
    For a point x of the cell with multilinear weights w_j(x) (a convex combination: x =
    sum w_j y_j), two bounds decide most points without a query of their own:

    * out: d^2 - |.|^2 is concave for the distance d to any set (a minimum of affine
      functions of x), so d(x)^2 >= sum_j w_j d(y_j)^2 - sum_j w_j |y_j - x|^2, and the last
      sum is sum over axes of t (1 - t) H^2 (t: x's fraction along the axis, H: cell side).
      With d(x)^2 above (tau + slack)^2, x is out; a corner with nothing within the search
      radius R counts as d = R, a lower bound.
    * in: every known closest point p (the block centre's, the corners') gives d(x) <= |x - p|.

    The rest are decided like blocks of one point (`_decide`). Both bounds are
    evaluated for all points of a block at once: x = b + o (b: the block's first point, o: the
    point's offset in the block), so |x - p|^2 = |b - p|^2 + 2 (b - p).o + |o|^2.
    """
    dim = len(side)
    corner_offsets = _box_offsets([2] * dim)
    corners = (pending.index[:, None, :] + corner_offsets) * side  # (k, 2^dim, dim)
    reach = tau + float(np.linalg.norm(side * grid.step))
    dims = np.asarray(inside.shape) + 1  # far corners of the last blocks lie one past the end
    flat = np.ravel_multi_index(tuple(corners.reshape(-1, dim).T), dims)
    unique, inverse = np.unique(flat, return_inverse=True)
    found = surface.query(
        grid.origin + np.column_stack(np.unravel_index(unique, dims)) * grid.step, reach
    )
    distance = np.minimum(found.distance, reach)[inverse].reshape(corners.shape[:2])
    closest = found.point[inverse].reshape(corners.shape)  # NaN where nothing within reach
    if surface.compiled:  # the same bounds, compiled; the points they leave, as below
        left = kernels.point_bounds(
            np.ascontiguousarray(pending.index, np.int64),
            np.asarray(side, np.int64),
            np.asarray(grid.step, np.float64),
            float(tau),
            APPROXIMATION_SLACK,
            inside.reshape(-1),
            within.reshape(-1),
            np.asarray(inside.shape, np.int64),
            np.ascontiguousarray(distance),
            np.ascontiguousarray(closest),
            np.ascontiguousarray(pending.closest),
            np.asarray(grid.origin, np.float64),
        )
        _decide(surface, left, np.ones_like(side), grid, tau, within)
        return

    offsets = _box_offsets(side)  # (q, dim)
    fraction = offsets / side
    weights = np.prod(
        np.where(corner_offsets == 1, fraction[:, None, :], 1 - fraction[:, None, :]), axis=2
    )  # (q, 2^dim)
    spread = (fraction * (1 - fraction) * (side * grid.step) ** 2).sum(axis=1)
    out = (distance * distance) @ weights.T - spread > (tau + APPROXIMATION_SLACK) ** 2

    # Only the inside points the out bound leaves open matter from here on.
    open_ = _block_points(inside, pending.index, side) & ~out
    rows = np.flatnonzero(open_.any(axis=1))
    open_, index = open_[rows], pending.index[rows]
    first = grid.origin + index * side * grid.step  # (k, dim)
    offset_mm = offsets * grid.step
    upper2 = np.full(open_.shape, np.inf)
    for point in (pending.closest[rows], *closest[rows].transpose(1, 0, 2)):
        reach_p = first - point  # NaN rows (no closest point) never win the fmin
        np.fmin(
            upper2,
            (reach_p * reach_p).sum(axis=1)[:, None]
            + 2 * reach_p @ offset_mm.T
            + (offset_mm * offset_mm).sum(axis=1),
            out=upper2,
        )
    # The expansion rounds at about 1e-12 mm^2: a margin keeps "in" rigorous.
    in_ = open_ & (upper2 <= tau * tau - 1e-9)
    view = _block_view(within, side)  # pending blocks were never painted: assign, no OR
    view[_blocks_at(index)] = in_.reshape(len(index), *side)
    block, point = np.nonzero(open_ & ~in_)  # the rest, each point a block of its own
    _decide(surface, index[block] * side + offsets[point], np.ones_like(side), grid, tau, within)


def _block_points(values: np.ndarray, index: np.ndarray, side: np.ndarray) -> np.ndarray:
    """(k, q) values of the points of the blocks `index`, in itertools.product order."""
    return _block_view(values, side)[_blocks_at(index)].reshape(len(index), -1)


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
    implementation: str = "compiled",
) -> BandCounts:
    """Dense points in A_b, B_b and both, and in A, B and both.

    surface_x = (vertices, cells), closed; index_x its `SurfaceIndex` (built if not given).
    Every point is decided exactly on its own, so counting slab by slab changes nothing.
    """
    indexes = [
        SurfaceIndex(*surface, implementation) if index is None else index
        for surface, index in ((surface_a, index_a), (surface_b, index_b))
    ]
    compiled = indexes[0].compiled  # given indexes carry the implementation
    rasters = [SurfaceRaster(*surface, compiled=compiled) for surface in (surface_a, surface_b)]
    counts = np.zeros(6, np.int64)
    for start, stop in slabs(grid, SLAB_POINTS):
        slab = grid.slices(start, stop)
        flags = []
        for raster, index in zip(rasters, indexes, strict=True):
            inside = raster.inside(grid, start, stop)
            flags += [inside, within_tau(index, inside, tau, slab)]
        counts += _slab_counts(*flags, compiled=compiled)
    return BandCounts(*(int(count) for count in counts))


def _slab_counts(inside_a, within_a, inside_b, within_b, *, compiled: bool) -> tuple[int, ...]:
    """The six counts of BandCounts over one slab, from the inside and within-tau flags."""
    if compiled:  # one pass, no temporaries; the kernel takes 3D arrays
        counts = kernels.band_counts(
            *(
                flag.reshape(-1, *flag.shape[-2:])
                for flag in (inside_a, within_a, inside_b, within_b)
            )
        )
        return tuple(int(count) for count in counts)
    band_a, band_b = inside_a & within_a, inside_b & within_b
    return tuple(
        int(np.count_nonzero(flags))
        for flags in (band_a, band_b, band_a & band_b, inside_a, inside_b, inside_a & inside_b)
    )
