"""Compiled (numba) kernels of the reference's hot loops.

`point_bounds` is the bound stage of BIoU's point decisions (`biou._decide_points`) as one loop
over the points: the same bounds as the numpy code, which decide only where they are rigorous,
so the points' answers are the same; the points they leave open go to the same exact search.

Compiled functions are cached on disk (`cache=True`, in `__pycache__` beside this file, or
where NUMBA_CACHE_DIR points): numba writes each cache file under a temporary name and renames
it into place, so processes compiling at once on a cold cache each write whole files and later
processes load them. The functions take C-contiguous float64 / int64 arrays only (the callers
make sure), so each has one compiled version.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def point_bounds(index, side, step, threshold, slack, inside, within, shape,
                 corner_distance, corner_closest, centre_closest, origin):
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
