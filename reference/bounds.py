"""Proven brackets of the distance metrics: an interval per metric that holds its exact value.

For each direction X -> Y, d(x) = distance from x to the surface Y. Over an element T of X
(corners v_i, centre c, radius r = max |v_i - c|, size |T|) two functions bound d from
below and above, ell <= d <= u, each with a known minimum, maximum and integral over T:

* Upper, convexity: for any element f of Y, d(x) <= dist(x, f), a convex function, so over T
  it is at most max_i dist(v_i, f) and its integral at most |T| mean_i dist(v_i, f) (a convex
  function lies below its linear interpolant on a simplex). f runs over the closest elements
  of the centre and of every corner. Lipschitz: d(x) <= d(c) + |x - c|, whose mean over T is
  at most sqrt(m2), m2 = mean |x - c|^2 = E / (n^2 (n + 1)) (E: sum of squared edge lengths,
  n corners).
* Lower, Lipschitz: d(x) >= d(c) - |x - c|. Concavity: d^2 - |x|^2 is a minimum of affine
  functions, so d(x)^2 >= q(x) = sum_i w_i d(v_i)^2 - s(x), s(x) = sum_i w_i |v_i - x|^2 (w:
  barycentric weights). Pointwise, s <= R^2 (R: T's circumradius; s = R^2 - |x - o|^2) and s
  <= the longest edge squared, so d >= sqrt(min_i d(v_i)^2 - that cap): second order in the
  element's size, where Lipschitz is first. Integral: the mean of q over T is mean_i
  d(v_i)^2 - E / (n (n + 1)), and with L <= d <= U over T (L the pointwise lower bound, U
  the upper), the chord of the concave square root between L^2 and U^2 lies below it: d >=
  L + (d^2 - L^2) / (L + U) >= L + (q - L^2) / (L + U), so the integral of d is at least
  |T| (L + (that mean - L^2) / (L + U)), again second order where L > 0.
* Lower, one plane (the certificate): let P be the plane (line in 2D) of the element f that
  gives the best upper bound, n its unit normal towards T, a(x) = n . x - n . y_f the signed
  height above it. The closest point y* of any x in T lies within R = U + r of c. If every
  element of Y that comes within R of c lies on or below P, then d(x) = |x - y*| >= a(x):
  an affine lower bound, integrated exactly (|T| mean_i a(v_i)). Where moreover dist(v_i, f)
  = a(v_i) at every corner, u = dist(., f) <= its interpolant = a: d equals a over T, and the
  element counts for NSD and HDp by the exact share of T on which a is <= t.

The metrics follow from these per-element bounds, per direction:

* MASD, ASSD: the sums of the integrals' lower and upper bounds.
* NSD: the size of the elements whose u is wholly <= tau (plus, on exact elements, the share
  of a <= tau) is a lower bound of the size within tau; with ell instead of u an upper one.
* HDp: ell <= d pointwise puts the size with ell <= t above the size with d <= t for every t,
  so the p-quantile of ell's size-weighted distribution is <= that of d, and u's is >= it.
* HD: the bracket of module `hausdorff`, bracketed to its tolerance around the value.

Where a bracket is wider than its aim (`WIDTH_AIMS`; each direction is refined to it), the
elements that make it wide are refined, up to `MAX_LEVELS` times and `MAX_ELEMENTS` per
direction: those up to `EXPAND_RADIUS` are cut into pieces bounded from Y's elements within
reach without a query (`expanded`, module `local_bounds`: affine bounds second order in the
piece's size), larger ones split (midpoint subdivision) and bounded again as above.
Queried distances are exact float64 distances to the element the float32 BVH names, at most
`SEARCH_SLACK` above the true distance: every lower bound taken from a queried distance
subtracts it (the pieces' bounds take no queried distance).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, fields

import numpy as np
from numba import njit

from reference import coverage, local_bounds
from reference.closest import SurfaceIndex
from reference.distance_pass import (
    PERCENTILE_TOLERANCE,
    Directed,
    _distinct_points,
    element_radius,
    element_sizes,
    linear_share_within,
    split_elements,
)
from reference.elements import JIT, corner, on_element, point_at, squared_gap
from reference.geometry import element_normals
from reference.hausdorff import HD_TOLERANCE, Bracket, candidate_distances
from reference.metrics import PASS_KEYS
from vocabulary import metric_keys

SEARCH_SLACK = 1e-4
"""mm. A queried distance exceeds the true one by at most this: the BVH searches in float32
(about 1e-5 mm on coordinates of a few hundred mm) and may name a slightly farther element;
the exact float64 distance to that element is then an upper bound, and this much below it a
lower bound. It equals the absolute padding of the BVH's search radius."""

PLANE_TOLERANCE = 1e-9
"""mm. Rounding allowed in the one-plane certificate (a vertex this far above P is on it)."""

