"""Compiled (numba) kernels of the reference's hot loops.

`to_cells` measures the exact float64 distance from points to given elements: it repeats
`geometry.closest_on_triangles` and `geometry.closest_on_segments` operation for operation,
in numpy's order (einsum sums three columns as (0 + 2) + 1, the norm left to right; no fused
multiply-add), without their (k, 3) temporaries, so its distances, points and features are
numpy's to the last bit (`tests/test_reference.py` checks it on random elements). An ulp off
matters: it moves subdivision bounds, and MASD then by up to 4e-6 mm (measured).
`centres`, `sizes`, `bounds` and `split` are the distance pass's element geometry (module
`metrics`), likewise numpy's to the last bit; `band_counts` counts BIoU's dense points in one
pass; `lattice_inside` is BIoU's inside test on meshes whose vertices lie on the lattice of
half dense steps, in exact integers. `point_bounds` is the bound stage of BIoU's point
decisions (`biou._decide_points`) as one loop over the points: the same bounds as the numpy
code, which decide only where they are rigorous, so the points' answers are the same; the
points they leave open go to the same exact search. `child_blocks` is the block stage's step
from one level to the next (`biou._children`).

Compiled functions are cached on disk (`cache=True`, in `__pycache__` beside this file, or
where NUMBA_CACHE_DIR points): numba writes each cache file under a temporary name and renames
it into place, so processes compiling at once on a cold cache each write whole files and later
processes load them. The functions take C-contiguous float64 / int64 arrays only (the callers
make sure), so each has one compiled version; `band_counts` takes BIoU's flags as they come
(a contiguous and a strided version).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.geometry import (
    EDGE01,
    EDGE12,
    EDGE20,
    FACE,
    SLIVER,
    SPLIT_CHILDREN,
    SPLIT_EDGES,
    VERT0,
    VERT1,
    VERT2,
)

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(inline="always", **_JIT)
def _dot(x0, x1, x2, y0, y1, y2):
    """x.y in the order numpy's einsum("ij,ij->i") sums three columns: (0 + 2) + 1."""
    return (x0 * y0 + x2 * y2) + x1 * y1


@njit(**_JIT)
def _on_segment(px, py, pz, sx, sy, sz, ex, ey, ez):
    """Closest point on segment [s, e] to p, and its feature code (VERT0/1, FACE).

    Points are three scalars; a 2D caller passes z = 0, which adds exact zeros only."""
    edge_x, edge_y, edge_z = ex - sx, ey - sy, ez - sz
    length2 = _dot(edge_x, edge_y, edge_z, edge_x, edge_y, edge_z)
    t = _dot(px - sx, py - sy, pz - sz, edge_x, edge_y, edge_z) / length2
    if math.isnan(t):
        t = 0.0
    t = min(max(t, 0.0), 1.0)
    feature = VERT0 if t <= 0.0 else (VERT1 if t >= 1.0 else FACE)
    return feature, sx + t * edge_x, sy + t * edge_y, sz + t * edge_z


@njit(inline="always", **_JIT)
def _gap2(px, py, pz, qx, qy, qz):
    return (px - qx) * (px - qx) + (py - qy) * (py - qy) + (pz - qz) * (pz - qz)


@njit(inline="always", **_JIT)
def _corner(corners, slot, j):
    """Corner j of element `slot` as three scalars (z = 0 in 2D)."""
    if corners.shape[2] == 2:
        return corners[slot, j, 0], corners[slot, j, 1], 0.0
    return corners[slot, j, 0], corners[slot, j, 1], corners[slot, j, 2]


