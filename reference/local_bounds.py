"""Bounds of d over the pieces of an element from the other surface's elements within its
reach: a subdivision bounded without a single search.

Let T be an element of X, c its centre, and U >= d over T (module `bounds`). The closest point
of any x in T lies within R = U + r of c (r: T's radius), so the set E of Y's elements within R
of c holds it: over T, d(x) = min over e in E of dist(x, e). Cut T into N^2 congruent pieces S
(N pieces along each edge; N in 2D), with corners p_j and centre c_S. On each piece, two affine
functions bound d, given by their values at the corners:

* below: dist(., e) is convex, so it lies above its tangent plane at c_S, g . (x - q) with q
  the closest point of c_S on e and g the unit vector from q to c_S (if c_S lies on e, 0): the
  half-space g . (y - q) <= 0 holds e. So d >= the least of these affine functions over E, a
  concave function, which lies above its chord: the interpolant of min over E of
  g . (p_j - q). An e can lower a corner's value only if its distance from c_S, at least
  dist(c, e) - |c_S - c| or the distance to its bounding ball, is within that value plus r_S
  (S's radius): E is read nearest first and left at the first that cannot.
* above: for any e, d <= dist(., e), convex, so below its chord: the interpolant of
  dist(p_j, e), with e the closest element of c_S (found by the step above).

Both are second order in the piece's size where d is smooth, and take no query. On lattice
meshes at about a voxel the closest element changes within an element (a step edge of the
other surface), where bounds from an element's corners and centre alone are first order
(docs/reference.md, "What the brackets prove"). Rounding: `tolerance` is taken off every lower
value and added to every upper one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.elements import JIT, corner, on_element, squared_gap

DIVISIONS = 2
"""N: pieces along each edge of an element (N^2 pieces of a triangle, N of a segment)."""


def subdivision(corner_count: int, divisions: int = DIVISIONS) -> tuple[np.ndarray, np.ndarray]:
    """(weights (P, n), pieces (S, n)): the points of the uniform subdivision of an element with
    `corner_count` corners as barycentric weights of its corners, and each congruent piece as
    indices into those points."""
    if corner_count == 2:
        weights = np.array([[1 - i / divisions, i / divisions] for i in range(divisions + 1)])
        pieces = np.array([[i, i + 1] for i in range(divisions)])
        return weights, pieces
    lattice = [(i, j) for i in range(divisions + 1) for j in range(divisions + 1 - i)]
    slot = {point: k for k, point in enumerate(lattice)}
    weights = np.array(
        [[1 - (i + j) / divisions, i / divisions, j / divisions] for i, j in lattice]
    )
    pieces = [(slot[i, j], slot[i + 1, j], slot[i, j + 1]) for i, j in lattice if i + j < divisions]
    pieces += [
        (slot[i + 1, j], slot[i + 1, j + 1], slot[i, j + 1])
        for i, j in lattice
        if i + j < divisions - 1
    ]
    return weights, np.array(pieces)


def local_bounds(elements, reach_radius, neighbours, tolerance: float, divisions: int = DIVISIONS):
    """Per element (corners (k, n, dim)), its pieces and the affine bounds of d over each
    (module docstring): (corners (k, S, n, dim), floor (k, S, n), ceiling (k, S, n)), the
    bounds as their values at the pieces' corners, NaN where no element of Y lies within the
    element's `reach_radius` R = U + r. `neighbours`: the bucketed elements of Y
    (`bounds.Neighbours`)."""
    weights, pieces = subdivision(elements.shape[1], divisions)
    corners = np.einsum("spn,knd->kspd", weights[pieces], elements)
    floor, ceiling = _local_bounds(
        np.ascontiguousarray(elements, dtype=np.float64),
        np.ascontiguousarray(reach_radius, dtype=np.float64),
        weights,
        np.ascontiguousarray(pieces, dtype=np.int64),
        neighbours.corners,
        neighbours.balls,
        neighbours.grid,
        neighbours.reach,
        tolerance,
    )
    return corners, floor, ceiling


@njit(**JIT)
def members_near(point, half, grid, out):
    """The elements of the buckets of the grid (low, step, dims, start, member:
    `bounds.Neighbours.grid`) that meet the box of half-side `half` around `point` (three
    coordinates): their count k, with out[:k] the elements (a scratch array of Y's size)."""
    low, step, dims, start, member = grid
    lower = np.empty(3, np.int64)
    upper = np.empty(3, np.int64)
    for k in range(3):
        lower[k] = max(0, int(math.floor((point[k] - half - low[k]) / step[k])))
        upper[k] = min(dims[k] - 1, int(math.floor((point[k] + half - low[k]) / step[k])))
    count = 0
    for a in range(lower[0], upper[0] + 1):
        for b in range(lower[1], upper[1] + 1):
            row = (a * dims[1] + b) * dims[2]
            for s in range(start[row + lower[2]], start[row + upper[2] + 1]):
                out[count] = member[s]
                count += 1
    return count


@njit(**JIT)
def _within(point, radius, corners, balls, grid, reach, found, gaps):
    """The elements of Y within `radius` of `point` (exact distance), nearest first: their
    count k, with found[:k] the elements and gaps[:k] the distances (scratch arrays of Y's
    size)."""
    px, py, pz = point[0], point[1], point[2]
    boxed = members_near(point, radius + reach, grid, found)  # centroids within reach of it
    count = 0
    for slot in range(boxed):
        e = found[slot]
        cx, cy, cz, spread = balls[e, 0], balls[e, 1], balls[e, 2], balls[e, 3]
        if squared_gap(px, py, pz, cx, cy, cz) > (radius + spread) * (radius + spread):
            continue  # its bounding ball lies beyond the radius
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        gap = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
        if gap <= radius:
            found[count], gaps[count] = e, gap
            count += 1
    order = np.argsort(gaps[:count])
    found[:count], gaps[:count] = found[:count][order], gaps[:count][order]
    return count


@njit(**JIT)
def _chord(points, piece, corners, e, values):
    """values[j] = dist(p_j, e) at the corners p_j of a piece."""
    for slot in range(len(piece)):
        j = piece[slot]
        px, py, pz = points[j, 0], points[j, 1], points[j, 2]
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        values[slot] = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))


