"""Bounds of d over the pieces of an element from the other surface's elements within its
reach: a subdivision bounded without a single search.

Let T be an element of X, c its centre, and U >= d over T (module `bounds`). The closest point
of any x in T lies within R = U + r of c (r: T's radius), so the set E of Y's elements within R
of c holds it: over T, d(x) = min over e in E of dist(x, e). On each of T's midpoint children
S (the pieces; `distance_pass.split_elements`), with corners p_j and centre c_S, two affine
functions bound d, given by their values at the corners:

* below: dist(., e) is convex, so it lies above its tangent plane at c_S, g . (x - q) with q
  the closest point of c_S on e and g the unit vector from q to c_S: the half-space
  g . (y - q) <= 0 holds e. Where c_S lies within `TANGENT_GAP` of e, g is mostly rounding,
  and the cone dist(c_S, e) - |x - c_S| (1-Lipschitz, also concave) stands for the plane.
  So d >= the least of these functions over E, a concave function, which lies above its
  chord: the interpolant of their least value at the corners p_j. An e can lower a
  corner's value only if its distance from c_S, at least dist(c, e) - |c_S - c| or the
  distance to its bounding ball, is within that value plus r_S (S's radius): E is read
  nearest first and left at the first that cannot. Any concave lower bound of dist(., e)
  serves for e: an e whose tangent plane at c (its foot there found with E) already lies at
  or above the least so far at every point used, c_S among them, stands with that plane and
  lowers nothing, with no closest point sought from c_S.
* above: for any e, d <= dist(., e), convex, so below its chord: the interpolant of
  dist(p_j, e), with e the closest element of c_S (found by the step above).

Both meet d at c_S: a tangent plane (or cone) equals its distance function there, so the
least of them is d(c_S) = dist(c_S, e). Each is concave (below) or convex (above) over any
simplex in S, so it lies above or below its chord there too: over the four triangles the
edge midpoints cut S into, the middle one fanned at c_S (it has S's centre), the mean of d
over S lies between the bounds' values at S's corners, edge midpoints and centre weighted
1/12, 2/9 and 1/12 (`integration_rule`; a segment fanned at its midpoint: 1/4 and 1/2).
u - ell is convex and 0 at c_S, so this mean's bracket is at most 11/12 (a segment's 1/2) of the
chords', and under half of it where d is smooth. All are second order in the piece's size
where d is smooth, and take no query. On lattice meshes at about a voxel the closest element
changes within an element (a step edge of the other surface), where bounds from an element's
corners and centre alone are first order (docs/reference.md, "What the brackets prove").
Rounding: `tolerance` is taken off every lower value and added to every upper one."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.elements import JIT, corner, on_element, squared_gap

TANGENT_GAP = 1e-4
"""mm. Nearer than this to e, the direction from q to c_S is mostly rounding (its error
about 1e-16 of the coordinates over the gap, times the distance to the piece's points), so
the tangent plane is not trusted: the cone dist(c_S, e) - |x - c_S| stands for it."""


@njit(inline="always", **JIT)
def tangent_bound(vx, vy, vz, px, py, pz, qx, qy, qz, length):
    """A lower bound of dist(v, e), concave in v: the tangent plane of dist(., e) at p (q:
    p's closest point on e, length = |p - q|), or within `TANGENT_GAP` of e, where the
    tangent's direction is mostly rounding, the cone |p - q| - |v - p|. Both equal
    dist(p, e) at v = p."""
    if length > TANGENT_GAP:
        return ((vx - qx) * (px - qx) + (vy - qy) * (py - qy) + (vz - qz) * (pz - qz)) / length
    return length - math.sqrt(squared_gap(vx, vy, vz, px, py, pz))


def integration_rule(corner_count: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(points (m, n), weights (m,), centre weight): where the bounds of a piece are evaluated,
    as barycentric weights of its corners (the corners first), and the weights of their values
    there and at the centre whose sums bound the mean of d (module docstring). A triangle: its
    edge midpoints cut it into four, the middle one fanned at the centre: corners 1/12,
    midpoints 2/9, centre 1/12. A segment: fanned at its midpoint, corners 1/4, centre 1/2."""
    if corner_count == 2:
        return np.eye(2), np.full(2, 0.25), 0.5
    midpoints = 0.5 * (np.ones((3, 3)) - np.eye(3))
    return np.vstack([np.eye(3), midpoints]), np.array([1 / 12] * 3 + [2 / 9] * 3), 1 / 12


def local_bounds(elements, pieces, reach_radius, neighbours, tolerance: float):
    """Per element (corners (k, n, dim)) and its pieces (corners (k, S, n, dim)), the bounds of
    d over each piece (module docstring): (floor (k, S, n), ceiling (k, S, n), means (2, k,
    S)), the affine bounds as their values at the pieces' corners and the lower and upper
    bounds of the mean of d over each piece, NaN where no element of Y lies within the
    element's `reach_radius` R = U + r. `neighbours`: the bucketed elements of Y
    (`bounds.Neighbours`)."""
    rule, rule_weights, centre_weight = integration_rule(elements.shape[1])
    return _local_bounds(
        np.ascontiguousarray(elements, dtype=np.float64),
        np.ascontiguousarray(pieces, dtype=np.float64),
        np.ascontiguousarray(reach_radius, dtype=np.float64),
        rule,
        rule_weights,
        centre_weight,
        neighbours.corners,
        neighbours.balls,
        neighbours.grid,
        neighbours.reach,
        tolerance,
    )


@njit(inline="always", **JIT)
def ball_beyond(px, py, pz, balls, e, radius):
    """Whether element e's bounding ball (balls[e]: centroid padded to three axes, radius)
    lies wholly farther than `radius` from p: then so does e."""
    reach = radius + balls[e, 3]
    return squared_gap(px, py, pz, balls[e, 0], balls[e, 1], balls[e, 2]) > reach * reach


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
def _within(point, radius, corners, balls, grid, reach, found, gaps, feet):
    """The elements of Y within `radius` of `point` (exact distance), nearest first: their
    count k, with found[:k] the elements and gaps[:k] the distances, and feet[e] the closest
    point of `point` on each such e (scratch arrays of Y's size)."""
    px, py, pz = point[0], point[1], point[2]
    boxed = members_near(point, radius + reach, grid, found)  # centroids within reach of it
    count = 0
    for slot in range(boxed):
        e = found[slot]
        if ball_beyond(px, py, pz, balls, e, radius):
            continue
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        gap = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
        if gap <= radius:
            found[count], gaps[count] = e, gap
            feet[e, 0], feet[e, 1], feet[e, 2] = qx, qy, qz
            count += 1
    order = np.argsort(gaps[:count])
    found[:count], gaps[:count] = found[:count][order], gaps[:count][order]
    return count


@njit(**JIT)
def _chord(at, corners, e, values):
    """values[j] = dist(at[j], e)."""
    for j in range(len(at)):
        px, py, pz = at[j, 0], at[j, 1], at[j, 2]
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        values[j] = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))