@njit(**_JIT)
def _on_element(px, py, pz, corners, slot):
    """Closest point on element `slot` of corners (m, 2, dim) segments or (m, 3, 3)
    triangles to p: (feature, x, y, z). Same arithmetic as `geometry`."""
    ax, ay, az = _corner(corners, slot, 0)
    bx, by, bz = _corner(corners, slot, 1)
    if corners.shape[1] == 2:
        return _on_segment(px, py, pz, ax, ay, az, bx, by, bz)
    cx, cy, cz = _corner(corners, slot, 2)
    ab0, ab1, ab2 = bx - ax, by - ay, bz - az
    ac0, ac1, ac2 = cx - ax, cy - ay, cz - az
    ap0, ap1, ap2 = px - ax, py - ay, pz - az
    d1, d2 = _dot(ab0, ab1, ab2, ap0, ap1, ap2), _dot(ac0, ac1, ac2, ap0, ap1, ap2)
    ab_ab, ac_ac = _dot(ab0, ab1, ab2, ab0, ab1, ab2), _dot(ac0, ac1, ac2, ac0, ac1, ac2)
    ab_ac = _dot(ab0, ab1, ab2, ac0, ac1, ac2)
    area2 = ab_ab * ac_ac - ab_ac * ab_ac
    if area2 <= SLIVER * ab_ab * ac_ac:
        # Zero-area or sliver triangle: the closest of its three edges (the first on ties).
        f0, x0, y0, z0 = _on_segment(px, py, pz, ax, ay, az, bx, by, bz)
        f1, x1, y1, z1 = _on_segment(px, py, pz, bx, by, bz, cx, cy, cz)
        f2, x2, y2, z2 = _on_segment(px, py, pz, cx, cy, cz, ax, ay, az)
        g0 = math.sqrt(_gap2(px, py, pz, x0, y0, z0))
        g1 = math.sqrt(_gap2(px, py, pz, x1, y1, z1))
        g2 = math.sqrt(_gap2(px, py, pz, x2, y2, z2))
        if g0 <= g1 and g0 <= g2:
            return EDGE01, x0, y0, z0
        if g1 <= g2:
            return EDGE12, x1, y1, z1
        return EDGE20, x2, y2, z2
    d3, d4, d5, d6 = d1 - ab_ab, d2 - ab_ac, d1 - ab_ac, d2 - ac_ac
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    # The regions in the order geometry.closest_on_triangles applies them (the last wins).
    v, w, feature = vb / area2, vc / area2, FACE
    if va <= 0 and d4 - d3 >= 0 and d5 - d6 >= 0:
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        v, w, feature = 1 - t_bc, t_bc, EDGE12
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        v, w, feature = 0.0, d2 / (d2 - d6), EDGE20
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        v, w, feature = d1 / (d1 - d3), 0.0, EDGE01
    if d6 >= 0 and d5 <= d6:
        v, w, feature = 0.0, 1.0, VERT2
    if d3 >= 0 and d4 <= d3:
        v, w, feature = 1.0, 0.0, VERT1
    if d1 <= 0 and d2 <= 0:
        v, w, feature = 0.0, 0.0, VERT0
    return feature, (ax + v * ab0) + w * ac0, (ay + v * ab1) + w * ac1, (az + v * ab2) + w * ac2


@njit(**_JIT)
def _point(points, i):
    if points.shape[1] == 2:
        return points[i, 0], points[i, 1], 0.0
    return points[i, 0], points[i, 1], points[i, 2]


@njit(**_JIT)
def to_cells(points, vertices, cells, cell):
    """Exact distance, closest point and feature of each point on its own element
    cells[cell[i]] of the surface (vertices, cells); cell -1 (none found) gives inf, NaN, -1."""
    count, dim = points.shape
    distance = np.empty(count)
    closest = np.empty((count, dim))
    feature = np.empty(count, np.int64)
    corners = np.empty((1, cells.shape[1], dim))  # the element's corners, as _on_element reads them
    for i in range(count):
        if cell[i] < 0:
            distance[i], feature[i] = np.inf, -1
            closest[i, :] = np.nan
            continue
        for j in range(cells.shape[1]):
            corners[0, j, :] = vertices[cells[cell[i], j]]
        px, py, pz = _point(points, i)
        code, qx, qy, qz = _on_element(px, py, pz, corners, 0)
        feature[i] = code
        closest[i, 0], closest[i, 1] = qx, qy
        if dim == 3:
            closest[i, 2] = qz
        distance[i] = math.sqrt(_gap2(px, py, pz, qx, qy, qz))
    return distance, closest, feature


