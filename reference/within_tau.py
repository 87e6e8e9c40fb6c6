"""Which points of a dense grid lie within tau of a surface: d_X(x) <= tau, decided exactly.

Only inside points matter (module `biou` counts X_b = {x in X : d_X(x) <= tau}), and only
near the level set d = tau is an exact distance needed. The grid is padded with outside points
to whole blocks (sides of 2^k points, near cubes in mm: `block_sides`) and decided coarse to
fine. For a block with centre c and half-diagonal rho, d is 1-Lipschitz, so d(x) lies in
[d(c) - rho, d(c) + rho]: the block is all in if d(c) + rho <= tau, all out if d(c) - rho >
tau. The closest point p of c on the surface also gives d(x) <= |x - p| for every x: a child
block whose farthest corner is within tau of its parent's p is all in without a query. Only
undecided blocks are split, down to blocks of about 0.4 tau; their points are then decided one
by one, most of them from exact distances at the blocks' corners (concavity of d^2 - |x|^2 for
out, the known closest points for in: `_decide_points`), the rest by their own exact distance.
Blocks without inside points are never queried; every queried block's exact float64 distance
is measured, and kept with p for its children.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numba import njit

from reference.closest import SurfaceIndex
from reference.dense_grid import DenseGrid
from reference.elements import JIT

TOP_LEVEL_BLOCKS = 4096
"""Upper bound on the number of blocks evaluated first; sets the size of the top blocks."""


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


OUT_SLACK = 1e-3
"""mm. The point stage's out bound decides a point only where its lower bound on d^2 exceeds
(tau + OUT_SLACK)^2; the points nearer tau get their own exact distance."""


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
    hit = surface.query(centre, tau + rho)  # exact: its closest points serve the children
    distance, closest = hit.distance, hit.point
    inner = distance + rho <= tau
    _paint(within, index[inner], side)
    undecided = ~inner & ~(distance - rho > tau)
    if rho == 0 and undecided.any():
        raise FloatingPointError("distance is NaN at a dense grid point")
    return _Pending(index[undecided], centre[undecided], distance[undecided], closest[undecided])


def _child_blocks(
    pending: _Pending,
    parent_side: np.ndarray,
    side: np.ndarray,
    grid: DenseGrid,
    occupied: np.ndarray,
    tau: float,
):
    """Child blocks (`side` points per axis) of the pending blocks that hold inside points,
    and which of them lie wholly within tau of their parent's closest point p (`child_blocks`).

    d(x) <= |x - p| for every x; its largest value over a child block, reached at a corner,
    is sqrt(sum over axes of (|p - c| + h)^2) with c the child's centre and h its half-extent.
    """
    return child_blocks(
        np.ascontiguousarray(pending.index, np.int64),
        pending.closest - pending.centre,  # a new array: contiguous
        np.asarray(parent_side // side, np.int64),  # 1 or 2 children along each axis
        np.asarray(side, np.int64),
        np.asarray(grid.step, np.float64),
        occupied.reshape(-1),
        np.asarray(occupied.shape, np.int64),
        float(tau),
    )


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
        todo, inner = _child_blocks(
            pending, sides[level + 1], sides[level], grid, occupied[level], tau
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

    Both bounds are evaluated by `point_bounds`, one loop over the points; the rest are
    decided like blocks of one point (`_decide`).
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
    left = point_bounds(
        np.ascontiguousarray(pending.index, np.int64),
        np.asarray(side, np.int64),
        np.asarray(grid.step, np.float64),
        float(tau),
        OUT_SLACK,
        inside.reshape(-1),
        within.reshape(-1),
        np.asarray(inside.shape, np.int64),
        np.ascontiguousarray(distance),
        np.ascontiguousarray(closest),
        np.ascontiguousarray(pending.closest),
        np.asarray(grid.origin, np.float64),
    )
    _decide(surface, left, np.ones_like(side), grid, tau, within)


@njit(**JIT)
def point_bounds(
    index,
    side,
    step,
    threshold,
    slack,
    inside,
    within,
    shape,
    corner_distance,
    corner_closest,
    centre_closest,
    origin,
):
    """The bounds of `_decide_points`, one loop over the points.

    index (k, dim): pending blocks of `side` points per axis; inside, within: the padded
    grid's flags, flattened (C order, `shape` per axis); corner_distance (k, 2^dim) and
    corner_closest (k, 2^dim, dim): exact distance (capped at the search radius) and closest
    point (NaN: none) at the blocks' cell corners, in itertools.product order;
    centre_closest (k, dim): the block centres' closest points. Every inside point of the
    blocks the bounds decide gets its answer: out by the concavity bound, in (within = True)
    by a known closest point. Returns the grid indices (n, dim) of the points they leave open.
    """
    count, dim = index.shape
    n_corners = corner_distance.shape[1]
    out_bound = (threshold + slack) * (threshold + slack)
    in_bound = threshold * threshold - 1e-9
    strides = np.ones(dim, np.int64)
    for k in range(dim - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    points = 1
    for k in range(dim):
        points *= side[k]
    # Per point of a block (offsets in itertools.product order): its multilinear weights of
    # the cell corners and its spread sum_k t_k (1 - t_k) H_k^2, the same for every block.
    offsets = np.empty((points, dim), np.int64)
    weights = np.empty((points, n_corners))
    spread = np.zeros(points)
    flat_offset = np.zeros(points, np.int64)
    for q in range(points):
        rest = q
        for k in range(dim - 1, -1, -1):
            offsets[q, k] = rest % side[k]
            rest //= side[k]
        for k in range(dim):
            t = offsets[q, k] / side[k]
            extent = side[k] * step[k]
            spread[q] += t * (1.0 - t) * extent * extent
            flat_offset[q] += offsets[q, k] * strides[k]
        for j in range(n_corners):
            weight = 1.0
            for k in range(dim):
                t = offsets[q, k] / side[k]
                weight *= t if (j >> (dim - 1 - k)) & 1 else 1.0 - t
            weights[q, j] = weight
    squared = np.empty(n_corners)
    searched = 0
    left = np.empty((max(count, 16), dim), np.int64)  # grown by doubling: usually a few %
    x = np.zeros(dim)
    for b in range(count):
        base = 0
        for k in range(dim):
            base += index[b, k] * side[k] * strides[k]
        for j in range(n_corners):
            squared[j] = corner_distance[b, j] * corner_distance[b, j]
        for q in range(points):
            flat = base + flat_offset[q]
            if not inside[flat]:
                continue
            # Out: d^2 >= sum_j w_j d_j^2 - sum_k t_k (1 - t_k) H_k^2 (concavity).
            weighted = 0.0
            for j in range(n_corners):
                weighted += weights[q, j] * squared[j]
            if weighted - spread[q] > out_bound:
                continue
            for k in range(dim):
                x[k] = origin[k] + (index[b, k] * side[k] + offsets[q, k]) * step[k]
            # In: d(x) <= |x - p| for every known closest point p.
            near2 = np.inf
            for j in range(n_corners + 1):
                gap2 = 0.0
                for k in range(dim):
                    p = centre_closest[b, k] if j == n_corners else corner_closest[b, j, k]
                    gap2 += (x[k] - p) * (x[k] - p)
                if gap2 < near2:  # NaN (no closest point) never wins
                    near2 = gap2
            if near2 <= in_bound:
                within[flat] = True
                continue
            if searched == len(left):
                grown = np.empty((2 * len(left), dim), np.int64)
                grown[:searched] = left
                left = grown
            for k in range(dim):
                left[searched, k] = index[b, k] * side[k] + offsets[q, k]
            searched += 1
    return left[:searched].copy()


@njit(**JIT)
def child_blocks(index, relative, factor, side, step, occupied, shape, threshold):
    """The child blocks of `_child_blocks`: (todo, inner), the grid indices (n, dim) of the
    children of the blocks `index` (k, dim) that hold inside points (`occupied`, the level's
    flags flattened, C order, `shape` per axis), split into those to query and those whose
    farthest corner is within `threshold` of their parent's closest point (relative: that
    point minus the parent's centre, mm). `factor`: children per axis (1 or 2), `side`: the
    children's side in points."""
    count, dim = index.shape
    children = 1
    for k in range(dim):
        children *= factor[k]
    strides = np.ones(dim, np.int64)
    for k in range(dim - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    # Per child of a block (itertools.product order, the last axis fastest): its offset in
    # children per axis, and its centre minus the parent's, mm; per axis the half-extent.
    digit = np.empty((children, dim), np.int64)
    shift = np.empty((children, dim))
    half = np.empty(dim)
    for c in range(children):
        rest = c
        for k in range(dim - 1, -1, -1):
            digit[c, k] = rest % factor[k]
            rest //= factor[k]
            shift[c, k] = ((digit[c, k] + 0.5) - 0.5 * factor[k]) * side[k] * step[k]
    for k in range(dim):
        half[k] = 0.5 * (side[k] - 1) * step[k]
    limit = threshold * threshold
    todo = np.empty((count * children, dim), np.int64)
    inner = np.empty((count * children, dim), np.int64)
    n_todo, n_inner = 0, 0
    for b in range(count):
        first = 0
        for k in range(dim):
            first += index[b, k] * factor[k] * strides[k]
        for c in range(children):
            flat = first
            for k in range(dim):
                flat += digit[c, k] * strides[k]
            if not occupied[flat]:
                continue
            upper2 = 0.0
            for k in range(dim):
                reach = abs(relative[b, k] - shift[c, k]) + half[k]
                upper2 += reach * reach
            if upper2 <= limit:
                for k in range(dim):
                    inner[n_inner, k] = index[b, k] * factor[k] + digit[c, k]
                n_inner += 1
            else:
                for k in range(dim):
                    todo[n_todo, k] = index[b, k] * factor[k] + digit[c, k]
                n_todo += 1
    return todo[:n_todo].copy(), inner[:n_inner].copy()