@njit(**JIT)
def _tangent_floor(
    at, middle, radius, corners, balls, near, gaps, feet, count, centre, hint, values
):
    """values[j] = min over the elements near[:count] (nearest the element's centre first, at
    distances gaps) of their tangent planes at a piece's centre `middle`, at its points at[j]
    (within `radius` of the centre). Returns the element closest to the piece's centre and its
    distance, d there (an element passed over lies farther: its distance from the centre
    exceeds a point's value plus the radius, which exceeds the least distance). `hint` (an
    element of near, likely the closest) is taken first, so that its values let the others be
    skipped: an element whose bounding ball lies farther from the piece's centre than every
    point's value plus the radius cannot lower one, and one whose tangent plane at the
    element's centre (its foot there in feet[e]) lies at or above the values at every point
    and the least distance at the piece's centre takes that plane instead (module
    docstring): it lowers nothing, and needs no closest point."""
    px, py, pz = middle[0], middle[1], middle[2]
    offset = math.sqrt(squared_gap(px, py, pz, centre[0], centre[1], centre[2]))
    values[:] = np.inf
    closest, best = -1, np.inf
    for k in range(-1, count):
        e = hint if k < 0 else near[k]
        if k >= 0:
            if e == hint:
                continue
            reach = values.max() + radius
            if gaps[k] - offset > reach:
                break  # this and every farther element lie above every point's value
            if ball_beyond(px, py, pz, balls, e, reach):
                continue
            if _lowers_nothing(at, middle, centre, feet[e], gaps[k], values, best):
                continue
        _, qx, qy, qz = on_element(px, py, pz, corners, e)
        gap = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
        if gap < best:
            closest, best = e, gap
        for j in range(len(at)):
            value = tangent_bound(at[j, 0], at[j, 1], at[j, 2], px, py, pz, qx, qy, qz, gap)
            values[j] = min(values[j], value)
    return closest, best