@njit(**_JIT)
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
    """The point stage of BIoU's band decisions (see `biou._decide_points`), compiled.

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


@njit(**_JIT)
def child_blocks(index, relative, factor, side, step, occupied, shape, threshold):
    """BIoU's child blocks (`biou._children`), compiled, in the same order with the same
    arithmetic: (todo, inner), the grid indices (n, dim) of the children of the blocks
    `index` (k, dim) that hold inside points (`occupied`, the level's flags flattened, C
    order, `shape` per axis), split into those to query and those whose farthest corner is
    within `threshold` of their parent's closest point (relative: that point minus the
    parent's centre, mm). `factor`: children per axis (1 or 2), `side`: the children's side
    in points."""
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


# ---------------------------------------------------------------------------------------------
# The distance pass's element geometry (module `metrics`): numpy's arithmetic in numpy's order
# (a mean or norm sums its terms left to right, np.cross is a1 b2 - a2 b1, ...), so centres,
# sizes and bounds are numpy's to the last bit, without the (k, n, dim) temporaries.


@njit(inline="always", **_JIT)
def _nan_max(x, y):
    """max as numpy's reductions take it: NaN wins."""
    return x if (x > y or math.isnan(x)) else y


@njit(**_JIT)
def _centre(corners, i, out, row):
    """out[row] = corners[i].mean(axis=0): ((c0 + c1) + c2) / n per coordinate."""
    per_cell, dim = corners.shape[1], corners.shape[2]
    for k in range(dim):
        total = corners[i, 0, k]
        for j in range(1, per_cell):
            total += corners[i, j, k]
        out[row, k] = total / per_cell


@njit(**_JIT)
def centres(corners):
    """corners (k, n, dim) -> (k, dim) element centres, as corners.mean(axis=1)."""
    out = np.empty((corners.shape[0], corners.shape[2]))
    for i in range(corners.shape[0]):
        _centre(corners, i, out, i)
    return out


@njit(inline="always", **_JIT)
def _length(x, y):
    """|x - y| of two vectors: the squares summed left to right, as np.linalg.norm does."""
    total = 0.0
    for k in range(len(x)):
        step = x[k] - y[k]
        total = total + step * step if k else step * step
    return math.sqrt(total)


@njit(**_JIT)
def sizes(corners):
    """Length of each segment or area of each triangle (metrics._sizes)."""
    count, per_cell, dim = corners.shape
    out = np.empty(count)
    for i in range(count):
        if per_cell == 2:
            out[i] = _length(corners[i, 1], corners[i, 0])
            continue
        a0, a1, a2 = _corner(corners, i, 1)
        o0, o1, o2 = _corner(corners, i, 0)
        b0, b1, b2 = _corner(corners, i, 2)
        a0, a1, a2, b0, b1, b2 = a0 - o0, a1 - o1, a2 - o2, b0 - o0, b1 - o1, b2 - o2
        n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
        out[i] = 0.5 * math.sqrt((n0 * n0 + n1 * n1) + n2 * n2)
    return out


@njit(**_JIT)
def bounds(corners, distance, closest):
    """Lower and upper bound of d over each element (metrics._bounds): distance - radius and
    min(distance + radius, largest |corner - closest|), radius = largest |corner - centre|."""
    count, per_cell, dim = corners.shape
    low, high = np.empty(count), np.empty(count)
    centre = np.empty((1, dim))
    for i in range(count):
        _centre(corners, i, centre, 0)
        radius, reach = _length(corners[i, 0], centre[0]), _length(corners[i, 0], closest[i])
        for j in range(1, per_cell):
            radius = _nan_max(radius, _length(corners[i, j], centre[0]))
            reach = _nan_max(reach, _length(corners[i, j], closest[i]))
        low[i] = distance[i] - radius
        upper = distance[i] + radius
        high[i] = upper if (upper < reach or math.isnan(upper)) else reach
    return low, high


