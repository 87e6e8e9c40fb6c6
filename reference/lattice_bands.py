"""Boundary IoU of two masks' lattice meshes, counted by case-code tables: no dense grid.

BIoU counts dense points (`dense_grid.DENSE_FACTOR` = 5 per voxel and axis) in X_b = {x in X :
d_X(x) <= tau}. In the padded lattice coordinates u of module `lattice`, the dense points that
can lie in a mask sit at u = c + k / 5, k in {0..4}^dim, for the cubes c of the lattice: 125
points per cube in 3D (25 per square in 2D), bit (k0 * 5 + k1) * 5 + k2 of a 128-bit word
(two uint64). Module `lattice` shows that the mesh inside a cube is a function of the cube's
case code, so:

* **inside X** is a function of the code: `inside_table` holds, per code, the cube's points in
  the closed region X (a point on the surface is in X; its distance to X's surface is 0).
* **d_X(x) <= tau** holds when some element of X is within tau of x, and every element lies in
  the closed box of its cube: only cubes c + o whose box is within tau of the box of c's
  points matter (`reach`). Per offset o and code, `within_bits` marks the cube's points within
  tau of the elements that code puts in cube c + o; d_X(x) <= tau is the OR over o.

So band_X(c) = inside[code_X(c)] & OR_o within[o, code_X(c + o)], and the counts are
popcounts: `count_by_tables`. The OR is scattered from the cubes that hold elements (the surface)
onto their neighbours, a slab of cubes at a time, so memory stays bounded. Distances are
measured on the exact lattice elements (VTK's float32 vertices rounded back), with the tie
threshold of the distance pass (`distance_pass.tie_threshold`), so points at exactly tau are in.
They depend on the spacing and tau alone, and a process keeps them for later pairs
(`count_by_tables`).

The dense-grid count of module `biou` is an independent path to the same numbers:
`tests/test_lattice.py` checks that the two agree point for point.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import threading
from dataclasses import dataclass

import numpy as np
from numba import njit

from reference import lattice
from reference.biou import BandCounts
from reference.dense_grid import DENSE_FACTOR
from reference.elements import JIT, on_element, squared_gap
from reference.geometry import brute_force_distances

WORDS = 2
"""uint64 words per cube: 5^3 = 125 points fit in two."""

MAX_OFFSETS = 4096
"""Most neighbour offsets the tables take (their within bits: 4 kB per offset and code, 16 MB
at this many): tau up to about seven voxels along each axis. Beyond it (`fits`), BIoU is
counted on the dense grid (module `biou`)."""

SLAB_CUBES = 1 << 20
"""Cubes per slab of the scatter (two 16-byte words each per surface: 32 MB)."""

KEPT_TABLES = 4
"""(dim, spacing, tau) whose measured tables a process keeps (at most 26 MB each, at
MAX_OFFSETS; about 1 MB at tau = 2 mm and 1 mm voxels)."""


@functools.lru_cache(maxsize=2)
def cube_points(dim: int) -> np.ndarray:
    """(5^dim, dim) the points' offsets k / 5 from their cube's first corner, in bit order
    (made once per dimension; read only)."""
    steps = np.arange(DENSE_FACTOR) / DENSE_FACTOR
    points = np.array(list(itertools.product(steps, repeat=dim)))
    points.flags.writeable = False
    return points


def _bits(flags: np.ndarray) -> np.ndarray:
    """(..., 5^dim) bools -> (..., WORDS) uint64, point p at bit p % 64 of word p // 64."""
    padded = np.zeros((*flags.shape[:-1], 64 * WORDS), bool)
    padded[..., : flags.shape[-1]] = flags
    weights = np.uint64(1) << np.arange(64, dtype=np.uint64)
    words = padded.reshape(*flags.shape[:-1], WORDS, 64).astype(np.uint64) * weights
    return np.bitwise_or.reduce(words, axis=-1)


RAY = np.array([0.5773502691896258, 0.3090169943749474, 0.7559289460184544])
"""A generic direction (no lattice plane, edge or vertex is met exactly by a ray along it
from a point of the cube: its components are irrational to each other)."""


@functools.cache
def inside_table(dim: int) -> np.ndarray:
    """(2^(2^dim), WORDS) uint64: per case code, the cube's points in the closed region X.

    Read off VTK's mesh of each single-cube pattern (the same meshes as `lattice.case_table`):
    a point on that mesh is in X; any other point is in X when a ray from it crosses the
    closed mesh an odd number of times (parity needs no orientation: VTK's 2D segments have
    none)."""
    points = cube_points(dim)
    table = np.zeros((2 ** (2**dim), WORDS), np.uint64)
    for code, (vertices, cells) in enumerate(lattice.pattern_meshes(dim)):
        if len(cells) == 0:
            continue
        on_surface = brute_force_distances(points, vertices, cells) < 1e-9
        inside = on_surface | (_crossings(points, vertices[cells], RAY[:dim]) % 2 == 1)
        table[code] = _bits(inside)
    return table


