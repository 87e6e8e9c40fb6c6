"""Inside test of a closed triangle surface on a grid, by exact crossing parity.

For meshes whose vertices lie on the lattice of half grid steps (marching cubes' do on a
mask), the crossings of each grid line of the last axis with the surface are counted in exact
integers, ties broken by simulation of simplicity, so every grid line crosses a closed surface
consistently: a point is inside when an odd number of crossings lies below it, and a point on
the surface is in the closed region. Module `biou` uses it for the dense grid's inside tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from reference.elements import JIT


@njit(inline="always", **JIT)
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


@njit(**JIT)
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


@njit(**JIT)
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