# numba reads module-level arrays as constants, not dicts: the split tables per element kind.
_TRIANGLE_CHILDREN, _SEGMENT_CHILDREN = SPLIT_CHILDREN[3], SPLIT_CHILDREN[2]
_TRIANGLE_EDGES, _SEGMENT_EDGES = SPLIT_EDGES[3], SPLIT_EDGES[2]


@njit(**_JIT)
def split(corners, closest, rows):
    """Midpoint subdivision of the elements `rows` of corners (m, n, dim)
    (metrics.split_elements), with each child's centre and its distance to its parent's
    closest point (closest (m, dim)): the children (c k, n, dim) of the k rows in
    split_elements' order, their centres (c k, dim) and those distances. The rows are read
    in place: no copy of the parents."""
    count, per_cell, dim = len(rows), corners.shape[1], corners.shape[2]
    table = _TRIANGLE_CHILDREN if per_cell == 3 else _SEGMENT_CHILDREN
    edges = _TRIANGLE_EDGES if per_cell == 3 else _SEGMENT_EDGES
    per_parent = len(table)
    children = np.empty((count * per_parent, per_cell, dim))
    centre = np.empty((count * per_parent, dim))
    radius = np.empty(count * per_parent)
    points = np.empty((per_cell + len(edges), dim))  # corners, then edge midpoints
    for i in range(count):
        parent = rows[i]
        for j in range(per_cell):
            for k in range(dim):
                points[j, k] = corners[parent, j, k]
        for e in range(len(edges)):
            for k in range(dim):
                points[per_cell + e, k] = 0.5 * (
                    corners[parent, edges[e, 0], k] + corners[parent, edges[e, 1], k]
                )
        for c in range(per_parent):
            row = i * per_parent + c
            for j in range(per_cell):
                for k in range(dim):
                    children[row, j, k] = points[table[c, j], k]
            _centre(children, row, centre, row)
            radius[row] = _length(centre[row], closest[parent])
    return children, centre, radius


@njit(**_JIT)
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


# ---------------------------------------------------------------------------------------------
# BIoU's inside test on a lattice: exact integer arithmetic, ties broken by simulation of
# simplicity, so every grid line crosses a closed surface consistently.


@njit(inline="always", **_JIT)
def _side(a0, a1, b0, b1, p0, p1):
    """Sign of twice the area of (a, b, p) in exact integers, p perturbed by (e, e^2) for an
    infinitesimal e when exactly zero, and that area unperturbed. The sign is the same for
    (b, a), flipped, so two triangles sharing an edge never both count, nor both miss, a line
    through it."""
    area = (b0 - a0) * (p1 - a1) - (b1 - a1) * (p0 - a0)
    value = area if area != 0 else (-(b1 - a1) if b1 != a1 else b0 - a0)
    return (value > 0) - (value < 0), area


ON_SURFACE = np.uint8(2)
"""`lattice_inside`'s mark of a point on the surface, beside the parity changes in bit 0."""