def _crossings(points: np.ndarray, corners: np.ndarray, ray: np.ndarray) -> np.ndarray:
    """How many elements (corners (m, n, dim)) the ray from each point along `ray` crosses:
    solve point + t ray = a + s (b - a) [+ w (c - a)] with t > 0 and (s, w) in the element."""
    a = corners[:, 0]
    edges = corners[:, 1:] - a[:, None]  # (m, n - 1, dim)
    # Columns: the element's edge vectors and -ray; unknowns (s[, w], t).
    backwards = -np.broadcast_to(ray, a.shape)[:, :, None]
    matrix = np.concatenate([np.swapaxes(edges, 1, 2), backwards], axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        solved = np.linalg.solve(matrix[None], (points[:, None] - a[None])[..., None])[..., 0]
    weights, t = solved[..., :-1], solved[..., -1]
    within = np.all(weights >= 0, axis=-1) & (weights.sum(axis=-1) <= 1)
    return np.count_nonzero(within & (t > 0), axis=1)


def _window(spacing: np.ndarray, threshold: float) -> list[range]:
    """Per axis, the offsets o whose slab [o, o + 1] lies within `threshold` (mm) of [0, 4/5]:
    the gap is max(o - 4/5, -o - 1, 0) voxels."""
    lead = (DENSE_FACTOR - 1) / DENSE_FACTOR
    return [
        range(-math.floor(threshold / s + 1), math.floor(threshold / s + lead) + 1)
        for s in np.asarray(spacing, float)
    ]


def reach(spacing: np.ndarray, threshold: float) -> np.ndarray:
    """(r, dim) the cube offsets o whose box [o, o + 1] lies within `threshold` (mm) of the
    box [0, 4/5] of a cube's points (the corners of the window of `_window` cut off)."""
    spacing = np.asarray(spacing, float)
    offsets = np.array(list(itertools.product(*_window(spacing, threshold))), np.int64)
    lead = (DENSE_FACTOR - 1) / DENSE_FACTOR
    gap = np.maximum(np.maximum(offsets - lead, -offsets - 1.0), 0.0) * spacing
    return offsets[np.sum(gap * gap, axis=1) <= threshold * threshold]


def fits(spacing, threshold: float) -> bool:
    """Do the tables hold the neighbourhood of this spacing and tau (`MAX_OFFSETS`)? The
    window is counted first, so a huge tau is refused without listing its offsets."""
    if math.prod(len(axis) for axis in _window(spacing, threshold)) > 4 * MAX_OFFSETS:
        return False
    return len(reach(spacing, threshold)) <= MAX_OFFSETS


def table_corners(spacing: np.ndarray):
    """Per case code, its elements' corners in mm from the cube's first corner: (corners (e,
    n, dim) float64, start (codes + 1)); code c's elements are rows start[c] .. start[c + 1].
    Made once per spacing (KEPT_TABLES of them kept, as the within tables)."""
    return _table_corners(tuple(float(step) for step in spacing))


@functools.lru_cache(maxsize=KEPT_TABLES)
def _table_corners(spacing: tuple[float, ...]):
    table = lattice.case_table(len(spacing))
    start = np.concatenate([[0], np.cumsum([len(elements) for elements in table])])
    dim = len(spacing)
    doubled = np.concatenate(table) if start[-1] else np.empty((0, dim, dim), np.int64)
    return np.ascontiguousarray(doubled * (0.5 * np.asarray(spacing, float))), start


@njit(**JIT)
def _within_entry(q, code, points, corners, start, offsets, spacing, cut, within, gap):
    """Set bit p of within[q, code] when point p of a cube (points (P, dim), mm from its
    first corner) is within `cut` of an element that `code` puts in the cube at offsets[q],
    and set gap[q, code] to a lower bound of the distances of the other points (inf if none).
    A point farther than `cut` from the elements' bounding box is not measured: its box
    distance is that lower bound."""
    dim = points.shape[1]
    limit = cut * cut
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for slot in range(start[code], start[code + 1]):
        for j in range(corners.shape[1]):
            for axis in range(dim):
                low[axis] = min(low[axis], corners[slot, j, axis])
                high[axis] = max(high[axis], corners[slot, j, axis])
    for axis in range(dim, 3):
        low[axis] = high[axis] = 0.0
    beyond = np.inf
    for p in range(len(points)):
        # The point seen from the neighbour cube's first corner.
        px = points[p, 0] - offsets[q, 0] * spacing[0]
        py = points[p, 1] - offsets[q, 1] * spacing[1]
        pz = points[p, 2] - offsets[q, 2] * spacing[2] if dim == 3 else 0.0
        gx = max(low[0] - px, px - high[0], 0.0)
        gy = max(low[1] - py, py - high[1], 0.0)
        gz = max(low[2] - pz, pz - high[2], 0.0)
        box2 = gx * gx + gy * gy + gz * gz
        if box2 > limit:
            beyond = min(beyond, math.sqrt(box2))
            continue
        nearest2, found = np.inf, False
        for slot in range(start[code], start[code + 1]):
            _, x, y, z = on_element(px, py, pz, corners, slot)
            nearest2 = min(nearest2, squared_gap(px, py, pz, x, y, z))
            if nearest2 <= limit and math.sqrt(nearest2) <= cut:
                within[q, code, p // 64] |= np.uint64(1) << np.uint64(p % 64)
                found = True
                break
        if not found:
            beyond = min(beyond, math.sqrt(nearest2))
    gap[q, code] = beyond


@njit(inline="always", **JIT)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(**JIT)
def _own_row(q, code, measure) -> bool:
    """Measure row (q, code) of the kept tables if not yet measured; True when this call needs
    its own row instead (a point beyond the kept cut lies within the threshold), measured
    at the threshold itself."""
    points, corners, start, offsets, spacing, kept, threshold, own = measure
    cut, within, gap, measured = kept
    if not measured[q, code]:
        _within_entry(q, code, points, corners, start, offsets, spacing, cut, within, gap)
        measured[q, code] = True
    if gap[q, code] > threshold:
        return False
    own_within, own_gap, own_measured = own
    if not own_measured[q, code]:
        _within_entry(
            q, code, points, corners, start, offsets, spacing, threshold, own_within, own_gap
        )
        own_measured[q, code] = True
    return True


@njit(**JIT)
def _scatter(codes, surface, shifts, first, words, measure):
    """OR the within bits of (q, code(s)) into cube s - shifts[q] of the slab [first, first +
    len(words)) for every surface cube s (flat C-order indices, sorted) that can reach the
    slab; only cubes with inside points (code != 0) get them (rows measured by `_own_row`)."""
    _, within, gap, measured = measure[5]
    threshold, own_within = measure[6], measure[7][0]
    n0, n1, n2 = codes.shape
    count = words.shape[0]
    low = first + shifts[:, 0].min()
    high = first + count + shifts[:, 0].max()
    i = np.searchsorted(surface, low * n1 * n2)
    while i < len(surface) and surface[i] < high * n1 * n2:
        s = surface[i]
        s0, rest = s // (n1 * n2), s % (n1 * n2)
        s1, s2 = rest // n2, rest % n2
        code = codes[s0, s1, s2]
        for q in range(len(shifts)):
            t0, t1, t2 = s0 - shifts[q, 0], s1 - shifts[q, 1], s2 - shifts[q, 2]
            if first <= t0 < first + count and 0 <= t1 < n1 and 0 <= t2 < n2:
                if codes[t0, t1, t2] != 0:
                    own = False
                    if not measured[q, code] or gap[q, code] <= threshold:
                        own = _own_row(q, code, measure)
                    if own:
                        words[t0 - first, t1, t2, 0] |= own_within[q, code, 0]
                        words[t0 - first, t1, t2, 1] |= own_within[q, code, 1]
                    else:
                        words[t0 - first, t1, t2, 0] |= within[q, code, 0]
                        words[t0 - first, t1, t2, 1] |= within[q, code, 1]
        i += 1


@njit(**JIT)
def _count(codes_a, codes_b, inside, words_a, words_b, first, counts):
    """Add the slab's points in A_b, B_b, both, and in A, B, both to counts (6,)."""
    for i in range(words_a.shape[0]):
        for j in range(codes_a.shape[1]):
            for k in range(codes_a.shape[2]):
                ca, cb = codes_a[first + i, j, k], codes_b[first + i, j, k]
                if ca == 0 and cb == 0:
                    continue
                for w in range(2):
                    in_a, in_b = inside[ca, w], inside[cb, w]
                    band_a = in_a & words_a[i, j, k, w]
                    band_b = in_b & words_b[i, j, k, w]
                    counts[0] += _popcount(band_a)
                    counts[1] += _popcount(band_b)
                    counts[2] += _popcount(band_a & band_b)
                    counts[3] += _popcount(in_a)
                    counts[4] += _popcount(in_b)
                    counts[5] += _popcount(in_a & in_b)


@njit(**JIT)
def _count_slabs(codes_a, codes_b, surface_a, surface_b, inside, shifts, slab, measure):
    """The six counts, slab by slab of `slab` cube layers along the first axis."""
    n0, n1, n2 = codes_a.shape
    counts = np.zeros(6, np.int64)
    words_a = np.zeros((slab, n1, n2, 2), np.uint64)
    words_b = np.zeros((slab, n1, n2, 2), np.uint64)
    for first in range(0, n0, slab):
        count = min(slab, n0 - first)
        words_a[:] = 0
        words_b[:] = 0
        _scatter(codes_a, surface_a, shifts, first, words_a[:count], measure)
        _scatter(codes_b, surface_b, shifts, first, words_b[:count], measure)
        _count(codes_a, codes_b, inside, words_a[:count], words_b[:count], first, counts)
    return counts


TIE = 1e-9
"""Relative margin of the kept tables' cut, tau (1 + TIE): distances measured in a cube's own
frame are exact up to float64 rounding (about 1e-15 of a voxel), so a point at exactly tau
(common on voxel grids) is within the cut whatever the pair. Any call's threshold
(`distance_pass.tie_threshold`: tau plus 1e-6 of the surfaces' extent) lies above the cut."""


@dataclass
class _Kept:
    """Within bits measured at one cut, for every (offset, code) measured so far: `gap`
    bounds from below the distances of the points left out."""

    cut: float
    within: np.ndarray
    gap: np.ndarray
    measured: np.ndarray

    def as_tuple(self):
        return self.cut, self.within, self.gap, self.measured


def _blank(cut: float, offsets: int, codes: int) -> _Kept:
    return _Kept(
        cut,
        np.zeros((offsets, codes, WORDS), np.uint64),
        np.zeros((offsets, codes)),
        np.zeros((offsets, codes), np.bool_),
    )


@functools.lru_cache(maxsize=KEPT_TABLES)
def _kept(dim: int, spacing: tuple[float, ...], tau: float) -> tuple[_Kept, threading.Lock]:
    """The tables kept for this (dim, spacing, tau), filled as calls measure them, and the lock
    that gives one call at a time the right to fill them."""
    cut = tau * (1.0 + TIE)
    offsets = len(reach(np.array(spacing), cut))
    return _blank(cut, offsets, 2 ** (2**dim)), threading.Lock()


def forget_tables() -> None:
    """Drop every kept table (the next call of each spacing and tau measures its own again)."""
    _kept.cache_clear()


def _tables(dim: int, spacing: np.ndarray, tau, threshold: float, offsets: int):
    """(tables, lock) for a call at `threshold`: the kept tables of (dim, spacing, tau) when
    they serve it (cut at or below the threshold, the same offsets in reach), else blank ones
    of the call's own, cut at the threshold."""
    if tau is not None:
        kept, lock = _kept(dim, tuple(spacing.tolist()), float(tau))
        if kept.cut <= threshold and len(kept.measured) == offsets:
            return kept, lock
    return _blank(threshold, offsets, 2 ** (2**dim)), contextlib.nullcontext()


def count_by_tables(
    a: np.ndarray, b: np.ndarray, spacing, threshold: float, *, tau: float | None = None
) -> BandCounts:
    """Dense points in A_b, B_b and both, and in A, B and both, of two masks (2D or 3D, one
    grid, `spacing` mm per axis), their surfaces the discrete-marching-cubes meshes;
    d <= threshold counts as within tau (`distance_pass.tie_threshold`).

    tau: the tolerance the threshold was made from. The within bits measured at tau's cut are
    kept for later calls with the same spacing and tau (a study's pairs share them); an
    entry with a point between the cut and this call's threshold is measured again at the
    threshold, so every count is exactly that of d <= threshold. Without tau, the call
    measures tables of its own (`_tables`)."""
    spacing = np.asarray(spacing, float)
    dim = a.ndim
    offsets = reach(spacing, threshold)
    kept, lock = _tables(dim, spacing, tau, threshold, len(offsets))
    codes = [lattice.case_codes(mask) for mask in (a, b)]
    corners, start = table_corners(spacing)
    has_elements = np.diff(start) > 0
    surfaces = [np.flatnonzero(has_elements[code.ravel()]) for code in codes]
    shifts = offsets
    if dim == 2:  # one layer of squares: the 3D loops with a first axis of one
        codes = [code[None] for code in codes]
        shifts = np.column_stack([np.zeros(len(offsets), np.int64), offsets])
    measure = (
        np.ascontiguousarray(cube_points(dim) * spacing),
        corners,
        start,
        offsets,
        spacing,
        kept.as_tuple(),
        float(threshold),
        _blank(threshold, len(offsets), kept.measured.shape[1]).as_tuple()[1:],
    )
    plane = int(np.prod(codes[0].shape[1:]))
    with lock:  # the kept tables are filled by one call at a time
        counts = _count_slabs(
            *codes,
            *surfaces,
            inside_table(dim),
            np.ascontiguousarray(shifts),
            min(codes[0].shape[0], max(1, SLAB_CUBES // plane)),
            measure,
        )
    return BandCounts(*(int(count) for count in counts))
