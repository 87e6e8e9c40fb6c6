"""Is an element's shadow on a plane covered by the other surface's elements lying in it?

Let an element T of X be certified over plane P (module `bounds`: d(x) >= h(x), the height
above P, for x in T), with T on or above P. If the orthogonal projection T' of T onto P lies
within the union of elements f of Y that lie in P, then the foot p of every x in T is a point
of Y and d(x) <= |x - p| = h(x): d equals h over T, an affine function, and every metric's
share of T is exact. Lattice meshes are made of large flat patches, so many certified elements
are such.

The test is a proof up to rounding, with room to spare inside `PLANE_TOLERANCE` (t below):

* f lies in P when its corners are within t / 4 of it;
* each f is grown by g = `GROWTH_SHARE` t = t / 20 on every side (its edges' lines moved
  out), so that rounding in the projection cannot leave slivers along shared edges: every
  point of the grown f lies within g / sin(a / 2) <= t / 2 of f (a: f's smallest angle; f
  with sin(a / 2) < `MIN_HALF_ANGLE_SINE` are not used), and T' is covered when nothing of it
  is left after taking every grown f away;
* so for x in T, some y in f lies within t / 2 of p in P's directions and within t / 4 across,
  and d(x) <= h(x) + 3 t / 4.

T' minus a convex f is the union of convex pieces (the parts beyond each edge's line, inside
the lines before it), so the remainder is always a list of convex polygons, clipped by one
line at a time (Sutherland-Hodgman); in 2D the elements are segments, P a line, and T' an
interval.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.elements import JIT

GROWTH_SHARE = 0.05
"""How far each f is grown, as a share of the tolerance (module docstring)."""

MIN_HALF_ANGLE_SINE = 0.1
"""Elements with sin(smallest angle / 2) below this are not used to cover (their grown
corners would reach more than the growth / this beyond them)."""

MAX_PIECES = 64
"""Convex pieces the remainder may hold; beyond, the element is left uncovered (not exact)."""

MAX_VERTICES = 24
"""Vertices a piece may have (a triangle clipped by k lines has at most 3 + k; a piece that
would have more leaves its element uncovered)."""


def covered(elements, normal, offset, candidates, corners_y, tolerance: float) -> np.ndarray:
    """Per element i of X (corners `elements` (k, n, dim)), whether its projection onto the
    plane (normal[i] unit, offset[i]) lies within the elements of Y named in candidates[i]
    (-1: none; corners of Y `corners_y`) that lie in that plane (module docstring)."""
    return _covered(
        np.ascontiguousarray(elements, dtype=np.float64),
        np.ascontiguousarray(normal, dtype=np.float64),
        np.ascontiguousarray(offset, dtype=np.float64),
        np.ascontiguousarray(candidates, dtype=np.int64),
        np.ascontiguousarray(corners_y, dtype=np.float64),
        float(tolerance),
    )


@njit(**JIT)
def _covered(elements, normal, offset, candidates, corners_y, tolerance):
    count, own, dim = elements.shape
    result = np.zeros(count, np.bool_)
    frame = np.zeros((2, 3))
    shadow = np.empty((own, 2))
    lines = np.empty((candidates.shape[1], 3, 3))  # per usable f and edge: outward normal, offset
    pieces = np.empty((2, MAX_PIECES, MAX_VERTICES, 2))
    sizes = np.empty((2, MAX_PIECES), np.int64)
    scratch = np.empty((3, MAX_VERTICES, 2))  # f's projected corners; the clipped polygons
    for i in range(count):
        _plane_frame(normal[i], dim, frame)
        for j in range(own):
            _project(elements[i, j], frame, dim, shadow[j])
        if dim == 2:
            result[i] = _interval_covered(
                shadow, candidates[i], corners_y, normal[i], offset[i], frame, tolerance
            )
            continue
        usable = 0
        plane = normal[i], offset[i], frame, tolerance
        for slot in range(candidates.shape[1]):
            f = candidates[i, slot]
            if f >= 0 and not _seen(candidates[i], slot, f):
                if _edge_lines(f, corners_y, plane, lines[usable], scratch[0]):
                    usable += 1
        # A covered shadow has each corner in some grown f: a cheap test that most fail.
        if _corners_held(shadow, lines[:usable]):
            result[i] = _nothing_left(shadow, lines[:usable], pieces, sizes, scratch)
    return result


@njit(**JIT)
def _corners_held(shadow, lines):
    for j in range(shadow.shape[0]):
        held = False
        for f in range(lines.shape[0]):
            held = held or _inside(lines[f], shadow[j])
        if not held:
            return False
    return True


@njit(**JIT)
def _nothing_left(shadow, lines, pieces, sizes, scratch):
    """Whether nothing of the triangle `shadow` is left after taking away every grown f (its
    edge lines); the remainder is kept as convex pieces, counter-clockwise, in one of the two
    buffers of `pieces` while the other receives the next."""
    own = shadow.shape[0]
    turn = _signed_area(shadow, own) < 0
    for j in range(own):
        pieces[0, 0, j] = shadow[own - 1 - j] if turn else shadow[j]
    sizes[0, 0] = own
    n_pieces, current = 1, 0
    for f in range(lines.shape[0]):
        n_pieces, overflow = _subtract(pieces, sizes, current, n_pieces, lines[f], scratch)
        if overflow:
            return False  # too fragmented to follow: left uncovered
        if n_pieces == 0:
            return True
        current = 1 - current
    return False


@njit(**JIT)
def _plane_frame(normal, dim, frame):
    """Two unit directions spanning the plane (one along the line in 2D) into `frame`."""
    if dim == 2:
        frame[0, 0], frame[0, 1], frame[0, 2] = -normal[1], normal[0], 0.0
        return
    nx, ny, nz = normal[0], normal[1], normal[2]
    # The axis least along the normal, crossed with it.
    if abs(nx) <= abs(ny) and abs(nx) <= abs(nz):
        ax, ay, az = 0.0, nz, -ny
    elif abs(ny) <= abs(nz):
        ax, ay, az = -nz, 0.0, nx
    else:
        ax, ay, az = ny, -nx, 0.0
    length = math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / length, ay / length, az / length
    frame[0, 0], frame[0, 1], frame[0, 2] = ax, ay, az
    frame[1, 0], frame[1, 1], frame[1, 2] = ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax


@njit(**JIT)
def _project(point, frame, dim, out):
    for k in range(2):
        value = 0.0
        for axis in range(dim):
            value += point[axis] * frame[k, axis]
        out[k] = value


@njit(**JIT)
def _seen(row, slot, f):
    for earlier in range(slot):
        if row[earlier] == f:
            return True
    return False


@njit(**JIT)
def _in_plane(f, corners_y, normal, offset, tolerance):
    """Whether every corner of f lies within tolerance / 4 of the plane."""
    for j in range(corners_y.shape[1]):
        height = -offset
        for axis in range(corners_y.shape[2]):
            height += corners_y[f, j, axis] * normal[axis]
        if abs(height) > 0.25 * tolerance:
            return False
    return True


@njit(**JIT)
def _edge_lines(f, corners_y, plane, lines, q):
    """The grown triangle f's edge lines in the frame of plane (normal, offset, frame,
    tolerance): outward unit normal and offset moved out by the growth; or False when f is not in
    the plane or too thin to use (q: room for f's projected corners)."""
    normal, offset, frame, tolerance = plane
    if not _in_plane(f, corners_y, normal, offset, tolerance):
        return False
    for j in range(3):
        _project(corners_y[f, j], frame, 3, q[j])
    area = (q[1, 0] - q[0, 0]) * (q[2, 1] - q[0, 1]) - (q[1, 1] - q[0, 1]) * (q[2, 0] - q[0, 0])
    if area == 0.0:
        return False
    turn = 1.0 if area > 0 else -1.0  # counter-clockwise: outward is the edge turned right
    for j in range(3):
        a, b, c = q[j], q[(j + 1) % 3], q[(j + 2) % 3]
        ex, ey = b[0] - a[0], b[1] - a[1]
        gx, gy = c[0] - a[0], c[1] - a[1]
        e_len, g_len = math.hypot(ex, ey), math.hypot(gx, gy)
        cosine = (ex * gx + ey * gy) / (e_len * g_len)
        if math.sqrt(max(0.5 * (1.0 - cosine), 0.0)) < MIN_HALF_ANGLE_SINE:
            return False  # the angle at a
        mx, my = turn * ey / e_len, -turn * ex / e_len
        lines[j, 0], lines[j, 1] = mx, my
        lines[j, 2] = mx * a[0] + my * a[1] + GROWTH_SHARE * tolerance
    return True


@njit(**JIT)
def _inside(lines, point):
    """Whether the point lies within the three lines (in the grown triangle)."""
    for j in range(3):
        if lines[j, 0] * point[0] + lines[j, 1] * point[1] > lines[j, 2]:
            return False
    return True


@njit(**JIT)
def _subtract(pieces, sizes, current, n_pieces, lines, scratch):
    """Take the grown triangle (its three edge lines) from every piece of buffer `current`,
    writing the remainder's pieces into the other buffer: (their number, overflow)."""
    target = 1 - current
    count = 0
    work, out = scratch[1], scratch[2]
    for p in range(n_pieces):
        size = sizes[current, p]
        work[:size] = pieces[current, p, :size]
        for j in range(3):
            # The part beyond edge j's line is left over; the part inside goes on to the next.
            beyond = _clip(work, size, lines[j], -1.0, out)
            if beyond >= 3:
                if count == MAX_PIECES or beyond > MAX_VERTICES:
                    return count, True
                pieces[target, count, :beyond] = out[:beyond]
                sizes[target, count] = beyond
                count += 1
            size = _clip(work, size, lines[j], 1.0, out)
            if size > MAX_VERTICES:
                return count, True
            if size < 3:
                break
            work[:size] = out[:size]
    return count, False


@njit(**JIT)
def _clip(polygon, size, line, side, out):
    """The convex polygon's part where side * (m . p - offset) <= 0 (Sutherland-Hodgman);
    returns its vertex count (written to out; at most size + 1)."""
    count = 0
    for k in range(size):
        p, q = polygon[k], polygon[(k + 1) % size]
        sp = side * (line[0] * p[0] + line[1] * p[1] - line[2])
        sq = side * (line[0] * q[0] + line[1] * q[1] - line[2])
        if sp <= 0:
            if count == out.shape[0]:
                return count + 1
            out[count] = p
            count += 1
        if (sp < 0 < sq) or (sq < 0 < sp):
            if count == out.shape[0]:
                return count + 1
            t = sp / (sp - sq)
            out[count, 0] = p[0] + t * (q[0] - p[0])
            out[count, 1] = p[1] + t * (q[1] - p[1])
            count += 1
    return count


@njit(**JIT)
def _signed_area(polygon, size):
    total = 0.0
    for k in range(size):
        p, q = polygon[k], polygon[(k + 1) % size]
        total += p[0] * q[1] - q[0] * p[1]
    return 0.5 * total


@njit(**JIT)
def _interval_covered(shadow, row, corners_y, normal, offset, frame, tolerance):
    """2D: whether the interval T' lies within the union of the grown segments of Y on the
    line (each grown by the growth at both ends)."""
    start, stop = min(shadow[0, 0], shadow[1, 0]), max(shadow[0, 0], shadow[1, 0])
    growth = GROWTH_SHARE * tolerance
    progressed = True
    while progressed and start <= stop:
        # Advance the covered front by any segment that holds it.
        progressed = False
        for slot in range(row.shape[0]):
            f = row[slot]
            if f < 0 or not _in_plane(f, corners_y, normal, offset, tolerance):
                continue
            a = corners_y[f, 0, 0] * frame[0, 0] + corners_y[f, 0, 1] * frame[0, 1]
            b = corners_y[f, 1, 0] * frame[0, 0] + corners_y[f, 1, 1] * frame[0, 1]
            low, high = min(a, b) - growth, max(a, b) + growth
            if low <= start < high:
                start = high
                progressed = True
    return start > stop