@njit(**_JIT)
def _mark_in_plane(a, b, c, p0, p1, column):
    """Mark (ON_SURFACE) column[k] for the points (p0, p1, 2k) on a vertical triangle whose
    plane holds that line: the triangle meets the line in z from zlow to zhigh, found exactly
    as fractions from the edges that reach the line (h = the first axis along which the
    triangle's projection varies)."""
    axis = 0 if (a[0] != b[0] or b[0] != c[0]) else 1
    h = p0 if axis == 0 else p1
    low_num, low_den, high_num, high_den = 1, 0, -1, 0  # +inf, -inf as fractions
    for u, v in ((a, b), (b, c), (c, a)):
        hu, hv = u[axis], v[axis]
        if hu == hv:
            if hu != h:
                continue
            zs = ((u[2], 1), (v[2], 1))
        elif min(hu, hv) <= h <= max(hu, hv):
            num = u[2] * (hv - hu) + (v[2] - u[2]) * (h - hu)
            den = hv - hu
            if den < 0:
                num, den = -num, -den
            zs = ((num, den), (num, den))
        else:
            continue
        for num, den in zs:
            if num * low_den < low_num * den or low_den == 0:
                low_num, low_den = num, den
            if num * high_den > high_num * den or high_den == 0:
                high_num, high_den = num, den
    if low_den == 0:
        return
    first = -((-low_num) // (2 * low_den))  # smallest k with 2k >= zlow
    last = high_num // (2 * high_den)  # largest k with 2k <= zhigh
    for k in range(max(first, 0), min(last, len(column) - 1) + 1):
        column[k] |= ON_SURFACE


@njit(**_JIT)
def lattice_inside(lattice, cells, n1, n2, start, stop):
    """Points (i, j, k), i in start..stop-1, in the closed region bounded by the triangle
    surface whose vertices are `lattice` (n, 3) int64: coordinates in half grid steps, so
    point (i, j, k) sits at (2i, 2j, 2k). Parity of the crossings below each point along its
    line of the last axis, counted exactly; a point on the surface (a crossing at the point,
    or the point on a triangle whose plane holds its line) is in the region.

    Returns (inside (stop - start, n1, n2) bool, ambiguous (stop - start) bool): a slice is
    ambiguous where a line crosses an odd number of times (the surface is not closed there)."""
    count = stop - start
    # Parity changes along each line in bit 0, points on the surface in bit 1, then the
    # running XOR of bit 0 with bit 1 or-ed in, in place; the change past the last point only
    # tells whether the line closes.
    inside = np.zeros((count, n1, n2), np.uint8)
    beyond = np.zeros((count, n1), np.uint8)
    ambiguous = np.zeros(count, np.bool_)
    for cell in cells:
        a, b, c = lattice[cell[0]], lattice[cell[1]], lattice[cell[2]]
        i_lo = max(start, -(-min(a[0], b[0], c[0]) // 2))
        i_hi = min(stop - 1, max(a[0], b[0], c[0]) // 2)
        j_lo = max(0, -(-min(a[1], b[1], c[1]) // 2))
        j_hi = min(n1 - 1, max(a[1], b[1], c[1]) // 2)
        for i in range(i_lo, i_hi + 1):
            for j in range(j_lo, j_hi + 1):
                s_ab, e_ab = _side(a[0], a[1], b[0], b[1], 2 * i, 2 * j)
                s_bc, e_bc = _side(b[0], b[1], c[0], c[1], 2 * i, 2 * j)
                s_ca, e_ca = _side(c[0], c[1], a[0], a[1], 2 * i, 2 * j)
                if e_ab == 0 and e_bc == 0 and e_ca == 0:
                    # The line runs in the plane of a (vertical) triangle: no crossing, and
                    # its points on the triangle are in the closed region.
                    _mark_in_plane(a, b, c, 2 * i, 2 * j, inside[i - start, j])
                    continue
                # The line meets the closed triangle (no perturbation); it crosses it when
                # the perturbed signs agree, so a line through a shared edge or vertex
                # crosses the surface once, or at a silhouette twice or not at all.
                meets = (e_ab >= 0 and e_bc >= 0 and e_ca >= 0) or (
                    e_ab <= 0 and e_bc <= 0 and e_ca <= 0
                )
                if not meets:
                    continue
                # The meeting point's height t = numerator / denominator (barycentric weights).
                denominator = e_ab + e_bc + e_ca
                numerator = e_bc * a[2] + e_ca * b[2] + e_ab * c[2]
                if denominator < 0:
                    numerator, denominator = -numerator, -denominator
                # Points above the crossing: 2k > t, i.e. k > numerator / (2 denominator).
                first_above = numerator // (2 * denominator) + 1
                if numerator % (2 * denominator) == 0 and 0 <= first_above - 1 < n2:
                    inside[i - start, j, first_above - 1] |= ON_SURFACE  # in the closed region
                if s_ab == 0 or s_ab != s_bc or s_bc != s_ca:
                    continue
                if first_above >= n2:
                    beyond[i - start, j] ^= 1
                else:
                    inside[i - start, j, max(first_above, 0)] ^= 1
    for i in range(count):
        for j in range(n1):
            parity = np.uint8(0)
            for k in range(n2):
                parity ^= inside[i, j, k] & 1
                inside[i, j, k] = parity | (inside[i, j, k] >> 1)
            if parity ^ beyond[i, j]:
                ambiguous[i] = True  # an odd number of crossings
    return inside.view(np.bool_), ambiguous


@njit(inline="always", **_JIT)
def _share(row, t):
    """Share of one element on which the linear interpolant of its ascending corner values
    `row` is <= t (the formula: `metrics.linear_share_within`)."""
    low, high = row[0], row[len(row) - 1]
    if t < low:
        return 0.0
    if t >= high:
        return 1.0
    if len(row) == 2:
        return (t - low) / (high - low)
    mid = row[1]
    if t < mid:
        return (t - low) ** 2 / ((mid - low) * (high - low))
    return 1 - (high - t) ** 2 / ((high - low) * (high - mid))


@njit(**_JIT)
def linear_shares(rows, t):
    """`_share` of every row of rows (k, 2 or 3), each in ascending order."""
    shares = np.empty(len(rows))
    for i in range(len(rows)):
        shares[i] = _share(rows[i], t)
    return shares


@njit(**_JIT)
def candidate_distances(corners, candidates, vertices, cells):
    """Exact distance from corner j of element i (corners (k, n, dim)) to element
    candidates[i, c] of the surface (vertices, cells), as out[i, c, j]: `to_cells`'s
    arithmetic, without repeating each corner per candidate."""
    count, per_cell, dim = corners.shape
    out = np.empty((count, candidates.shape[1], per_cell))
    element = np.empty((1, cells.shape[1], dim))
    for i in range(count):
        for c in range(candidates.shape[1]):
            for j in range(cells.shape[1]):
                element[0, j, :] = vertices[cells[candidates[i, c], j]]
            for j in range(per_cell):
                px, py, pz = _corner(corners, i, j)
                _, qx, qy, qz = _on_element(px, py, pz, element, 0)
                out[i, c, j] = math.sqrt(_gap2(px, py, pz, qx, qy, qz))
    return out


@njit(**_JIT)
def union_box(a, b):
    """(lower, upper): the first and one-past-last index of the foreground of a | b along each
    axis of two 3D bool arrays of one shape, in one pass (numpy's any over two axes at a time
    reads the arrays three times, strided); lower = shape, upper = 0 where both are empty."""
    n0, n1, n2 = a.shape
    lower = np.array([n0, n1, n2])
    upper = np.zeros(3, np.int64)
    for i in range(n0):
        for j in range(n1):
            first = last = -1
            for k in range(n2):
                if a[i, j, k] or b[i, j, k]:
                    if first < 0:
                        first = k
                    last = k
            if first >= 0:
                lower[0], upper[0] = min(lower[0], i), max(upper[0], i + 1)
                lower[1], upper[1] = min(lower[1], j), max(upper[1], j + 1)
                lower[2], upper[2] = min(lower[2], first), max(upper[2], last + 1)
    return lower, upper


@njit(**_JIT)
def _select_in(v, w, lo, hi, below, target):
    """`weighted_select` on v[lo:hi] (reordered in place), `below` the summed weight of the
    values known to lie below them: quickselect with a three-way partition (ties in one
    block); nan when their total falls short."""
    while hi > lo:
        a, b, c = v[lo], v[(lo + hi) // 2], v[hi - 1]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        less, i, more = lo, lo, hi
        less_weight = equal_weight = 0.0
        while i < more:
            if v[i] < pivot:
                v[less], v[i] = v[i], v[less]
                w[less], w[i] = w[i], w[less]
                less_weight += w[less]
                less += 1
                i += 1
            elif v[i] > pivot:
                more -= 1
                v[more], v[i] = v[i], v[more]
                w[more], w[i] = w[i], w[more]
            else:
                equal_weight += w[i]
                i += 1
        if less > lo and below + less_weight >= target:
            hi = less
        elif below + less_weight + equal_weight >= target:
            return pivot
        else:
            below += less_weight + equal_weight
            lo = more
    return np.nan


SELECT_SAMPLE = 512
"""Values `weighted_select` samples to guess the band that holds the answer."""


@njit(**_JIT)
def weighted_select(values, weights, target):
    """Smallest v among values with sum(weights[values <= v]) >= target, the largest value
    when the total falls short: the weighted step percentile, without a sort, in expected
    linear time. A sample of every k-th value guesses a band of values around the answer;
    one pass sums the weight below the band and gathers the band, and the answer is selected
    in the band alone. When the answer lies outside the band (a bad sample), the whole array
    is selected instead: the guess only ever costs time."""
    n = len(values)
    if n > 4 * SELECT_SAMPLE:
        stride = n // SELECT_SAMPLE
        order = np.argsort(values[::stride])
        sample, sample_weight = values[::stride][order], weights[::stride][order]
        cumulative = np.cumsum(sample_weight) * (weights.sum() / sample_weight.sum())
        guess = np.searchsorted(cumulative, target)
        margin = len(sample) // 16
        band_low = sample[max(guess - margin, 0)]
        band_high = sample[min(guess + margin, len(sample) - 1)]
        below = 0.0
        band = np.empty(n)
        band_weight = np.empty(n)
        count = 0
        for i in range(n):
            if values[i] < band_low:
                below += weights[i]
            elif values[i] <= band_high:
                band[count] = values[i]
                band_weight[count] = weights[i]
                count += 1
        if below < target:
            found = _select_in(band, band_weight, 0, count, below, target)
            if not np.isnan(found):
                return found
    found = _select_in(values.copy(), weights.copy(), 0, n, 0.0, target)
    return values.max() if np.isnan(found) else found


@njit(**_JIT)
def interpolated_percentile(steps, step_sizes, below, partial, partial_sizes, low, high, target):
    """Smallest t in [low, high] at which size_within(t) = below + (summed size of the steps
    <= t) + sum over the partial elements of size * share(t) reaches target
    (`metrics.Directed._interpolated_percentile` states the method and why the answer lies
    in [low, high]). steps: ascending step values in (low, high], step_sizes their sizes;
    below: the size that counts wholly at every t >= low; partial (k, n): the corner values
    (ascending rows) of the elements interpolated, partial_sizes their sizes."""
    cumulative = np.zeros(len(steps) + 1)
    for i in range(len(steps)):
        cumulative[i + 1] = cumulative[i] + step_sizes[i]

    def size_within(t):
        shares = 0.0
        for i in range(len(partial)):
            shares += partial_sizes[i] * _share(partial[i], t)
        return below + cumulative[np.searchsorted(steps, t, side="right")] + shares

    if size_within(low) >= target:
        return low
    # Breakpoints in [low, high]: corner values of the partial elements, and steps.
    candidates = np.concatenate((np.array([low, high]), partial.ravel(), steps))
    candidates = np.sort(candidates[(candidates >= low) & (candidates <= high)])
    breakpoints = [candidates[0]]
    for value in candidates[1:]:
        if value != breakpoints[-1]:
            breakpoints.append(value)
    below_target, above = 0, len(breakpoints) - 1  # size within: < target, >= target
    while above - below_target > 1:
        middle = (below_target + above) // 2
        if size_within(breakpoints[middle]) >= target:
            above = middle
        else:
            below_target = middle
    low, high = breakpoints[below_target], breakpoints[above]
    # On [low, high) no step and no corner value: the size within is one quadratic there
    # (every share is right-continuous), and may jump at high: a step, or an open element
    # whose corners are all at high. q(s) = f0 + b s + c s^2 through s = 0, 1/3, 2/3.
    f0 = size_within(low)
    f1 = size_within(low + (high - low) * 1.0 / 3)
    f2 = size_within(low + (high - low) * 2.0 / 3)
    b, c = 6.0 * f1 - 4.5 * f0 - 1.5 * f2, 4.5 * (f0 + f2) - 9.0 * f1
    if f0 + b + c < target:
        return high  # the jump at high reaches the target
    # The root of q(s) = target in [0, 1], in the form that does not cancel.
    gap = target - f0
    denominator = b + math.sqrt(max(b * b + 4.0 * c * gap, 0.0))
    share = 1.0 if denominator <= 0.0 else min(max(2.0 * gap / denominator, 0.0), 1.0)
    return low + share * (high - low)


@njit(**_JIT)
def distinct_in_order(points, key, order):
    """(first, same) of `metrics._distinct_points`, from the order of the points' sort key:
    a point starts a new distinct row unless it equals the previous one in that order (same
    key, then every coordinate)."""
    count, dim = points.shape
    same = np.empty(count, np.int64)
    first = np.empty(count, np.int64)
    distinct = 0
    for i in range(count):
        row = order[i]
        new = i == 0 or key[row] != key[order[i - 1]]
        if not new:
            for axis in range(dim):
                new = new or points[row, axis] != points[order[i - 1], axis]
        if new:
            first[distinct] = row
            distinct += 1
        same[row] = distinct - 1
    return first[:distinct], same


@njit(**_JIT)
def flat_families(parent_distance, child_distance, tolerance):
    """Per parent: do all its children (child_distance (k, c), one row each) keep the parent's
    distance within tolerance? (metrics._flat_families)"""
    flat = np.empty(len(parent_distance), np.bool_)
    for i in range(len(parent_distance)):
        spread = 0.0
        for j in range(child_distance.shape[1]):
            spread = max(spread, abs(child_distance[i, j] - parent_distance[i]))
        flat[i] = spread <= tolerance
    return flat


@njit(**_JIT)
def sorted_rows(values):
    """Each row of values (k, 2 or 3) in ascending order: np.sort(values, axis=1), which costs
    three to four times this on rows of three (0.40 against 0.12 ms a pair on label 1)."""
    out = values.copy()
    for i in range(len(out)):
        for j in range(1, out.shape[1]):  # insertion sort: two or three values
            value, k = out[i, j], j
            while k > 0 and out[i, k - 1] > value:
                out[i, k] = out[i, k - 1]
                k -= 1
            out[i, k] = value
    return out


@njit(**_JIT)
def signed_measure(vertices, cells):
    """Enclosed signed area (segments) or volume (triangles) of a surface, times 2 or 6:
    sum of v0 x v1, or of det(v0, v1, v2) (signed.orient_outward)."""
    total = 0.0
    for i in range(len(cells)):
        a, b = vertices[cells[i, 0]], vertices[cells[i, 1]]
        if cells.shape[1] == 2:
            total += a[0] * b[1] - b[0] * a[1]
        else:
            c = vertices[cells[i, 2]]
            total += (
                a[0] * (b[1] * c[2] - b[2] * c[1])
                + a[1] * (b[2] * c[0] - b[0] * c[2])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
            )
    return total