TIE_ROUNDING = 1e-7
"""mm. NSD's bracket bounds the share of each surface with d <= tau + this. Exact ties at tau
(flat patches of voxel meshes at exactly tau) are counted: their distances come out within
about 1e-13 mm of tau, and their bounds within PLANE_TOLERANCE. The distance pass's wider tie
rule (tau + 1e-6 of the extent, `distance_pass.TIE_TOLERANCE`) is not used here: counted at
every resolution the brackets refine to, it adds a strip sqrt(2 tau 1e-6 L) wide along the
edge of every patch at tau (0.006 mm on the cubes of `test_tie_rule_counts_distances_equal_to_tau`:
NSD 0.4005 to 0.4012 where the share with d <= tau is 0.4), which the plain call, at its
resolution, does not count. This one's strip is 0.0006 mm wide at tau = 2 mm."""

MAX_LEVELS = 12
"""Extra subdivision levels for the brackets (a 3 mm triangle's children are then 0.7 µm):
few elements reach the last levels (those still straddling tau or the percentile), and the
element cap bounds what they cost; Fig. A1's triangles need 12 to meet the aims."""

MAX_ELEMENTS = 250_000
"""Elements per direction beyond which refinement stops (bounds memory and time)."""

WIDTH_AIMS = {
    "HD": HD_TOLERANCE + SEARCH_SLACK,
    "HD95": 0.01,
    "MASD": 0.01,
    "ASSD": 0.01,
    "NSD": 0.001,
    "BIoU": 0.001,
    "DSC": 0.001,
}
"""The width each metric's bracket is meant to meet (mm; NSD, BIoU, DSC as fractions): HD's
bracket is bracketed to HD_TOLERANCE above its value, less the search slack below it."""

SUM_ROUNDING = 1e-12
"""Relative allowance for rounding in the sums over elements (children's sizes add up to
their parent's only to the last bits), added on both sides of the summed brackets."""


def unbounded() -> Bracket:
    """The bracket of a metric this module has no bound for: every value, said as such."""
    return Bracket(-math.inf, math.inf, note="no proven bracket: no bound for this metric")


class WideBracket(UserWarning):
    """A bracket stayed wider than its aim (`WIDTH_AIMS`): the value is still inside it."""


def _bracket(low, high, summed: bool = False) -> Bracket:
    if summed:
        low, high = low - SUM_ROUNDING * max(1.0, abs(low)), high + SUM_ROUNDING * max(1.0, high)
    return Bracket(float(low), float(high))


