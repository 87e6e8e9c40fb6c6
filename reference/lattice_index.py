"""Closest elements of a lattice mesh, searched over its cube buckets (`LatticeIndex`).

The default index of masks meshed by discrete marching cubes (module `lattice`); other
surfaces are searched by the BVH of module `closest`. The search is compiled (`search`).

The elements are sorted into buckets of whole lattice cubes (`corners` in bucket order, bucket
b holding slots start[b] to start[b + 1]); every element lies in the box of its bucket, widened
by `slack`. A query visits the buckets in growing Chebyshev rings around the bucket of the
point: after ring k, every element not yet seen lies outside the box of rings 0..k, so at least
the gap from the point to that box's nearest face (sides at the grid's end excepted) away. The
search stops when that gap reaches the best squared distance found, or exceeds the search
radius. A hinted element (a split element's closest, for its children) is measured first; its
distance bounds the answer at once, so a hinted query visits the buckets that ball reaches in
one pass instead: on far points the rings would cross each column of buckets once per ring.
Either way a bucket whose box is farther than the best distance is skipped, and an element
whose bounding box is no nearer than it.

Distances are the exact float64 ones of `elements.on_element` (the arithmetic of
`elements.to_cells`), so the distance, point and feature reported for the element found are
`to_cells`'s for it to the last bit. Of elements at exactly the same distance the hinted one
is named, else the one the rings meet first: the lowest in rank (ring of its bucket around
the point's, slot).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.closest import ClosestPoints, SurfaceIndex, plain
from reference.elements import JIT, on_element, point_at, squared_gap
from reference.lattice import Lattice

BUCKETS_PER_ELEMENT = 8
"""At most this many buckets per element (`_bucket_sides`): beyond it (a large field around a
small surface) buckets grow along every axis."""


class LatticeIndex(SurfaceIndex):
    """Exact closest elements on a lattice mesh, searched over its cube buckets.

    The queries of `closest.SurfaceIndex` without a tree: each element lies in its cube
    (module `lattice`), so the cube grid is the index (`search`, exact float64), and its
    distances are those of the BVH's exact re-measure (`elements.to_cells`) to the last bit.
    """

    def __init__(self, vertices: np.ndarray, cells: np.ndarray, lattice: Lattice):
        self._keep(vertices, cells)  # no BVH: the cube grid is the index
        doubled = lattice.doubled(self.vertices)
        on_lattice = (doubled / 2.0 - 1.0) * lattice.spacing + lattice.origin
        side = _bucket_sides(lattice, len(self.cells))
        buckets = np.array([*(-(-np.array(lattice.cubes) // side)), *[1] * (3 - self.dim)])
        # int32 (the kernel reads either): at one bucket per cube or two the bucket table
        # is as large as the mask, and it lives through the distance pass.
        self._member, self._slot, self._corners, self._start, in_cube = bucket_elements(
            doubled, self.vertices, self.cells, side, buckets
        )
        if not in_cube:
            raise ValueError("the surface is not a mesh of the lattice: an element leaves its cube")
        self._buckets = buckets
        self._low = np.zeros(3)
        self._low[: self.dim] = lattice.origin - lattice.spacing  # u = 0
        self._step = np.ones(3)
        self._step[: self.dim] = side * lattice.spacing
        # Elements leave their buckets' boxes by VTK's float32 rounding of the vertices at
        # most; the slack covers that and float64 rounding of the box faces.
        extent = float(np.abs(self.vertices).max(initial=1.0))
        self._slack = float(np.abs(self.vertices - on_lattice).max(initial=0.0)) + 1e-12 * extent

    def _query(self, points: np.ndarray, radius, hint=None) -> ClosestPoints:
        """The cube index's exact closest elements (`search`), one chunk of `query`."""
        radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(points),))
        cells, per = (np.empty(0, np.int64), 1) if hint is None else hint
        found = search(
            plain(points),
            plain(radius),
            np.ascontiguousarray(cells, np.int64),
            per,
            self._slot,
            self._corners,
            self._start,
            self._member,
            self._low,
            self._step,
            self._buckets,
            self._slack,
        )
        return ClosestPoints(*found)


