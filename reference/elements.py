"""Exact geometry of boundary elements (segments in 2D, triangles in 3D), compiled with numba.

`to_cells` measures the exact float64 distance from points to given elements: it repeats
`geometry.closest_on_triangles` and `geometry.closest_on_segments` operation for operation,
in numpy's order (einsum sums three columns as (0 + 2) + 1, the norm left to right; no fused
multiply-add), without their (k, 3) temporaries, so its distances, points and features are
numpy's to the last bit (`tests/test_reference.py` checks it on random elements). An ulp off
matters: it moves subdivision bounds, and MASD then by up to 4e-6 mm (measured).
`on_element` is that measure for one point and one element; the cube index (module
`lattice_index`), the HD bracket (module `hausdorff`) and BIoU's tables (module
`lattice_bands`) use it too.

`centres`, `sizes`, `bounds` and `split_children` are the distance pass's element geometry
(module `distance_pass`), likewise numpy's to the last bit: a centre is the mean of the corners, a
size the length |b - a| of a segment or the area |(b - a) x (c - a)| / 2 of a triangle, and
d over an element lies in [d(c) - r, min(d(c) + r, max_i |v_i - p|)] (r = largest |v_i - c|,
p = the closest point of the centre c; d is 1-Lipschitz).

Compiled functions are cached on disk (`cache=True`, in `__pycache__` beside each module, or
where NUMBA_CACHE_DIR points): numba writes each cache file under a temporary name and renames
it into place, so processes compiling at once on a cold cache each write whole files and later
processes load them. The functions take C-contiguous float64 / int64 arrays only (the callers
make sure, `closest.plain`), so each has one compiled version.
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

JIT = {"cache": True, "nogil": True, "error_model": "numpy"}
"""numba's options for every compiled function of the reference."""


@njit(inline="always", **JIT)
def _dot3(x0, x1, x2, y0, y1, y2):
    """x.y in the order numpy's einsum("ij,ij->i") sums three columns: (0 + 2) + 1."""
    return (x0 * y0 + x2 * y2) + x1 * y1


@njit(**JIT)
def _on_segment(px, py, pz, sx, sy, sz, ex, ey, ez):
    """Closest point on segment [s, e] to p, and its feature code (VERT0/1, FACE).

    Points are three scalars; a 2D caller passes z = 0, which adds exact zeros only."""
    edge_x, edge_y, edge_z = ex - sx, ey - sy, ez - sz
    length2 = _dot3(edge_x, edge_y, edge_z, edge_x, edge_y, edge_z)
    t = _dot3(px - sx, py - sy, pz - sz, edge_x, edge_y, edge_z) / length2
    if math.isnan(t):
        t = 0.0
    t = min(max(t, 0.0), 1.0)
    feature = VERT0 if t <= 0.0 else (VERT1 if t >= 1.0 else FACE)
    return feature, sx + t * edge_x, sy + t * edge_y, sz + t * edge_z


@njit(inline="always", **JIT)
def squared_gap(px, py, pz, qx, qy, qz):
    return (px - qx) * (px - qx) + (py - qy) * (py - qy) + (pz - qz) * (pz - qz)


@njit(inline="always", **JIT)
def corner(corners, slot, j):
    """Corner j of element `slot` as three scalars (z = 0 in 2D)."""
    if corners.shape[2] == 2:
        return corners[slot, j, 0], corners[slot, j, 1], 0.0
    return corners[slot, j, 0], corners[slot, j, 1], corners[slot, j, 2]


@njit(**JIT)
def on_element(px, py, pz, corners, slot):
    """Closest point on element `slot` of corners (m, 2, dim) segments or (m, 3, 3)
    triangles to p: (feature, x, y, z). Same arithmetic as `geometry`."""
    ax, ay, az = corner(corners, slot, 0)
    bx, by, bz = corner(corners, slot, 1)
    if corners.shape[1] == 2:
        return _on_segment(px, py, pz, ax, ay, az, bx, by, bz)
    cx, cy, cz = corner(corners, slot, 2)
    ab0, ab1, ab2 = bx - ax, by - ay, bz - az
    ac0, ac1, ac2 = cx - ax, cy - ay, cz - az
    ap0, ap1, ap2 = px - ax, py - ay, pz - az
    d1, d2 = _dot3(ab0, ab1, ab2, ap0, ap1, ap2), _dot3(ac0, ac1, ac2, ap0, ap1, ap2)
    ab_ab, ac_ac = _dot3(ab0, ab1, ab2, ab0, ab1, ab2), _dot3(ac0, ac1, ac2, ac0, ac1, ac2)
    ab_ac = _dot3(ab0, ab1, ab2, ac0, ac1, ac2)
    area2 = ab_ab * ac_ac - ab_ac * ab_ac
    if area2 <= SLIVER * ab_ab * ac_ac:
        # Zero-area or sliver triangle: the closest of its three edges (the first on ties).
        f0, x0, y0, z0 = _on_segment(px, py, pz, ax, ay, az, bx, by, bz)
        f1, x1, y1, z1 = _on_segment(px, py, pz, bx, by, bz, cx, cy, cz)
        f2, x2, y2, z2 = _on_segment(px, py, pz, cx, cy, cz, ax, ay, az)
        g0 = math.sqrt(squared_gap(px, py, pz, x0, y0, z0))
        g1 = math.sqrt(squared_gap(px, py, pz, x1, y1, z1))
        g2 = math.sqrt(squared_gap(px, py, pz, x2, y2, z2))
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