class Neighbours:
    """The elements of Y near a point, with their planes: what the certificate asks of Y.

    Y's elements are bucketed by centroid on a uniform grid (`_bucket_centroids`); a ball of
    radius R around c can only meet elements whose centroids lie within R + `reach` of c (reach:
    the largest distance from an element's centroid to its corners), so the buckets meeting
    that box hold every candidate: the search is exhaustive, with no cap on their number."""

    def __init__(self, target: SurfaceIndex):
        self.target = target
        corners = target.vertices[target.cells]
        self.corners = np.ascontiguousarray(corners, dtype=np.float64)
        centroids = corners.mean(axis=1)
        radii = element_radius(corners, centroids)
        self.reach = float(radii.max())
        # Each element's bounding ball (centroid padded to three axes, radius): a cheap test
        # that it lies beyond a distance (module `local_bounds`).
        self.balls = np.zeros((len(centroids), 4))
        self.balls[:, : target.dim], self.balls[:, 3] = centroids, radii
        normal = element_normals(corners)
        length = np.linalg.norm(normal, axis=1)
        extent = float(np.ptp(target.vertices, axis=0).max()) or 1.0
        usable = length > 1e-12 * extent ** (target.dim - 1)
        self.normal = np.full_like(normal, np.nan)
        self.normal[usable] = normal[usable] / length[usable, None]
        self.offset = np.einsum("kd,kd->k", self.normal, corners[:, 0])
        self.grid = _bucket_centroids(centroids, max(self.reach, 1e-9))

    def below(
        self, elements, centres, radius, normal, offset
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per element of X (corners `elements` (k, n, dim)), the elements f of Y within
        `radius` of its centre c that do not lie on or below its plane P (normal . y <= offset
        + PLANE_TOLERANCE): each has an affine lower bound of dist(., f), the better (by its
        least corner value) of the height above f's plane (turned towards c) and the tangent
        of dist(., f) at c. Returns (certified, envelope, flat): envelope (k, n) is the least
        of those bounds at each corner (inf: none); certified says it is nowhere below the
        height above P, so d >= that height over the element (module docstring); flat (k,
        FLAT_KEPT) names elements of Y lying in P near it (-1: none), for module `coverage`."""
        return _below(
            np.ascontiguousarray(elements, dtype=np.float64),
            self.normal,
            self.offset,
            np.ascontiguousarray(centres, dtype=np.float64),
            np.ascontiguousarray(radius, dtype=np.float64),
            np.ascontiguousarray(normal, dtype=np.float64),
            np.ascontiguousarray(offset, dtype=np.float64),
            self.corners,
            self.balls,
            self.grid,
            self.reach,
            PLANE_TOLERANCE,
        )


BUCKETS_PER_ELEMENT = 4
"""At most this many buckets per element of Y in the certificate's grid."""

FLAT_KEPT = 16
"""Elements of Y lying in P that the certificate's scan keeps per element, to cover its shadow
(module `coverage`) beside the closest elements of its centre and corners."""


def _bucket_centroids(centroids: np.ndarray, reach: float):
    """(low, step, dims, start, member): a uniform grid over the centroids, padded to three
    axes, with buckets of side about twice `reach` (grown until there are at most
    BUCKETS_PER_ELEMENT per element); bucket b holds member[start[b]:start[b + 1]]."""
    count, dim = centroids.shape
    points = np.zeros((count, 3))
    points[:, :dim] = centroids
    low = points.min(axis=0)
    span = points.max(axis=0) - low
    side = 2.0 * reach
    while True:
        dims = np.maximum(1, np.ceil(span / side).astype(np.int64) + 1)
        if np.prod(dims) <= BUCKETS_PER_ELEMENT * max(count, 1):
            break
        side *= 1.5
    step = np.full(3, side)
    index = np.minimum(((points - low) / step).astype(np.int64), dims - 1)
    flat = (index[:, 0] * dims[1] + index[:, 1]) * dims[2] + index[:, 2]
    member = np.argsort(flat, kind="stable")
    start = np.searchsorted(flat[member], np.arange(int(np.prod(dims)) + 1))
    return low, step, dims, start.astype(np.int64), member.astype(np.int64)


@njit(**JIT)
def _below(
    elements,
    normals,
    offsets,
    centres,
    radius,
    normal,
    offset,
    corners,
    balls,
    grid,
    reach,
    tol,
):
    """`Neighbours.below`, compiled: every element of Y whose centroid lies in a bucket meeting
    the box of half-side radius + reach around the centre is checked (its corners' heights
    above the plane, then, if any exceeds tol and its bounding ball comes within the radius,
    its exact distance to the centre, then its affine lower bounds at the element's
    corners)."""
    count, dim = centres.shape
    per = corners.shape[1]
    own = elements.shape[1]
    certified = np.zeros(count, np.bool_)
    envelope = np.full((count, own), np.inf)
    flat = np.full((count, FLAT_KEPT), -1, np.int64)
    near = np.empty(corners.shape[0], np.int64)
    point = np.zeros(3)
    for i in range(count):
        px, py, pz = point_at(centres, i)
        point[0], point[1], point[2] = px, py, pz
        nx, ny = normal[i, 0], normal[i, 1]
        nz = normal[i, 2] if dim == 3 else 0.0
        boxed = local_bounds.members_near(point, radius[i] + reach, grid, near)
        limit = radius[i] * radius[i]
        good = True
        kept = 0
        for e in near[:boxed]:
            top, bottom = -np.inf, np.inf
            for j in range(per):
                cx, cy, cz = corner(corners, e, j)
                height = cx * nx + cy * ny + cz * nz - offset[i]
                top, bottom = max(top, height), min(bottom, height)
            if top <= tol:
                if bottom >= -0.25 * tol and kept < FLAT_KEPT:
                    flat[i, kept] = e  # in P: may cover the element's shadow
                    kept += 1
                continue
            if local_bounds.ball_beyond(px, py, pz, balls, e, radius[i]):
                continue
            _, qx, qy, qz = on_element(px, py, pz, corners, e)
            gap = squared_gap(px, py, pz, qx, qy, qz)
            if gap > limit:
                continue
            good = (
                _offender_bound(
                    elements,
                    i,
                    normals,
                    offsets,
                    e,
                    (px, py, pz),
                    (qx, qy, qz),
                    gap,
                    (nx, ny, nz, offset[i]),
                    envelope,
                    tol,
                )
                and good
            )
        certified[i] = good
    return certified, envelope, flat


@njit(**JIT)
def _offender_bound(elements, i, normals, offsets, e, centre, closest, gap, plane, envelope, tol):
    """Lower the envelope of element i's corners by the better lower bound of dist(., f) for
    the element f = e of Y (its plane's height turned towards the centre, or the tangent at
    the centre, `local_bounds.tangent_bound`; each concave): the one with the larger least
    corner value. Returns whether that bound stays above plane P's height (nx, ny, nz,
    offset) at every corner."""
    own, dim = elements.shape[1], elements.shape[2]
    px, py, pz = centre
    qx, qy, qz = closest
    fx, fy = normals[e, 0], normals[e, 1]
    fz = normals[e, 2] if dim == 3 else 0.0
    side = 1.0 if fx * px + fy * py + fz * pz >= offsets[e] else -1.0
    length = math.sqrt(gap)
    flat, tangent = np.inf, np.inf
    for j in range(own):
        vx, vy, vz = corner(elements, i, j)
        if np.isfinite(offsets[e]):
            flat = min(flat, side * (fx * vx + fy * vy + fz * vz - offsets[e]))
        tangent = min(
            tangent, local_bounds.tangent_bound(vx, vy, vz, px, py, pz, qx, qy, qz, length)
        )
    use_flat = np.isfinite(flat) and flat >= tangent
    above = True
    nx, ny, nz, offset = plane
    for j in range(own):
        vx, vy, vz = corner(elements, i, j)
        if use_flat:
            value = side * (fx * vx + fy * vy + fz * vz - offsets[e])
        else:
            value = local_bounds.tangent_bound(vx, vy, vz, px, py, pz, qx, qy, qz, length)
        envelope[i, j] = min(envelope[i, j], value)
        above = above and value >= nx * vx + ny * vy + nz * vz - offset - tol
    return above


@dataclass
class Pieces:
    """Bounds of d over the elements of one direction (one row per element).

    low, high: min of ell and max of u over the element; integral_low, integral_high: their
    integrals; floor, ceiling: corner values of an affine lower and upper bound of d over the
    element, each at least as good as low and high everywhere (NaN rows: none such); exact: d
    is affine over the element, floor and ceiling PLANE_TOLERANCE either side of it; normal,
    offset: the certified plane (NaN: none).
    """

    corners: np.ndarray
    size: np.ndarray
    low: np.ndarray
    high: np.ndarray
    integral_low: np.ndarray
    integral_high: np.ndarray
    exact: np.ndarray
    floor: np.ndarray
    ceiling: np.ndarray
    normal: np.ndarray
    offset: np.ndarray
    _distributions: dict = field(init=False, default_factory=dict, repr=False, compare=False)

    def by_name(self) -> dict[str, np.ndarray]:
        """The per-element arrays by field name, in the constructor's order (never changed
        once made: the distributions built from them are kept)."""
        return {one.name: getattr(self, one.name) for one in fields(self) if one.init}

    def arrays(self) -> list[np.ndarray]:
        return list(self.by_name().values())

    def take(self, rows) -> Pieces:
        return Pieces(*(array[rows] for array in self.arrays()))

    def kept_and(self, kept: np.ndarray, *added: Pieces) -> Pieces:
        """The rows where `kept` (a mask) followed by every row of `added`, each array
        copied once (a refinement level replaces a few rows of many)."""
        count = int(np.count_nonzero(kept))
        parts = [more.arrays() for more in added]
        joined = []
        for array, *tails in zip(self.arrays(), *parts, strict=True):
            out = np.empty((count + sum(map(len, tails)), *array.shape[1:]), array.dtype)
            np.compress(kept, array, axis=0, out=out[:count])
            start = count
            for tail in tails:
                out[start : start + len(tail)] = tail
                start += len(tail)
            joined.append(out)
        return Pieces(*joined)

    def quantiles(self, percentile: float) -> tuple[float, float]:
        """Lower and upper bound of the size-weighted p-quantile of d."""
        low = self.distribution(upper=False).percentile(percentile) - PERCENTILE_TOLERANCE
        return max(low, 0.0), self.distribution(upper=True).percentile(percentile)

    def distribution(self, upper: bool) -> Directed:
        """The size-weighted distribution of u (upper) or ell: the affine bound where an
        element has one (`ceiling`, `floor`: a share of the element on each side of a level),
        else a step at high (low). Built once: a direction a refinement level leaves alone is
        asked again, and `Directed` keeps the percentiles it computed."""
        if upper not in self._distributions:
            affine = self.ceiling if upper else self.floor
            rows = np.flatnonzero(np.isfinite(affine[:, 0]))
            self._distributions[upper] = Directed(
                self.high if upper else self.low, self.size, open=rows, corner_distance=affine[rows]
            )
        return self._distributions[upper]

    def taken(self) -> tuple[np.ndarray, np.ndarray]:
        """The corner values of ell and u as `distribution` takes them: an affine bound's, else
        the step's."""
        return (
            np.where(np.isfinite(self.floor), self.floor, self.low[:, None]),
            np.where(np.isfinite(self.ceiling), self.ceiling, self.high[:, None]),
        )

    def uncertain_within(self, threshold: float) -> np.ndarray:
        """Per element, the size it may or may not hold within `threshold`: its share with
        ell <= threshold less its share with u <= threshold (the width it gives NSD)."""
        return self.size * (
            self._share(self.floor, self.low, threshold)
            - self._share(self.ceiling, self.high, threshold)
        )

    @staticmethod
    def _share(affine: np.ndarray, step: np.ndarray, threshold: float) -> np.ndarray:
        share = (step <= threshold).astype(float)
        rows = np.flatnonzero(np.isfinite(affine[:, 0]))
        share[rows] = linear_share_within(affine[rows], threshold)
        return share


def bound_elements(
    corners: np.ndarray,
    target: SurfaceIndex,
    neighbours: Neighbours,
    planes: tuple[np.ndarray, np.ndarray] | None = None,
    zero: np.ndarray | None = None,
) -> Pieces:
    """The bounds of the module docstring for the elements `corners` (k, n, dim).

    planes: (normal, offset) per element of a plane already certified over a larger element
    holding it (NaN: none), whose affine lower bound then holds here too without a search.
    zero: indices of elements known to lie on Y (module `lattice`: they coincide with one
    of its elements, vertex for vertex): d = 0 over each, exact with no query, the rows a
    search would give them (the query finds d = 0 at every corner, so u = 0).
    """
    if zero is not None and len(zero):
        on_y = np.zeros(len(corners), bool)
        on_y[zero] = True
        return _with_zeros(corners, on_y, bound_elements(corners[~on_y], target, neighbours))
    count, n, dim = corners.shape
    size = element_sizes(corners)
    centres = corners.mean(axis=1)
    radius = element_radius(corners, centres)
    edges = [
        np.sum((corners[:, i] - corners[:, j]) ** 2, axis=1)
        for i, j in itertools.combinations(range(n), 2)
    ]  # squared edge lengths
    squared_edges = sum(edges)
    at_centre = target.query(centres)
    # Corners shared by neighbouring elements are queried once, each within its largest
    # Lipschitz reach d(c) + r.
    points = corners.reshape(-1, dim)
    first, same = _distinct_points(points)
    reach = np.zeros(len(first))
    np.maximum.at(reach, same, np.repeat(at_centre.distance + radius, n))
    at_corners = target.query(points[first], reach)
    corner_distance = at_corners.distance[same].reshape(count, n)
    candidates = np.column_stack([at_centre.cell, at_corners.cell[same].reshape(count, n)])
    to_candidate = candidate_distances(corners, candidates, target)
    best = to_candidate.max(axis=2).argmin(axis=1)
    rows = np.arange(count)
    spread = np.sqrt(squared_edges / (n * n * (n + 1)))  # bounds the mean of |x - c| over T
    high = np.minimum(at_centre.distance + radius, to_candidate.max(axis=2)[rows, best])
    integral_high = size * np.minimum(
        at_centre.distance + spread, to_candidate.mean(axis=2).min(axis=1)
    )
    centre_low = at_centre.distance - SEARCH_SLACK
    # (A corner is within d(c) + r of Y, so its search finds an element; if it did not, the
    # corner would get the safe 0 rather than inf.)
    corner_low = np.where(
        np.isfinite(corner_distance), np.maximum(corner_distance - SEARCH_SLACK, 0.0), 0.0
    )
    low = np.maximum.reduce(
        [
            centre_low - radius,
            np.sqrt(np.maximum((corner_low**2).min(axis=1) - _spread_cap(edges, size), 0.0)),
            np.zeros(count),
        ]
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_square = (corner_low**2).mean(axis=1) - squared_edges / (n * (n + 1))
        concave = np.where(high > 0, low + (mean_square - low**2) / (low + high), 0.0)
    mean_low = np.maximum.reduce([centre_low - spread, concave, np.zeros(count)])
    # The one-plane certificate, for the elements where d is not already pinned to 0.
    plane = candidates[rows, best]
    normal, offset = neighbours.normal[plane], neighbours.offset[plane]
    side = np.where(np.einsum("kd,kd->k", normal, centres) >= offset, 1.0, -1.0)
    normal, offset = normal * side[:, None], offset * side
    certified = np.zeros(count, bool)
    if planes is not None:
        certified = np.isfinite(planes[1])
        normal[certified], offset[certified] = planes[0][certified], planes[1][certified]
    affine = np.einsum("knd,kd->kn", corners, normal) - offset[:, None]
    tried = np.flatnonzero(~certified & (high > 0) & np.isfinite(offset))
    certified[tried], envelope, flat = neighbours.below(
        corners[tried], centres[tried], high[tried] + radius[tried], normal[tried], offset[tried]
    )
    # Where the plane alone does not certify: d >= min(height above P, the other elements'
    # bounds), concave over the element: least at a corner, integral at least the corners' mean.
    partial = tried[~certified[tried]]
    floor = np.minimum(affine[partial], envelope[~certified[tried]]) - PLANE_TOLERANCE
    low[partial] = np.maximum(low[partial], floor.min(axis=1))
    mean_low[partial] = np.maximum(mean_low[partial], floor.mean(axis=1))
    floors = np.full((count, n), np.nan)  # an affine lower bound's corner values
    floors[partial] = floor  # the envelope's interpolant: below it, a concave function
    affine[~certified] = np.nan
    low[certified] = np.maximum(low[certified], affine[certified].min(axis=1) - PLANE_TOLERANCE)
    mean_low[certified] = np.maximum(
        mean_low[certified], affine[certified].mean(axis=1) - PLANE_TOLERANCE
    )
    floors[certified] = affine[certified] - PLANE_TOLERANCE
    ceilings = to_candidate[rows, best]  # the candidate's distance lies below its interpolant
    exact = certified & np.all(np.abs(ceilings - affine) <= PLANE_TOLERANCE, axis=1)
    # Or T's shadow on P lies within Y's elements in P (module `coverage`): d = the height.
    # The elements tried: the closest of the centre and corners, and those in P that the
    # scan above met (an element certified by its parent's plane was not scanned: none).
    shadowed = np.flatnonzero(certified & ~exact & (affine.min(axis=1) >= 0.0))
    scan_row = np.full(count, len(tried))  # the row of `flat` per element; the last: none
    scan_row[tried] = np.arange(len(tried))
    in_plane = np.vstack([flat, np.full((1, FLAT_KEPT), -1)])[scan_row[shadowed]]
    exact[shadowed] = coverage.covered(
        corners[shadowed],
        normal[shadowed],
        offset[shadowed],
        np.column_stack([candidates[shadowed], in_plane]),
        neighbours.corners,
        PLANE_TOLERANCE,
    )
    exact |= high == 0  # d = 0 over the element: affine too
    affine[high == 0] = 0.0
    floors[exact] = affine[exact] - PLANE_TOLERANCE
    ceilings[exact] = affine[exact] + PLANE_TOLERANCE
    high[exact] = np.minimum(high[exact], affine[exact].max(axis=1) + PLANE_TOLERANCE)
    integral_high[exact] = np.minimum(
        integral_high[exact], size[exact] * (affine[exact].mean(axis=1) + PLANE_TOLERANCE)
    )
    # Each affine bound stands for the element in the distributions of u and ell where it is
    # everywhere at least as good as the step at high or low (module docstring).
    floors[~exact & ~(floors.min(axis=1) >= low)] = np.nan
    ceilings[~exact & ~(ceilings.max(axis=1) <= high)] = np.nan
    normal[~certified], offset[~certified] = np.nan, np.nan
    return Pieces(
        corners,
        size,
        low,
        high,
        size * mean_low,
        integral_high,
        exact,
        floors,
        ceilings,
        normal,
        offset,
    )


def _with_zeros(corners: np.ndarray, on_y: np.ndarray, rest: Pieces) -> Pieces:
    """Pieces of the elements `corners`: where `on_y`, d = 0 all over (exact, every bound 0,
    the affine bounds PLANE_TOLERANCE either side of it), elsewhere the rows of `rest`, in
    the elements' order (the refinement ranks ties by it)."""
    zero = {
        "corners": corners[on_y],
        "size": element_sizes(corners[on_y]),
        "exact": True,
        "floor": -PLANE_TOLERANCE,
        "ceiling": PLANE_TOLERANCE,
        "normal": np.nan,
        "offset": np.nan,
    }
    joined = {}
    for name, array in rest.by_name().items():
        whole = np.empty((len(corners), *array.shape[1:]), array.dtype)
        whole[~on_y], whole[on_y] = array, zero.get(name, 0.0)
        joined[name] = whole
    return Pieces(**joined)


def expanded(pieces: Pieces, rows: np.ndarray, neighbours: Neighbours) -> tuple[Pieces, np.ndarray]:
    """Those of the elements `rows` of `pieces` up to `EXPAND_RADIUS` cut into their midpoint
    children, each bounded from Y's elements within reach without a query (module
    `local_bounds`): an affine lower and upper bound second order in its size, where the
    bounds from an element's corners and centre are first order wherever the closest element
    changes within it. Returns those children and the rows they replace (none with no element
    of Y within reach, which a queried element always has)."""
    corners = pieces.corners[rows]
    radius = element_radius(corners, corners.mean(axis=1))
    small = radius <= EXPAND_RADIUS
    if not small.any():
        return pieces.take(rows[:0]), rows[:0]
    rows, corners = rows[small], corners[small]
    count, n, dim = corners.shape
    children = split_elements(corners).reshape(count, -1, n, dim)
    reach_radius = pieces.high[rows] + radius[small] + PLANE_TOLERANCE
    floor, ceiling, (mean_low, mean_high) = local_bounds.local_bounds(
        corners, children, reach_radius, neighbours, PLANE_TOLERANCE
    )
    found = np.isfinite(floor[:, 0, 0])
    per = children.shape[1]
    children = children[found].reshape(-1, n, dim)
    floor, ceiling = floor[found].reshape(-1, n), ceiling[found].reshape(-1, n)
    mean_low, mean_high = mean_low[found].reshape(-1), mean_high[found].reshape(-1)
    size = np.repeat(pieces.size[rows[found]] / per, per)
    return (
        Pieces(
            children,
            size,
            np.maximum(floor.min(axis=1), 0.0),
            ceiling.max(axis=1),
            size * np.maximum(mean_low, 0.0),
            size * mean_high,
            (ceiling - floor).max(axis=1) <= 2 * PLANE_TOLERANCE,
            floor,
            ceiling,
            np.full((len(size), dim), np.nan),
            np.full(len(size), np.nan),
        ),
        rows[found],
    )


def _spread_cap(edges: list[np.ndarray], size: np.ndarray) -> np.ndarray:
    """An upper bound of s(x) = sum_i w_i |v_i - x|^2 over each element (w: the barycentric
    weights of x), from its squared edge lengths `edges` (one for a segment, three for a
    triangle) and its size: s = R^2 - |x - o|^2 <= R^2 (o, R: the circumcentre and
    circumradius; a segment's are its midpoint and half length), and s <= max_i |v_i - x|^2 <=
    the longest edge squared."""
    longest = np.max(edges, axis=0)
    if len(edges) == 1:
        return longest / 4.0
    with np.errstate(divide="ignore", invalid="ignore"):
        circumradius = edges[0] * edges[1] * edges[2] / (16.0 * size**2)  # R^2 = (abc)^2/(4K)^2
    return np.fmin(circumradius, longest)


RANK_DECIMALS = 9
"""Decimals (of mm, mm^2 or mm^3) the refinement's rankings of elements round to first: equal
elements (a lattice mesh has many) then rank by their order, not by the last bits of their
coordinates, so moving the masks within a larger grid leaves the same elements split."""


def _widest_first(values: np.ndarray) -> np.ndarray:
    """Indices of `values` from the largest down, ties (at RANK_DECIMALS) in index order."""
    return np.argsort(-np.round(values, RANK_DECIMALS), kind="stable")


def _holding_excess(widths: np.ndarray, aim: float) -> np.ndarray:
    """Where the elements' widths sum to more than `aim`: the widest elements that together
    hold the excess over half the aim (the split halves what it leaves), else none."""
    split = np.zeros(len(widths), bool)
    excess = widths.sum() - 0.5 * aim
    if excess > 0.5 * aim:
        order = _widest_first(widths)
        split[order[: np.searchsorted(np.cumsum(widths[order]), excess) + 1]] = True
    return split


def _to_split(
    pieces: Pieces, threshold: float, quantiles: tuple[float, float], floor: float = 0.0
) -> np.ndarray:
    """The elements that make a bracket wider than its aim. quantiles: this direction's
    bracket of the p-quantile (`Pieces.quantiles`); floor: the other direction's lower end.
    HDp is the larger of the two directions' quantiles, so its bracket is [max of the lower
    ends, max of the upper ends]: this direction's quantile needs narrowing only above the
    floor."""
    total = pieces.size.sum()
    split = _holding_excess(pieces.integral_high - pieces.integral_low, WIDTH_AIMS["MASD"] * total)
    split |= _holding_excess(pieces.uncertain_within(threshold), WIDTH_AIMS["NSD"] * total)
    open_ = ~pieces.exact
    low, high = quantiles
    if high - max(low, floor) > WIDTH_AIMS["HD95"]:
        # With u <= ell + w on every element meeting [low, high] (u, ell: the functions the
        # distributions take, affine or steps), the two quantiles are at most w apart: the
        # elements narrower than half the aim need no split.
        lower, upper = pieces.taken()
        meets = open_ & (lower.min(axis=1) <= high) & (upper.max(axis=1) >= low)
        wide = meets & ((upper - lower).max(axis=1) > 0.5 * WIDTH_AIMS["HD95"])
        split |= wide if wide.any() else meets
    return split


EXPAND_RADIUS = 1.5
"""mm. Elements up to this radius are refined by `expanded` (no query), larger ones are split
and bounded again (`bound_elements`): on a larger element the pieces' chords are too coarse
for the aims, and the search's certificate and exact patches pay."""


def _fitting(pieces: Pieces, chosen: np.ndarray, per_child: int) -> np.ndarray:
    """The rows of `chosen` (a mask) to replace by per_child rows each within MAX_ELEMENTS:
    all of them, or the most uncertain that fit."""
    rows = np.flatnonzero(chosen)
    room = max(MAX_ELEMENTS - len(pieces.size), 0) // (per_child - 1)
    if len(rows) > room:
        uncertain = (pieces.size * (pieces.high - pieces.low))[rows]
        rows = np.sort(rows[_widest_first(uncertain)[:room]])
    return rows


def _refined(
    pieces: Pieces, rows: np.ndarray, target: SurfaceIndex, near: Neighbours, per_child: int
) -> Pieces:
    """`pieces` with the elements `rows` refined: the small expanded into their pieces, the
    large (and any expansion could not bound) split into per_child children and bounded
    again; a plane certified over an element is certified over its children."""
    expansion, replaced = expanded(pieces, rows, near)
    split = np.zeros(len(pieces.size), bool)
    split[rows] = True
    split[replaced] = False
    kept = np.ones(len(pieces.size), bool)
    kept[rows] = False
    if not split.any():
        return pieces.kept_and(kept, expansion)
    inherited = (
        np.repeat(pieces.normal[split], per_child, axis=0),
        np.repeat(pieces.offset[split], per_child),
    )
    children = bound_elements(split_elements(pieces.corners[split]), target, near, inherited)
    return pieces.kept_and(kept, expansion, children)


def bound_direction(
    corners: np.ndarray, target: SurfaceIndex, *, threshold: float, percentile: float
) -> tuple[Pieces, str]:
    """`bound_directions` of one direction alone."""
    return bound_directions([(corners, target)], threshold=threshold, percentile=percentile)[0]


def bound_directions(
    pairs, *, threshold: float, percentile: float, zeros=None
) -> list[tuple[Pieces, str]]:
    """Per (corners (k, n, dim) of X, index of Y) of `pairs`: bounds over the elements of X
    towards Y, refined where a bracket is wider than its aim (up to MAX_LEVELS times and
    MAX_ELEMENTS elements), and what stopped the refinement short of the aims ("" when
    nothing did). The directions are refined level by level together: a direction's HDp needs
    narrowing only above the others' lower ends (`_to_split`). zeros: per direction, the
    elements of X known to lie on Y (`bound_elements`), or None."""
    neighbours = [Neighbours(target) for _, target in pairs]
    pieces = [
        bound_elements(corners, target, near, zero=zero)
        for (corners, target), near, zero in zip(
            pairs, neighbours, zeros or [None] * len(pairs), strict=True
        )
    ]
    notes = [""] * len(pairs)
    per_child = len(split_elements(pairs[0][0][:1]))
    for level in itertools.count():
        quantiles = [one.quantiles(percentile) for one in pieces]
        refined = False
        for i, ((_, target), one) in enumerate(zip(pairs, pieces, strict=True)):
            floor = max((q[0] for j, q in enumerate(quantiles) if j != i), default=0.0)
            split = _to_split(one, threshold, quantiles[i], floor)
            rows = _fitting(one, split, per_child)
            notes[i] = (
                ""
                if not split.any()
                else f"stopped by the cap of {MAX_ELEMENTS:,} elements per direction"
                if not len(rows)
                else f"stopped after {MAX_LEVELS} levels"
                if level == MAX_LEVELS
                else ""
            )
            if not split.any() or notes[i]:
                continue
            pieces[i] = _refined(one, rows, target, neighbours[i], per_child)
            refined = True
        if not refined:
            return list(zip(pieces, notes, strict=True))


COUNTED = metric_keys(family="overlap")
"""Metrics counted on a grid (voxels, or BIoU's dense points): each count is exact for its
definition, so their brackets are their values (docs/reference.md)."""


def clamp(value: float, bracket: Bracket) -> float:
    """The value, or the bracket's end nearer to it when it lies outside: the exact value is
    in [lower, upper], so the result is at least as close to it as the value."""
    return float(min(max(value, bracket.lower), bracket.upper))


def point_brackets(scores: dict[str, float], keys=COUNTED) -> dict[str, Bracket]:
    """[value, value] for the given keys among `scores`: the counted metrics, or every metric
    where the definition itself gives the value (an empty mask)."""
    return {key: _bracket(scores[key], scores[key]) for key in keys if key in scores}


def distance_brackets(
    surface_a,
    surface_b,
    index_a: SurfaceIndex,
    index_b: SurfaceIndex,
    scores: dict[str, float],
    *,
    tau: float,
    percentile: float,
    keys,
    hd_upper: float,
    zeros=None,
) -> dict[str, Bracket]:
    """Brackets of the asked distance metrics (HD, HD95, MASD, ASSD, NSD) between two surfaces
    (vertices, cells), whose values `scores` the distance pass gave, with the upper end
    `hd_upper` of its HD bracket (module `hausdorff`); NSD's counts d <= tau + TIE_ROUNDING.
    zeros: the elements of A and of B known to lie on the other surface (`bound_elements`),
    or None."""
    threshold = tau + TIE_ROUNDING
    brackets = {}
    if "HD" in keys:
        brackets["HD"] = _bracket(
            max(scores["HD"] - SEARCH_SLACK, 0.0), max(hd_upper, scores["HD"])
        )
    if not set(keys) & PASS_KEYS:
        return brackets
    refined = bound_directions(
        [
            (vertices[cells], target)
            for (vertices, cells), target in ((surface_a, index_b), (surface_b, index_a))
        ],
        threshold=threshold,
        percentile=percentile,
        zeros=zeros,
    )
    directions = [pieces for pieces, _ in refined]
    note = "; ".join(dict.fromkeys(limit for _, limit in refined if limit))
    sizes = [one.size.sum() for one in directions]
    low = [one.integral_low.sum() for one in directions]
    high = [one.integral_high.sum() for one in directions]
    quantiles = [one.quantiles(percentile) for one in directions]
    within_low = [one.distribution(upper=True).within(threshold) for one in directions]
    within_high = [one.distribution(upper=False).within(threshold) for one in directions]
    every = {
        "HD95": _bracket(max(q[0] for q in quantiles), max(q[1] for q in quantiles)),
        "MASD": _bracket(
            0.5 * (low[0] / sizes[0] + low[1] / sizes[1]),
            0.5 * (high[0] / sizes[0] + high[1] / sizes[1]),
            summed=True,
        ),
        "ASSD": _bracket(sum(low) / sum(sizes), sum(high) / sum(sizes), summed=True),
        "NSD": _bracket(sum(within_low) / sum(sizes), sum(within_high) / sum(sizes), summed=True),
    }
    for one in every.values():
        one.note = note
    return brackets | {key: every[key] for key in every if key in keys}


def too_wide(brackets: dict[str, Bracket]) -> list[str]:
    """One line per bracket wider than its aim (`WIDTH_AIMS`): the metric, its width, the aim
    and what stopped the refinement."""
    return [
        f"{key} bracket [{one.lower:.6g}, {one.upper:.6g}] is {one.width:.2g} wide, above its "
        f"aim {WIDTH_AIMS[key]:g}" + (f" (refinement {one.note})" if one.note else "")
        for key, one in brackets.items()
        if key in WIDTH_AIMS and one.width > WIDTH_AIMS[key]
    ]
