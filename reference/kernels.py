"""Compiled (numba) kernels: an exact float64 bounding volume hierarchy over a simplex surface.

Every query answers with plain arrays (distance, closest cell, closest point, feature): no
per-point Python object is made, and the distance is exact float64 from the start, so no
second pass re-measures it. The point-to-element routine repeats `geometry.closest_on_triangles`
and `geometry.closest_on_segments` operation for operation (same formulas, same order, no
fused multiply-add), so a distance to a given element is bit-for-bit the one the classic path
computes; what can differ is only which element is found closest: the classic path takes it
from fcpw's float32 search, which may name one up to about 1e-5 mm farther than the closest.

Compiled functions are cached on disk (`cache=True`): numba writes each cache file under a
temporary name and renames it into place, so processes compiling at once on a cold cache
each write a whole file and the last one wins; later processes load it. The functions take
C-contiguous float64 / int64 arrays only (the wrappers in `closest` make sure), so each has
one compiled version.

The tree: cells are split along the widest axis of their centroids' box where the surface area
heuristic (binned) puts the cut, down to leaves of at most LEAF_SIZE cells. The leaves'
corners are stored in tree order, so a query reads them contiguously. A query visits the
nearer child first and prunes every node whose box lies farther than the best distance so
far (or the search radius).
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
    VERT0,
    VERT1,
    VERT2,
)

LEAF_SIZE = 4
"""Cells per leaf of the hierarchy at most."""

_STACK = 4096
"""Traversal stack entries (depth + 1 at most; surface-area splits can be lopsided)."""

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def _on_segment(px, py, pz, sx, sy, sz, ex, ey, ez):
    """Closest point on segment [s, e] to p, and its feature code (VERT0/1, FACE).

    Points are three scalars; a 2D caller passes z = 0, which adds exact zeros only."""
    edge_x, edge_y, edge_z = ex - sx, ey - sy, ez - sz
    length2 = edge_x * edge_x + edge_y * edge_y + edge_z * edge_z
    t = ((px - sx) * edge_x + (py - sy) * edge_y + (pz - sz) * edge_z) / length2
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
    d1 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2
    d2 = ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    ab_ab = ab0 * ab0 + ab1 * ab1 + ab2 * ab2
    ac_ac = ac0 * ac0 + ac1 * ac1 + ac2 * ac2
    ab_ac = ab0 * ac0 + ab1 * ac1 + ab2 * ac2
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


_BINS = 16
"""Bins per split of the surface area heuristic."""


@njit(**_JIT)
def _box_area(low, high, dim):
    """Surface area (3D) or perimeter (2D) of a box, up to a constant factor."""
    if dim == 2:
        return (high[0] - low[0]) + (high[1] - low[1])
    dx, dy, dz = high[0] - low[0], high[1] - low[1], high[2] - low[2]
    return dx * dy + dy * dz + dz * dx


@njit(**_JIT)
def _split(order, start, n, axis, lo, extent, centroid, low, high, dim):
    """Surface-area-heuristic split of order[start:start + n] along `axis` into _BINS bins
    of the centroids' range [lo, lo + extent]: partitions it in place, returns the size of
    the left part (0 if every centroid fell into one bin)."""
    count = np.zeros(_BINS, np.int64)
    bin_low = np.full((_BINS, dim), np.inf)
    bin_high = np.full((_BINS, dim), -np.inf)
    scale = _BINS / extent
    for i in range(start, start + n):
        cell = order[i]
        b = min(int((centroid[cell, axis] - lo) * scale), _BINS - 1)
        count[b] += 1
        for k in range(dim):
            bin_low[b, k] = min(bin_low[b, k], low[cell, k])
            bin_high[b, k] = max(bin_high[b, k], high[cell, k])
    left_cost = np.zeros(_BINS)
    run_low, run_high = np.full(dim, np.inf), np.full(dim, -np.inf)
    total = 0
    for b in range(_BINS - 1):  # cost of bins 0..b on the left
        total += count[b]
        for k in range(dim):
            run_low[k] = min(run_low[k], bin_low[b, k])
            run_high[k] = max(run_high[k], bin_high[b, k])
        left_cost[b] = _box_area(run_low, run_high, dim) * total if total else 0.0
    best, best_cost = -1, np.inf
    run_low[:], run_high[:] = np.inf, -np.inf
    total = 0
    for b in range(_BINS - 1, 0, -1):  # bins b.._BINS-1 on the right
        total += count[b]
        for k in range(dim):
            run_low[k] = min(run_low[k], bin_low[b, k])
            run_high[k] = max(run_high[k], bin_high[b, k])
        if total == 0 or total == n:
            continue
        cost = left_cost[b - 1] + _box_area(run_low, run_high, dim) * total
        if cost < best_cost:
            best, best_cost = b, cost
    if best < 0:
        return 0
    left, right = start, start + n - 1
    while left <= right:
        if min(int((centroid[order[left], axis] - lo) * scale), _BINS - 1) < best:
            left += 1
        else:
            order[left], order[right] = order[right], order[left]
            right -= 1
    return left - start


@njit(**_JIT)
def build(vertices, cells):
    """The hierarchy of a surface: (node box (nodes, 2 dim): low then high corner,
    child (nodes, 2) or -1 for a leaf, first and count of a leaf's cells in `order`, order,
    leaf corners (m, n, dim), cell box (m, 2 dim)), cells in tree order."""
    count, per_cell = cells.shape
    dim = vertices.shape[1]
    low = np.empty((count, dim))
    high = np.empty((count, dim))
    centroid = np.empty((count, dim))
    for i in range(count):
        for k in range(dim):
            lo, hi, total = np.inf, -np.inf, 0.0
            for j in range(per_cell):
                x = vertices[cells[i, j], k]
                lo, hi, total = min(lo, x), max(hi, x), total + x
            low[i, k], high[i, k], centroid[i, k] = lo, hi, total / per_cell
    order = np.arange(count)
    capacity = 2 * count + 1
    box = np.empty((capacity, 2 * dim))
    child = np.full((capacity, 2), -1, np.int64)
    first = np.zeros(capacity, np.int64)
    size = np.zeros(capacity, np.int64)
    nodes = 1
    first[0], size[0] = 0, count
    stack = [0]
    while len(stack):
        node = stack.pop()
        start, n = first[node], size[node]
        for k in range(dim):
            lo, hi = np.inf, -np.inf
            for i in range(start, start + n):
                lo, hi = min(lo, low[order[i], k]), max(hi, high[order[i], k])
            box[node, k], box[node, dim + k] = lo, hi
        if n <= LEAF_SIZE:
            continue
        axis, widest, axis_low = 0, -1.0, 0.0
        for k in range(dim):
            lo, hi = np.inf, -np.inf
            for i in range(start, start + n):
                lo, hi = min(lo, centroid[order[i], k]), max(hi, centroid[order[i], k])
            if hi - lo > widest:
                axis, widest, axis_low = k, hi - lo, lo
        half = _split(order, start, n, axis, axis_low, widest, centroid, low, high,
                      dim) if widest > 0 else 0
        if half == 0:
            # Centroids all in one bin: sort the range along the axis and cut it in half.
            part = order[start:start + n].copy()
            keys = np.empty(n)
            for i in range(n):
                keys[i] = centroid[part[i], axis]
            order[start:start + n] = part[np.argsort(keys, kind="mergesort")]
            half = n // 2
        for s, m in ((start, half), (start + half, n - half)):
            child[node, 0 if s == start else 1] = nodes
            first[nodes], size[nodes] = s, m
            stack.append(nodes)
            nodes += 1
    corners = np.empty((count, per_cell, dim))
    cell_box = np.empty((count, 2 * dim))
    for i in range(count):
        for k in range(dim):
            cell_box[i, k], cell_box[i, dim + k] = low[order[i], k], high[order[i], k]
            for j in range(per_cell):
                corners[i, j, k] = vertices[cells[order[i], j], k]
    return (box[:nodes].copy(), child[:nodes].copy(), first[:nodes].copy(),
            size[:nodes].copy(), order, corners, cell_box)


@njit(inline="always", **_JIT)
def _box_gap2(px, py, pz, box, node):
    """Squared distance from p to the box of `node`: box rows are (low..., high...)."""
    dim = box.shape[1] // 2
    total = 0.0
    for k in range(dim):
        x = px if k == 0 else (py if k == 1 else pz)
        low, high = box[node, k], box[node, dim + k]
        if x < low:
            total += (low - x) * (low - x)
        elif x > high:
            total += (x - high) * (x - high)
    return total


@njit(**_JIT)
def _nearest(px, py, pz, best2, best, box, child, first, size, corners, cell_box, stack):
    """(squared distance, slot in tree order) of the closest element to p: `best` (a slot
    at squared distance best2, or -1 with best2 the squared search radius) unless an element
    is strictly closer (or, with best = -1, as close)."""
    if _box_gap2(px, py, pz, box, 0) > best2:
        return best2, best
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        node = stack[top]
        if _box_gap2(px, py, pz, box, node) > best2:
            continue
        if child[node, 0] < 0:
            for slot in range(first[node], first[node] + size[node]):
                if _box_gap2(px, py, pz, cell_box, slot) > best2:
                    continue
                _, qx, qy, qz = _on_element(px, py, pz, corners, slot)
                gap2 = _gap2(px, py, pz, qx, qy, qz)
                if gap2 < best2 or (gap2 == best2 and best < 0):
                    best2, best = gap2, slot
            continue
        near, far = child[node, 0], child[node, 1]
        near_gap, far_gap = _box_gap2(px, py, pz, box, near), _box_gap2(px, py, pz, box, far)
        if far_gap < near_gap:
            near, far, near_gap, far_gap = far, near, far_gap, near_gap
        if far_gap <= best2:
            stack[top] = far
            top += 1
        if near_gap <= best2:
            stack[top] = near
            top += 1
    return best2, best


@njit(**_JIT)
def _point(points, i):
    if points.shape[1] == 2:
        return points[i, 0], points[i, 1], 0.0
    return points[i, 0], points[i, 1], points[i, 2]


@njit(**_JIT)
def query(points, radius, box, child, first, size, order, corners, cell_box):
    """Exact closest points of points (k, dim) within radius (k,) (inf: unbounded):
    (distance, cell, point, feature); inf, -1, NaN, -1 where no cell lies within radius.

    Neighbouring queries are usually near each other: the previous answer's element,
    measured exactly from the new point, starts the search with a tight bound.
    """
    count, dim = points.shape
    distance = np.full(count, np.inf)
    cell = np.full(count, -1, np.int64)
    closest = np.full((count, dim), np.nan)
    feature = np.full(count, -1, np.int64)
    stack = np.empty(_STACK, np.int64)
    previous = -1
    for i in range(count):
        px, py, pz = _point(points, i)
        limit = radius[i]
        best2 = limit * limit if limit < np.inf else np.inf
        best = -1
        if previous >= 0:
            _, qx, qy, qz = _on_element(px, py, pz, corners, previous)
            gap2 = _gap2(px, py, pz, qx, qy, qz)
            if gap2 <= best2:
                best2, best = gap2, previous
        best2, slot = _nearest(px, py, pz, best2, best, box, child, first, size, corners,
                               cell_box, stack)
        if slot < 0:
            continue
        previous = slot
        code, qx, qy, qz = _on_element(px, py, pz, corners, slot)
        feature[i], cell[i] = code, order[slot]
        closest[i, 0], closest[i, 1] = qx, qy
        if dim == 3:
            closest[i, 2] = qz
        distance[i] = math.sqrt(_gap2(px, py, pz, qx, qy, qz))
    return distance, cell, closest, feature


@njit(**_JIT)
def to_cells(points, corners):
    """Exact distance, closest point and feature of each point on its own element:
    corners (k, 2 or 3, dim), one row per point."""
    count, dim = points.shape
    distance = np.empty(count)
    closest = np.empty((count, dim))
    feature = np.empty(count, np.int64)
    for i in range(count):
        px, py, pz = _point(points, i)
        code, qx, qy, qz = _on_element(px, py, pz, corners, i)
        feature[i] = code
        closest[i, 0], closest[i, 1] = qx, qy
        if dim == 3:
            closest[i, 2] = qz
        distance[i] = math.sqrt(_gap2(px, py, pz, qx, qy, qz))
    return distance, closest, feature


@njit(**_JIT)
def any_within(points, threshold, box, child, first, size, order, corners, cell_box):
    """Per point: is some element at exact distance <= threshold? (The same answer as
    comparing the closest element's distance, found with an early exit at the first one.)"""
    count = points.shape[0]
    within = np.zeros(count, np.bool_)
    stack = np.empty(_STACK, np.int64)
    # Boxes are pruned with a little slack, so rounding never drops an element at the threshold.
    limit2 = threshold * threshold * (1 + 1e-12) + 1e-12
    for i in range(count):
        px, py, pz = _point(points, i)
        if _box_gap2(px, py, pz, box, 0) > limit2:
            continue
        stack[0] = 0
        top = 1
        while top and not within[i]:
            top -= 1
            node = stack[top]
            if child[node, 0] < 0:
                for slot in range(first[node], first[node] + size[node]):
                    if _box_gap2(px, py, pz, cell_box, slot) > limit2:
                        continue
                    _, qx, qy, qz = _on_element(px, py, pz, corners, slot)
                    if math.sqrt(_gap2(px, py, pz, qx, qy, qz)) <= threshold:
                        within[i] = True
                        break
                continue
            for side in range(2):
                if _box_gap2(px, py, pz, box, child[node, side]) <= limit2:
                    stack[top] = child[node, side]
                    top += 1
    return within


@njit(**_JIT)
def _within_one(px, py, pz, limit2, threshold, hint, box, child, corners, cell_box, first,
                size, stack):
    """Slot of an element at exact distance <= threshold from p (the hint first), or -1."""
    if hint >= 0:
        _, qx, qy, qz = _on_element(px, py, pz, corners, hint)
        if math.sqrt(_gap2(px, py, pz, qx, qy, qz)) <= threshold:
            return hint
    if _box_gap2(px, py, pz, box, 0) > limit2:
        return -1
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        node = stack[top]
        if child[node, 0] < 0:
            for slot in range(first[node], first[node] + size[node]):
                if _box_gap2(px, py, pz, cell_box, slot) > limit2:
                    continue
                _, qx, qy, qz = _on_element(px, py, pz, corners, slot)
                if math.sqrt(_gap2(px, py, pz, qx, qy, qz)) <= threshold:
                    return slot
            continue
        near, far = child[node, 0], child[node, 1]
        near_gap, far_gap = _box_gap2(px, py, pz, box, near), _box_gap2(px, py, pz, box, far)
        if far_gap < near_gap:
            near, far, near_gap, far_gap = far, near, far_gap, near_gap
        if far_gap <= limit2:
            stack[top] = far
            top += 1
        if near_gap <= limit2:
            stack[top] = near
            top += 1
    return -1


@njit(**_JIT)
def decide_points(index, side, origin, step, threshold, slack, inside, within, shape,
                  corner_distance, corner_closest, centre_closest,
                  box, child, first, size, order, corners, cell_box):
    """The point stage of BIoU's band decisions (see `biou._decide_points`), compiled.

    index (k, dim): pending blocks of `side` points per axis; inside, within: the padded
    grid's flags, flattened (C order, `shape` per axis); corner_distance (k, 2^dim) and
    corner_closest (k, 2^dim, dim): exact distance (capped at the search radius) and closest
    point (NaN: none) at the blocks' cell corners, in itertools.product order;
    centre_closest (k, dim): the block centres' closest points. Every inside point of the
    blocks gets within = (exact distance <= threshold): by the concavity bound (out), by a
    known closest point (in), else by its own exact search. Returns how many searched.
    """
    count, dim = index.shape
    n_corners = corner_distance.shape[1]
    stack = np.empty(_STACK, np.int64)
    limit2 = threshold * threshold * (1 + 1e-12) + 1e-12
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
    hint = -1
    x = np.zeros(3)
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
            searched += 1
            slot = _within_one(x[0], x[1], x[2], limit2, threshold, hint, box, child,
                               corners, cell_box, first, size, stack)
            if slot >= 0:
                within[flat] = True
                hint = slot
    return searched