@njit(**JIT)
def point_at(points, i):
    if points.shape[1] == 2:
        return points[i, 0], points[i, 1], 0.0
    return points[i, 0], points[i, 1], points[i, 2]


@njit(**JIT)
def to_cells(points, vertices, cells, cell):
    """Exact distance, closest point and feature of each point on its own element
    cells[cell[i]] of the surface (vertices, cells); cell -1 (none found) gives inf, NaN, -1."""
    count, dim = points.shape
    distance = np.empty(count)
    closest = np.empty((count, dim))
    feature = np.empty(count, np.int64)
    corners = np.empty((1, cells.shape[1], dim))  # the element's corners, as on_element reads them
    for i in range(count):
        if cell[i] < 0:
            distance[i], feature[i] = np.inf, -1
            closest[i, :] = np.nan
            continue
        for j in range(cells.shape[1]):
            corners[0, j, :] = vertices[cells[cell[i], j]]
        px, py, pz = point_at(points, i)
        code, qx, qy, qz = on_element(px, py, pz, corners, 0)
        feature[i] = code
        closest[i, 0], closest[i, 1] = qx, qy
        if dim == 3:
            closest[i, 2] = qz
        distance[i] = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
    return distance, closest, feature


# ---------------------------------------------------------------------------------------------
# The distance pass's element geometry (module `distance_pass`): numpy's arithmetic in numpy's order
# (a mean or norm sums its terms left to right, np.cross is a1 b2 - a2 b1, ...), so centres,
# sizes and bounds are numpy's to the last bit, without the (k, n, dim) temporaries.


@njit(inline="always", **JIT)
def _nan_max(x, y):
    """max as numpy's reductions take it: NaN wins."""
    return x if (x > y or math.isnan(x)) else y


@njit(**JIT)
def _centre(corners, i, out, row):
    """out[row] = corners[i].mean(axis=0): ((c0 + c1) + c2) / n per coordinate."""
    per_cell, dim = corners.shape[1], corners.shape[2]
    for k in range(dim):
        total = corners[i, 0, k]
        for j in range(1, per_cell):
            total += corners[i, j, k]
        out[row, k] = total / per_cell


@njit(**JIT)
def centres(corners):
    """corners (k, n, dim) -> (k, dim) element centres, as corners.mean(axis=1)."""
    out = np.empty((corners.shape[0], corners.shape[2]))
    for i in range(corners.shape[0]):
        _centre(corners, i, out, i)
    return out


@njit(inline="always", **JIT)
def _length(x, y):
    """|x - y| of two vectors: the squares summed left to right, as np.linalg.norm does."""
    total = 0.0
    for k in range(len(x)):
        step = x[k] - y[k]
        total = total + step * step if k else step * step
    return math.sqrt(total)


@njit(**JIT)
def sizes(corners):
    """Length of each segment or area of each triangle (`distance_pass.element_sizes`)."""
    count, per_cell, dim = corners.shape
    out = np.empty(count)
    for i in range(count):
        if per_cell == 2:
            out[i] = _length(corners[i, 1], corners[i, 0])
            continue
        a0, a1, a2 = corner(corners, i, 1)
        o0, o1, o2 = corner(corners, i, 0)
        b0, b1, b2 = corner(corners, i, 2)
        a0, a1, a2, b0, b1, b2 = a0 - o0, a1 - o1, a2 - o2, b0 - o0, b1 - o1, b2 - o2
        n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
        out[i] = 0.5 * math.sqrt((n0 * n0 + n1 * n1) + n2 * n2)
    return out


@njit(**JIT)
def bounds(corners, distance, closest):
    """Lower and upper bound of d over each element (`distance_pass.element_bounds`):
    distance - radius and min(distance + radius, largest |corner - closest|), radius = largest
    |corner - centre|."""
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


@njit(**JIT)
def split_children(corners, closest, rows):
    """Midpoint subdivision of the elements `rows` of corners (m, n, dim)
    (`distance_pass.split_elements`), with each child's centre and its distance to its parent's
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