def indexes(surface_a, surface_b, lattice: Lattice):
    """The `LatticeIndex` of both surfaces."""
    return tuple(LatticeIndex(*surface, lattice) for surface in (surface_a, surface_b))


def _bucket_sides(lattice: Lattice, elements: int) -> np.ndarray:
    """Bucket sides in cubes per axis: as near to the same length in mm along every axis as
    whole cubes allow, starting from the voxel's geometric-mean edge, and grown until there
    are at most BUCKETS_PER_ELEMENT buckets per element.

    The search's rings grow by one bucket along every axis at once, so on an anisotropic grid
    cube-sized buckets make it visit many buckets along the fine axes to cover a distance the
    coarse axis covers in one (0.5 x 0.5 x 2 mm: 4 rings for 2 mm in-plane, which reach 8 mm
    along the slices)."""
    cubes = np.array(lattice.cubes)
    spacing = np.asarray(lattice.spacing, float)
    edge = float(np.exp(np.log(spacing).mean()))
    while True:
        side = np.maximum(1, np.round(edge / spacing)).astype(np.int64)
        if np.prod(-(-cubes // side)) <= BUCKETS_PER_ELEMENT * max(elements, 1):
            return side
        edge += float(spacing.min())


@njit(inline="always", **JIT)
def _axis_gap(value, index, low, step, slack):
    """Distance along one axis from a coordinate to bucket `index`'s extent, widened by slack."""
    lower = low + index * step - slack
    return max(lower - value, value - (lower + step + 2 * slack), 0.0)


@njit(inline="always", **JIT)
def _ring_gap(value, home, k, count, low, step, slack):
    """Distance along one axis from a coordinate to the nearer face of the extent of rings
    0..k that has buckets beyond it; inf when the rings reach both ends of the axis."""
    gap = np.inf
    if home - k > 0:
        gap = value - (low + (home - k) * step - slack)
    if home + k < count - 1:
        gap = min(gap, low + (home + k + 1) * step + slack - value)
    return gap


@njit(inline="always", **JIT)
def _home(value, low, step, count):
    """Bucket index along one axis of a coordinate, clamped to the grid."""
    return min(max(math.floor((value - low) / step), 0), count - 1)


@njit(inline="always", **JIT)
def _box_gap2(px, py, pz, corners, slot):
    """Squared distance from p to the bounding box of element `slot`: a lower bound of its
    distance that costs a few comparisons, where the exact one costs a closest-point solve."""
    if corners.shape[1] == 3 and corners.shape[2] == 3:  # triangles in 3D, unrolled (5 % faster)
        a0, a1, a2 = corners[slot, 0, 0], corners[slot, 0, 1], corners[slot, 0, 2]
        b0, b1, b2 = corners[slot, 1, 0], corners[slot, 1, 1], corners[slot, 1, 2]
        c0, c1, c2 = corners[slot, 2, 0], corners[slot, 2, 1], corners[slot, 2, 2]
        gap = max(min(a0, b0, c0) - px, px - max(a0, b0, c0), 0.0)
        gap2 = gap * gap
        gap = max(min(a1, b1, c1) - py, py - max(a1, b1, c1), 0.0)
        gap2 += gap * gap
        gap = max(min(a2, b2, c2) - pz, pz - max(a2, b2, c2), 0.0)
        return gap2 + gap * gap
    gap2 = 0.0
    for axis in range(corners.shape[2]):
        value = px if axis == 0 else (py if axis == 1 else pz)
        low = high = corners[slot, 0, axis]
        for j in range(1, corners.shape[1]):
            low = min(low, corners[slot, j, axis])
            high = max(high, corners[slot, j, axis])
        gap = max(low - value, value - high, 0.0)
        gap2 += gap * gap
    return gap2


@njit(**JIT)
def search(points, radius, hint, per, slot_of, corners, start, member, low, step, buckets, slack):
    """Exact closest element of each point within its radius: (distance, cell, point, feature);
    inf, -1, NaN, -1 where no element lies within radius[i] (padded like `closest`'s BVH
    search, so an element at exactly the radius is found).

    corners (m, n, dim): elements in bucket order, member[slot] = their cell index; start
    (buckets + 1): first slot of each bucket in C order over `buckets` (3 ints; 1 for the third
    axis in 2D); low, step: the bucket grid's first corner and bucket sides in mm (3 each).
    hint (cells, may be empty), per: cell hint[i // per] is tried first for point i;
    slot_of[cell] is its position in bucket order.
    """
    count, dim = points.shape
    distance = np.empty(count)
    cell = np.empty(count, np.int64)
    closest = np.empty((count, dim))
    feature = np.empty(count, np.int64)
    nx, ny, nz = buckets[0], buckets[1], buckets[2]
    for i in range(count):
        px, py, pz = point_at(points, i)
        reach2 = np.inf
        if math.isfinite(radius[i]):
            reach = radius[i] * (1 + 1e-5) + 1e-4
            reach2 = reach * reach
        hx = _home(px, low[0], step[0], nx)
        hy = _home(py, low[1], step[1], ny)
        hz = _home(pz, low[2], step[2], nz)
        best2, best, best_feature = np.inf, -1, -1
        qx = qy = qz = np.nan
        tried = -1
        if len(hint) and hint[i // per] >= 0:  # a likely closest element first
            tried = slot_of[hint[i // per]]
            code, x, y, z = on_element(px, py, pz, corners, tried)
            best2, best, best_feature = squared_gap(px, py, pz, x, y, z), member[tried], code
            qx, qy, qz = x, y, z
        # The ball's pass and the rings below are written out apiece: through shared inline
        # helpers numba compiled both about 10 % slower. The rings need no rank test, since
        # they meet elements in rank order.
        rings = best2 == np.inf
        if not rings:  # the ball of the hinted distance, in one pass
            best_ring, best_slot = -1, tried  # the hinted element ranks before every other
            r = math.sqrt(min(best2, reach2)) * (1 + 1e-9) + slack  # 1e-9: sqrt's rounding
            x0, x1 = _home(px - r, low[0], step[0], nx), _home(px + r, low[0], step[0], nx)
            y0, y1 = _home(py - r, low[1], step[1], ny), _home(py + r, low[1], step[1], ny)
            z0, z1 = _home(pz - r, low[2], step[2], nz), _home(pz + r, low[2], step[2], nz)
            for ix in range(x0, x1 + 1):
                gap_x = _axis_gap(px, ix, low[0], step[0], slack)
                if gap_x * gap_x > best2:
                    continue
                for iy in range(y0, y1 + 1):
                    gap_y = _axis_gap(py, iy, low[1], step[1], slack)
                    gap_xy2 = gap_x * gap_x + gap_y * gap_y
                    if gap_xy2 > best2:
                        continue
                    base = (ix * ny + iy) * nz
                    for iz in range(z0, z1 + 1):
                        first, last = start[base + iz], start[base + iz + 1]
                        if first == last:
                            continue
                        gap_z = _axis_gap(pz, iz, low[2], step[2], slack)
                        if gap_xy2 + gap_z * gap_z > best2:
                            continue
                        ring = max(abs(ix - hx), abs(iy - hy), abs(iz - hz))
                        for slot in range(first, last):
                            if slot == tried:
                                continue
                            box2 = _box_gap2(px, py, pz, corners, slot)
                            if box2 > best2 or (
                                box2 == best2
                                and (best_ring < ring or (best_ring == ring and best_slot < slot))
                            ):
                                continue  # no nearer, nor tied with the best and of lower rank
                            code, x, y, z = on_element(px, py, pz, corners, slot)
                            gap2 = squared_gap(px, py, pz, x, y, z)
                            if gap2 < best2 or (
                                gap2 == best2
                                and (ring < best_ring or (ring == best_ring and slot < best_slot))
                            ):
                                best2, best, best_feature = gap2, member[slot], code
                                qx, qy, qz = x, y, z
                                best_ring, best_slot = ring, slot
        k = 0
        while rings:
            for ix in range(max(hx - k, 0), min(hx + k, nx - 1) + 1):
                gap_x = _axis_gap(px, ix, low[0], step[0], slack)
                if gap_x * gap_x > min(best2, reach2):
                    continue
                for iy in range(max(hy - k, 0), min(hy + k, ny - 1) + 1):
                    gap_y = _axis_gap(py, iy, low[1], step[1], slack)
                    gap_xy2 = gap_x * gap_x + gap_y * gap_y
                    if gap_xy2 > min(best2, reach2):
                        continue
                    # On the ring's x or y faces the whole z extent is new; inside them only
                    # its two z faces, hz - k and hz + k.
                    on_face = abs(ix - hx) == k or abs(iy - hy) == k
                    for iz in range(hz - k, hz + k + 1, 1 if on_face else 2 * k):
                        if iz < 0 or iz >= nz:
                            continue
                        bucket = (ix * ny + iy) * nz + iz
                        first, last = start[bucket], start[bucket + 1]
                        if first == last:
                            continue
                        gap_z = _axis_gap(pz, iz, low[2], step[2], slack)
                        if gap_xy2 + gap_z * gap_z > min(best2, reach2):
                            continue
                        for slot in range(first, last):
                            if _box_gap2(px, py, pz, corners, slot) >= best2:
                                continue  # no nearer than the best (the first met wins)
                            code, x, y, z = on_element(px, py, pz, corners, slot)
                            gap2 = squared_gap(px, py, pz, x, y, z)
                            if gap2 < best2:
                                best2, best, best_feature = gap2, member[slot], code
                                qx, qy, qz = x, y, z
            gap = min(
                _ring_gap(px, hx, k, nx, low[0], step[0], slack),
                _ring_gap(py, hy, k, ny, low[1], step[1], slack),
                _ring_gap(pz, hz, k, nz, low[2], step[2], slack),
            )
            if gap == np.inf or gap * gap >= best2 or gap * gap > reach2:
                break
            k += 1
        if best2 <= reach2:
            distance[i], cell[i], feature[i] = math.sqrt(best2), best, best_feature
            closest[i, 0], closest[i, 1] = qx, qy
            if dim == 3:
                closest[i, 2] = qz
        else:
            distance[i], cell[i], feature[i] = np.inf, -1, -1
            closest[i, :] = np.nan
    return distance, cell, closest, feature


@njit(**JIT)
def bucket_elements(doubled, vertices, cells, side, buckets):
    """The cube index of a lattice mesh in one pass and a counting sort: each element's bucket
    is the C-order flat index, over a grid of `buckets`, of its cube (floor of its centroid's
    u, as `lattice._cube_of`) divided by the bucket sides `side`. Returns (member, slot,
    corners, start, in_cube): member[s] the element in bucket-order slot s (elements of one
    bucket in their own order), slot its inverse, corners (m, n, dim) the elements' corners in
    slot order, start (buckets + 1) each bucket's first slot, and whether every element lies
    in its cube's closed box and every cube in the grid. doubled (n, dim): the 2u of every
    vertex; vertices (n, dim) in mm."""
    count, per_cell = cells.shape
    dim = doubled.shape[1]
    bucket = np.empty(count, np.int64)
    start = np.zeros(buckets[0] * buckets[1] * buckets[2] + 1, np.int32)
    in_cube = True
    for i in range(count):
        flat = 0
        for axis in range(dim):
            total = 0
            for j in range(per_cell):
                total += doubled[cells[i, j], axis]
            cube = total // (2 * per_cell)
            for j in range(per_cell):
                value = doubled[cells[i, j], axis]
                in_cube = in_cube and 2 * cube <= value <= 2 * cube + 2
            in_cube = in_cube and 0 <= cube // side[axis] < buckets[axis]
            flat = flat * buckets[axis] + cube // side[axis]
        if not in_cube:
            break
        bucket[i] = flat
        start[flat + 1] += 1
    member = np.empty(count, np.int32)
    slot = np.empty(count, np.int32)
    corners = np.empty((count, per_cell, dim))
    if not in_cube:
        return member, slot, corners, start, in_cube
    for b in range(len(start) - 1):
        start[b + 1] += start[b]
    filled = start[:-1].copy()
    for i in range(count):
        s = filled[bucket[i]]
        filled[bucket[i]] += 1
        member[s], slot[i] = i, s
        for j in range(per_cell):
            for axis in range(dim):
                corners[s, j, axis] = vertices[cells[i, j], axis]
    return member, slot, corners, start, in_cube