@njit(**JIT)
def _tangent_floor(points, piece, corners, balls, near, gaps, count, centre, hint, values):
    """values[j] = min over the elements near[:count] (nearest the element's centre first, at
    distances gaps) of their tangent planes at the piece's centre, at its corner p_j. Returns
    the element closest to the piece's centre. `hint` (an element of near, likely the
    closest) is taken first, so that its values let the others be skipped: an element whose
    bounding ball lies farther from the piece's centre than every corner's value plus the
    piece's radius cannot lower one."""
    n = len(piece)
    px = py = pz = 0.0
    for j in piece:
        px, py, pz = px + points[j, 0] / n, py + points[j, 1] / n, pz + points[j, 2] / n
    radius = 0.0
    for j in piece:
        radius = max(
            radius, math.sqrt(squared_gap(px, py, pz, points[j, 0], points[j, 1], points[j, 2]))
        )
    offset = math.sqrt(squared_gap(px, py, pz, centre[0], centre[1], centre[2]))
    values[:n] = np.inf
    closest, best = -1, np.inf
    for k in range(-1, count):
        e = hint if k < 0 else near[k]
        if k >= 0:
            if e == hint:
                continue
            reach = values[:n].max() + radius
            if gaps[k] - offset > reach:
                break  # this and every farther element lie above every corner's value
            apart = squared_gap(px, py, pz, balls[e, 0], balls[e, 1], balls[e, 2])
            if apart > (reach + balls[e, 3]) * (reach + balls[e, 3]):
                continue
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        gap = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
        if gap < best:
            closest, best = e, gap
        for slot in range(n):
            j = piece[slot]
            if gap > 0.0:
                value = (
                    (points[j, 0] - qx) * (px - qx)
                    + (points[j, 1] - qy) * (py - qy)
                    + (points[j, 2] - qz) * (pz - qz)
                ) / gap
            else:
                value = 0.0  # the piece's centre lies on e: dist(., e) >= 0 is all it gives
            values[slot] = min(values[slot], value)
    return closest


@njit(**JIT)
def _local_bounds(
    elements,
    reach_radius,
    weights,
    pieces,
    corners,
    balls,
    grid,
    reach,
    tolerance,
):
    """`local_bounds`, compiled: (floor, ceiling), each (k, S, n)."""
    count, n, dim = elements.shape
    floor = np.full((count, len(pieces), n), np.nan)
    ceiling = np.full((count, len(pieces), n), np.nan)
    near = np.empty(corners.shape[0], np.int64)
    gaps = np.empty(corners.shape[0])
    points = np.zeros((weights.shape[0], 3))
    below, above = np.empty(n), np.empty(n)
    centre = np.zeros(3)
    for i in range(count):
        points[:] = 0.0
        centre[:] = 0.0
        for j in range(n):
            x, y, z = corner(elements, i, j)
            centre += np.array((x, y, z)) / n
            for p in range(weights.shape[0]):
                points[p, 0] += weights[p, j] * x
                points[p, 1] += weights[p, j] * y
                points[p, 2] += weights[p, j] * z
        found = _within(centre, reach_radius[i], corners, balls, grid, reach, near, gaps)
        if found == 0:
            continue
        closest = near[0]  # a first guess at each piece's closest element: its neighbour's
        for s in range(len(pieces)):
            closest = _tangent_floor(
                points, pieces[s], corners, balls, near, gaps, found, centre, closest, below
            )
            _chord(points, pieces[s], corners, closest, above)
            floor[i, s] = below - tolerance
            ceiling[i, s] = above + tolerance
    return floor, ceiling