@njit(inline="always", **JIT)
def _lowers_nothing(at, middle, centre, foot, length, values, best):
    """Whether the tangent bound of dist(., e) at the element's centre (`tangent_bound`, e's
    foot there `foot`, at distance `length`) is at least values[j] at every point at[j] and
    at least `best` at the piece's centre `middle`."""
    cx, cy, cz, qx, qy, qz = centre[0], centre[1], centre[2], foot[0], foot[1], foot[2]
    if tangent_bound(middle[0], middle[1], middle[2], cx, cy, cz, qx, qy, qz, length) < best:
        return False
    for j in range(len(at)):
        if tangent_bound(at[j, 0], at[j, 1], at[j, 2], cx, cy, cz, qx, qy, qz, length) < values[j]:
            return False
    return True


@njit(**JIT)
def _local_bounds(
    elements,
    pieces,
    reach_radius,
    rule,
    rule_weights,
    centre_weight,
    corners,
    balls,
    grid,
    reach,
    tolerance,
):
    """`local_bounds`, compiled: (floor, ceiling), each (k, S, n), and the lower and upper
    bounds of the mean of d over each piece, (2, k, S)."""
    count, per, n = pieces.shape[0], pieces.shape[1], pieces.shape[2]
    floor = np.full((count, per, n), np.nan)
    ceiling = np.full((count, per, n), np.nan)
    means = np.full((2, count, per), np.nan)
    near = np.empty(corners.shape[0], np.int64)
    gaps = np.empty(corners.shape[0])
    feet = np.empty((corners.shape[0], 3))
    at = np.zeros((len(rule), 3))
    below, above = np.empty(len(rule)), np.empty(len(rule))
    centre, middle = np.zeros(3), np.zeros(3)
    for i in range(count):
        centre[:] = 0.0
        for j in range(n):
            x, y, z = corner(elements, i, j)
            centre[0], centre[1], centre[2] = (
                centre[0] + x / n,
                centre[1] + y / n,
                centre[2] + z / n,
            )
        found = _within(centre, reach_radius[i], corners, balls, grid, reach, near, gaps, feet)
        if found == 0:
            continue
        closest = near[0]  # a first guess at each piece's closest element: its neighbour's
        for s in range(per):
            at[:] = 0.0  # the piece's corners first
            middle[:] = 0.0
            for j in range(n):
                x, y, z = corner(pieces[i], s, j)
                for axis, value in enumerate((x, y, z)):
                    middle[axis] += value / n
                    for p in range(len(rule)):
                        at[p, axis] += rule[p, j] * value
            radius = 0.0
            for j in range(n):
                gap = squared_gap(at[j, 0], at[j, 1], at[j, 2], middle[0], middle[1], middle[2])
                radius = max(radius, math.sqrt(gap))
            closest, best = _tangent_floor(
                at, middle, radius, corners, balls, near, gaps, feet, found, centre, closest, below
            )
            _chord(at, corners, closest, above)
            for j in range(n):
                floor[i, s, j], ceiling[i, s, j] = below[j] - tolerance, above[j] + tolerance
            low, high = centre_weight * best, centre_weight * best
            for p in range(len(rule)):
                low, high = low + rule_weights[p] * below[p], high + rule_weights[p] * above[p]
            means[0, i, s], means[1, i, s] = low - tolerance, high + tolerance
    return floor, ceiling, means
