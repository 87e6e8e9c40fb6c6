"""The distance pass (paper, Algorithm 1): the two directed, boundary-element-weighted
distance distributions that every distance metric reads (its formulas: module `metrics`).

For each direction X -> Y: query points x_n at element centres, d_n = exact distance from x_n
to the surface Y, s_n = size of the element (length in 2D, area in 3D), |S_X| = sum s_n.

Elements are subdivided only where a finer element can change a result: d is 1-Lipschitz, so
over an element of radius r (largest distance from its query point to its corners) d stays
within [d - r, d + r], and it stays below |x - p| for the closest point p of the centre. An
element is split (into 4 triangles / 2 segments) while that interval contains the current
weighted percentile (HDp) or straddles tau (NSD), up to `subdivision` times, unless its
family came out flat (all children at the parent's distance, and in 2D its corners too:
splitting further repeats it). In 2D every element is split at every level (but the settled):
MASD and ASSD take the leaves' centres, and a 1 mm segment facing a staircase of the other
polyline left them 0.0175 mm off (tilted squares, tests/test_reference_2d.py); segments are
few, so this costs little.
After the last level, the elements whose interval still holds the percentile or straddles tau
are "open": NSD and HDp count them by the linear interpolant of the exact distances at their
corners, which places the level set inside the element (error second order in the element
size; the centre alone is first order). With the sizes s_n and, for an open element, the
share f_n(t) of its size on which the interpolant is <= t (`linear_share_within`):

    size within t  = sum over closed elements of s_n [d_n <= t] + sum over open ones of s_n f_n(t)
    NSD            = (size within tau, both directions) / (|S_A| + |S_B|)
    HDp            = max over directions of the smallest t with size within t >= p/100 |S_X|

(`Directed.within`, `Directed.percentile`). HDp takes the larger direction's percentile: a
direction whose percentile provably is the smaller opens its elements for tau alone
(`opened_pair`); no metric moves. `quadrature="midpoint"` counts open elements by their
centre too: the paper's definition. With `refine="uniform"` every element is split, which is
what the convergence study compares against.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from reference import elements, lattice, percentiles
from reference.closest import SurfaceIndex, plain
from reference.elements import JIT
from reference.geometry import CENTRAL_CHILD, SPLIT_CHILDREN, SPLIT_EDGES

TIE_TOLERANCE = 1e-6
"""Relative tie tolerance at tau: d counts as within tau if d <= tau + TIE_TOLERANCE * L,
L = the largest extent of the two surfaces. On voxel grids many distances equal tau exactly;
float32 element selection and float64 rounding move them by ~1e-8 L, so exact ties stay in."""


def tie_threshold(tau: float, *vertices: np.ndarray) -> float:
    """tau + TIE_TOLERANCE * L, L = the largest extent of the given vertex arrays (at least tau)."""
    extent = float(np.ptp(np.concatenate(vertices), axis=0).max())
    return tau + TIE_TOLERANCE * max(extent, tau)


def linear_share_within(corner_distance: np.ndarray, t: float) -> np.ndarray:
    """Share of each element's size on which the linear interpolant of its corner distances
    is <= t: corner_distance (k, 2) for segments, (k, 3) for triangles.

    Segment with corner values d0 <= d1: (t - d0) / (d1 - d0). Triangle with sorted corner
    values d0 <= d1 <= d2: a sublevel set of an affine function cuts the triangle along a
    line, leaving (t - d0)^2 / ((d1 - d0)(d2 - d0)) of its area for d0 <= t < d1 and
    1 - (d2 - t)^2 / ((d2 - d0)(d2 - d1)) for d1 <= t < d2. Below d0 none, from d2 on all.
    Computed by `percentiles.linear_shares`, the one code of this formula (the interpolated
    percentile's compiled search uses it too).
    """
    return percentiles.linear_shares(percentiles.sorted_rows(plain(corner_distance)), float(t))


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """sum x_i y_i without BLAS: numpy hands np.dot of long vectors to a multithreaded BLAS,
    which on a busy machine waits for its threads (measured: 15 ms for 50,000 elements on two
    loaded cores, against 0.03 ms in one thread)."""
    return float(np.multiply(x, y).sum())


SIZE_ROUNDING = 1e-9
"""Relative allowance for rounding in a sum of element sizes (see `Leaves`)."""

PERCENTILE_TOLERANCE = 1e-9
"""mm. Allowance for rounding in an interpolated percentile (its quadratic is solved in
floating point), which the brackets of module `bounds` take off their lower end."""


@dataclass
class Centres:
    """The queries at a surface's element centres, as the HD bracket (module `hausdorff`)
    starts from them: the largest centre distance, and the elements whose upper bound of d over
    the whole element exceeds it (only they can hold a point farther than every centre), each
    with its centre distance, closest cell and upper bound; of the others, the largest upper
    bound. A few rows, not one per element: they live through the other direction's pass."""

    largest: float
    element: np.ndarray
    distance: np.ndarray
    cell: np.ndarray
    upper: np.ndarray
    others_upper: float

    @classmethod
    def of(cls, distance: np.ndarray, cell: np.ndarray, upper: np.ndarray) -> Centres:
        """From every element's centre distance, closest cell, and upper bound of d over it."""
        largest = float(distance.max(initial=0.0))
        beyond = upper > largest
        element = np.flatnonzero(beyond)
        others = float(upper[~beyond].max(initial=0.0))
        return cls(largest, element, distance[element], cell[element], upper[element], others)


@dataclass
class Directed:
    """Distances and element sizes of one direction (query surface -> other surface).

    distance: d at the centre of every element, size: its length or area. Most elements lie
    wholly on one side of tau and of the percentile; NSD and HDp count them by their centre
    (a step of height size at d). The `open` elements, whose distance range still holds tau or
    the percentile after the last subdivision, count instead by the linear interpolant of the
    exact distances at their corners (`corner_distance`, one row per open element), which
    sees where inside the element the level set runs. MASD and ASSD use the centres only.

    centres: what the HD bracket (module `hausdorff`) keeps of the queries at the centres of
    the unsplit elements (`Centres`).
    """

    distance: np.ndarray
    size: np.ndarray
    centres: Centres | None = None
    open: np.ndarray | None = None
    corner_distance: np.ndarray | None = None
    _percentiles: dict = field(default_factory=dict, repr=False, compare=False)

    def _closed(self) -> np.ndarray:
        closed = np.ones(len(self.distance), bool)
        if self.open is not None:
            closed[self.open] = False
        return closed

    def percentile(self, percentile: float) -> float:
        """Smallest t at which the size with d <= t reaches p% of the total: d[n_p] of the
        sorted distances when no element is open."""
        if percentile not in self._percentiles:
            if self.open is None or len(self.open) == 0:
                value = float(
                    percentiles.weighted_select(
                        plain(self.distance), plain(self.size), percentile / 100.0 * self.size.sum()
                    )
                )
            else:
                value = self._interpolated_percentile(percentile)
            self._percentiles[percentile] = value
        return self._percentiles[percentile]

    def _interpolated_percentile(self, percentile: float) -> float:
        """The smallest t at which the cumulative size reaches the target: steps of the closed
        elements plus the continuous shares of the open ones (`linear_share_within`).

        Counting every open element wholly at its lowest corner value overestimates the
        cumulative size, wholly at its highest underestimates it: the percentiles of those
        two step functions (`percentiles.weighted_select`, no sort) bracket the answer in [low,
        high]. Only t in the bracket is ever evaluated, so an open element whose corner
        values do not reach into it acts as a step at its highest corner; steps at or below
        low count wholly, those above high not at all, and only the few steps inside the
        bracket are sorted. The open elements that reach into it are interpolated: their
        shares are quadratic in t between consecutive corner values, the bisection runs over
        those breakpoints (and the steps between them), and the last interval's quadratic is
        solved for the target (`percentiles.interpolated_percentile`).
        """
        target = percentile / 100.0 * self.size.sum()
        corners = percentiles.sorted_rows(plain(self.corner_distance))
        bottom, top = corners[:, 0], corners[:, -1]
        open_size = self.size[self.open]
        closed = self._closed()
        distance, size = self.distance[closed], self.size[closed]
        weights = np.concatenate((size, open_size))
        low = percentiles.weighted_select(np.concatenate((distance, bottom)), weights, target)
        high = percentiles.weighted_select(np.concatenate((distance, top)), weights, target)
        reaching = (bottom <= high) & (top > low)
        steps = np.concatenate((distance, top[~reaching]))
        step_size = np.concatenate((size, open_size[~reaching]))
        inside = (steps > low) & (steps <= high)
        order = np.argsort(steps[inside])
        return float(
            percentiles.interpolated_percentile(
                plain(steps[inside][order]),
                plain(step_size[inside][order]),
                float(step_size[steps <= low].sum()),
                plain(corners[reaching]),
                plain(open_size[reaching]),
                low,
                high,
                target,
            )
        )

    def weighted_sum(self) -> float:
        return _dot(self.distance, self.size)

    def within(self, threshold: float, tau: float | None = None) -> float:
        """Size with d <= threshold = tau + the tie tolerance (see `tie_threshold`).

        Open elements: corner values within that tolerance of tau are ties and count as tau,
        and the share is taken at tau; otherwise the tolerance itself would count as a thin
        strip beyond tau wherever the level set runs along an element's edge.
        """
        tau = threshold if tau is None else tau
        closed = self._closed()
        total = float(self.size[closed & (self.distance <= threshold)].sum())
        if self.open is not None and len(self.open):
            corners = self.corner_distance
            tied = np.where(np.abs(corners - tau) <= threshold - tau, tau, corners)
            total += _dot(self.size[self.open], linear_share_within(tied, tau))
        return total


def edge_midpoints(corners: np.ndarray) -> np.ndarray:
    """(k, dim, dim) corners -> (k, edges, dim) midpoints of the elements' edges."""
    return np.stack(
        [0.5 * (corners[:, i] + corners[:, j]) for i, j in SPLIT_EDGES[corners.shape[1]]], axis=1
    )


def split_values(corner_values: np.ndarray, midpoint_values: np.ndarray) -> np.ndarray:
    """Per-corner values (k, n, ...) of k split elements and the values at their edge midpoints
    (k, edges, ...) -> the children's per-corner values (c * k, n, ...), in split_elements order."""
    n = corner_values.shape[1]
    points = np.concatenate([corner_values, midpoint_values], axis=1)
    return points[:, SPLIT_CHILDREN[n]].reshape(-1, n, *corner_values.shape[2:])


def split_elements(corners: np.ndarray) -> np.ndarray:
    """Midpoint subdivision: (k, dim, dim) corners -> (2k or 4k, dim, dim) children."""
    return split_values(corners, edge_midpoints(corners))


def element_sizes(corners: np.ndarray) -> np.ndarray:
    """Length |b - a| of each segment, area |(b - a) x (c - a)| / 2 of each triangle
    (corners (k, n, dim); `elements.sizes`)."""
    return elements.sizes(plain(corners))


def element_radius(corners: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Largest distance from each element's centre to its corners."""
    return np.linalg.norm(corners - centres[:, None], axis=2).max(axis=1)


def element_bounds(corners, distance, closest):
    """Lower and upper bound of d over each element, from the query at its centre.

    d is 1-Lipschitz: d(x) >= d(c) - |x - c|. The closest point p of c bounds d from above
    everywhere: d(x) <= |x - p|, largest at a corner. This bound is much tighter than
    d(c) + radius on elements nearly parallel to the other surface, the common case.
    With r = max_i |v_i - c| over the corners v_i:
    d in [d(c) - r, min(d(c) + r, max_i |v_i - p|)] (`elements.bounds`).
    """
    return elements.bounds(plain(corners), plain(distance), plain(closest))


def _straddles(low, high, lowest: float, highest: float, threshold: float) -> np.ndarray:
    """Can an element with d in [low, high] hold the percentile, known to lie in [lowest,
    highest], or straddle tau? A NaN percentile is never held (tau alone)."""
    return ((low <= highest) & (high >= lowest)) | ((low <= threshold) & (high > threshold))


FLAT_TOLERANCE = 1e-9
"""mm. Children whose distances all equal their parent's to this tolerance are settled."""


@njit(**JIT)
def flat_families(parent_distance, child_distance, tolerance):
    """Per parent: do all its children (child_distance (k, c), one row each) keep the parent's
    distance within tolerance, max_j |d_child_j - d_parent| <= tolerance?

    On voxel meshes whole patches lie parallel to the other surface at one distance, often
    exactly tau or the percentile itself; their bounds straddle that value at every level,
    yet splitting them only repeats the same distance. A family that came out flat is not
    split again (in 2D only if its corners keep that distance too, `_flat_at_corners`).
    (Rounding in the closest-element choice only ever breaks flatness, so it errs towards
    splitting.)
    """
    flat = np.empty(len(parent_distance), np.bool_)
    for i in range(len(parent_distance)):
        spread = 0.0
        for j in range(child_distance.shape[1]):
            spread = max(spread, abs(child_distance[i, j] - parent_distance[i]))
        flat[i] = spread <= tolerance
    return flat


QUADRATURES = ("linear", "midpoint")
"""How NSD and HDp count the elements still open after the last subdivision: "linear"
interpolates the exact distances at their corners; "midpoint" takes the centre alone (the
paper's plain definition, Fig. A1)."""

OPEN_ROUNDS = 4
"""Rounds of opening elements: interpolating moves the percentile slightly, which may reach
into the range of an element that was closed; each round opens those, usually one suffices."""


def directed_distances(
    surface: tuple[np.ndarray, np.ndarray], target: SurfaceIndex, **options
) -> Directed:
    """Distances from the element centres of one surface (vertices (n, dim), cells (k, dim))
    to `target`: `subdivided` with `options`, then `Leaves.opened`."""
    return subdivided(surface, target, **options).opened()


def subdivided(
    surface: tuple[np.ndarray, np.ndarray],
    target: SurfaceIndex,
    *,
    percentile: float,
    threshold: float,
    subdivision: int,
    refine: str = "adaptive",
    quadrature: str = "linear",
    coinciding: lattice.Coinciding | None = None,
) -> Leaves:
    """The elements of one surface (vertices (n, dim), cells (k, dim)), subdivided where the
    percentile or tau runs through them (segments: all of them, module docstring), with the
    distances from their centres to `target`.

    coinciding: elements known to coincide with one of target's (module `lattice`): d = 0 all
    over them, so they are neither searched nor split nor opened."""
    vertices, cells = surface
    # The elements' corners (k, dim, dim) are made here, so nothing else holds them and the
    # first level's copy is freed once the subdivision has moved on to the next.
    # The compiled loops' one layout; corners are copied once here, not per level.
    corners = plain(vertices[cells])
    centres = elements.centres(corners)
    hit = (
        target.query(centres)
        if coinciding is None
        else lattice.query_centres(target, centres, coinciding)
    )
    distance, closest, cell = hit.distance, hit.point, hit.cell
    size = element_sizes(corners)
    low, high = element_bounds(corners, distance, closest)
    settled = np.zeros(len(distance), bool)
    if coinciding is not None:  # exact: d = 0 over the whole element
        low[coinciding.element] = high[coinciding.element] = 0.0
        settled[coinciding.element] = True
    centres = Centres.of(hit.distance, hit.cell, high)  # for the HD bracket
    # Leaf i is corners[source[i]] for i < len(source), else children[i - len(source)].
    source, children = np.arange(len(distance)), corners[:0]
    for level in range(subdivision):
        if refine == "uniform":
            split = np.ones(len(distance), bool)
        elif cells.shape[1] == 2:  # segments: all but the settled, for MASD and ASSD too
            split = ~settled
        else:
            quantile = Directed(distance, size).percentile(percentile)
            split = ~settled & _straddles(low, high, quantile, quantile, threshold)
        if not split.any():
            break
        if level:
            corners = _leaves(source, corners, children)
            children = None  # now in corners; the next children are the peak of memory
        found = _children(corners, closest, cell, distance, split, target)
        children = found.corners
        # The last level keeps the parents' corners and an index, not a concatenated copy:
        # the leaves are the peak of memory on large pairs.
        source = np.flatnonzero(~split)
        distance = _leaves(source, distance, found.distance)
        size = _leaves(source, size, found.size)
        # The closest elements: the next level's hints, and the open corners'.
        cell = _leaves(source, cell, found.cell)
        # Only the next level's search needs the closest points.
        last = level == subdivision - 1
        closest = None if last else _leaves(source, closest, found.closest)
        low = _leaves(source, low, found.low)
        high = _leaves(source, high, found.high)
        settled = _leaves(source, settled, found.settled)
        del found  # copied into the leaves: not held through the next level

    # Only the leaves kept here can ever be opened (`Leaves.opened`); the rest of the
    # subdivision (the corners of every leaf above all) dies with this call, before the other
    # direction's, as it did when each direction was opened at once.
    size = plain(size)
    target_size = percentile / 100.0 * size.sum()
    floor = float(percentiles.weighted_select(plain(low), size, target_size * (1 - SIZE_ROUNDING)))
    ceiling = float(
        percentiles.weighted_select(plain(high), size, target_size * (1 + SIZE_ROUNDING))
    )
    margin = 2 * PERCENTILE_TOLERANCE
    openable = np.flatnonzero(
        ~settled & _straddles(low, high, floor - margin, ceiling + margin, threshold)
        if quadrature == "linear"
        else np.zeros(len(low), bool)  # "midpoint" counts every leaf by its centre
    )
    old = openable < len(source)
    openable_corners = np.empty((len(openable), *corners.shape[1:]))
    openable_corners[old] = corners[source[openable[old]]]
    openable_corners[~old] = children[openable[~old] - len(source)]
    openable_low, openable_high, hint = low[openable], high[openable], cell[openable]
    held = (openable, openable_corners, openable_low, openable_high, hint)

    def corner_distance(rows: np.ndarray) -> np.ndarray:
        """Exact distances at the corners of the openable leaves `rows` (each within `high`
        of Y, its centre's closest element the likeliest closest element of its corners)."""
        return _corner_distance(openable_corners[rows], openable_high[rows], hint[rows], target)

    return Leaves(
        Directed(distance, size, centres),
        percentile,
        threshold,
        ceiling,
        openable,
        openable_low,
        openable_high,
        corner_distance,
        sum(array.nbytes for array in held),
    )


@dataclass
class Leaves:
    """One direction after the subdivision for `percentile` and `threshold`, before any leaf
    is opened: the centres' distances and sizes (`directed`); an upper bound of the direction's
    percentile however its leaves are opened (`ceiling`); the leaves that can be opened
    (`openable`, ascending), their bounds [low, high] of d, and `corner_distance(rows)`, the
    exact distances at the corners of the openable leaves `rows`; `held_bytes`, the memory
    those take until the leaves are opened.

    The ceiling: a leaf counts as a step at its centre distance or by the shares of its corner
    distances, all at most its `high`, so its size within t is at least size * [high <= t],
    and the size within reaches p % no later than at the step percentile of the highs. The
    same argument with the lows bounds it from below, so every quantile `opened` meets lies
    between the two, and a leaf whose range reaches neither that interval nor tau is never
    opened. Both are taken at a target size SIZE_ROUNDING wider (sums of the same
    sizes in another order differ in their last bits, and on voxel meshes, whose elements
    come in a few sizes, p % of the total can fall exactly on a step) and widened by an
    interpolated percentile's rounding (PERCENTILE_TOLERANCE)."""

    directed: Directed
    percentile: float
    threshold: float
    ceiling: float
    openable: np.ndarray
    low: np.ndarray
    high: np.ndarray
    corner_distance: Callable[[np.ndarray], np.ndarray]
    held_bytes: int = 0

    def opened(self, for_percentile: bool = True) -> Directed:
        """The leaves as NSD and HDp count them: the openable leaves whose range [low, high]
        straddles tau, or holds the percentile (unless `for_percentile` is False), opened,
        with the exact distances at their corners (none under "midpoint" quadrature: no leaf
        is openable). Opening moves the percentile slightly, so it runs in rounds (OPEN_ROUNDS)
        until no further leaf holds it."""
        directed = self.directed
        is_open = np.zeros(len(self.openable), bool)
        opened, corner_distance = [], []
        for _ in range(OPEN_ROUNDS):
            quantile = directed.percentile(self.percentile) if for_percentile else np.nan
            new = np.flatnonzero(
                ~is_open & _straddles(self.low, self.high, quantile, quantile, self.threshold)
            )
            if len(new) == 0:
                break
            is_open[new] = True
            opened.append(self.openable[new])
            corner_distance.append(self.corner_distance(new))
            directed = Directed(
                directed.distance,
                directed.size,
                directed.centres,
                np.concatenate(opened),
                np.concatenate(corner_distance),
            )
        return directed


def opened_pair(a_to_b: Leaves, b_to_a: Leaves) -> tuple[Directed, Directed]:
    """Both directions, opened: the one whose `Leaves.ceiling` is higher first, then the
    other beside it (`_opened_beside`)."""
    if a_to_b.ceiling >= b_to_a.ceiling:
        a_directed = a_to_b.opened()
        return a_directed, _opened_beside(a_directed, b_to_a)
    b_directed = b_to_a.opened()
    return _opened_beside(b_directed, a_to_b), b_directed


def _opened_beside(other: Directed, leaves: Leaves) -> Directed:
    """`leaves` opened, for tau alone when their ceiling lies below the other direction's
    percentile.

    HDp is the larger of the two directed percentiles. If this direction's ceiling is below
    the other's percentile, its own is the smaller however it is resolved, and HDp is the
    other's: no metric moves when its leaves are opened for tau alone (NSD needs only the
    leaves straddling tau, MASD and ASSD use the centres), and its percentile's corner
    queries are saved. The margin is an interpolated percentile's rounding, on both sides."""
    larger = other.percentile(leaves.percentile)
    return leaves.opened(leaves.ceiling + 2 * PERCENTILE_TOLERANCE >= larger)


DEFERRED_BYTES = 1 << 24
"""A -> B waits to be opened until B -> A is subdivided (`both_directions`) only while what it
holds for its openable leaves (their corners above all: 72 bytes a leaf) fits in 16 MiB: it is
held through B's subdivision, the peak of memory, which this bounds to grow by no more."""


def both_directions(
    surfaces, indexes, coinciding=(None, None), **options
) -> tuple[Directed, Directed]:
    """A -> B and B -> A (surfaces (A, B), their indexes (A's, B's)): `subdivided` with
    `options`, then opened (`opened_pair`), so that the direction whose percentile is provably
    the smaller opens its leaves for tau alone. When A has many openable leaves it is opened
    at once, in full (DEFERRED_BYTES), and only B can be spared."""
    a_to_b = subdivided(surfaces[0], indexes[1], coinciding=coinciding[0], **options)
    a_directed = None
    if a_to_b.held_bytes > DEFERRED_BYTES:
        a_directed, a_to_b = a_to_b.opened(), None  # its corners go before B's subdivision
    b_to_a = subdivided(surfaces[1], indexes[0], coinciding=coinciding[1], **options)
    if a_directed is None:
        return opened_pair(a_to_b, b_to_a)
    return a_directed, _opened_beside(a_directed, b_to_a)


def _leaves(kept: np.ndarray, parents: np.ndarray, children: np.ndarray) -> np.ndarray:
    """A per-element array after a level: the rows `kept` (the unsplit elements, in order),
    then the children's rows. Indexing by the kept rows' positions, found once a level, is
    cheaper than by the split mask for each of the arrays."""
    return np.concatenate([parents[kept], children])


@dataclass
class _Children:
    """The children of split elements: corners, exact distance and closest point at their
    centres, sizes, bounds of d over each, and whether their family is settled (flat)."""

    corners: np.ndarray
    distance: np.ndarray
    closest: np.ndarray
    cell: np.ndarray
    size: np.ndarray
    low: np.ndarray
    high: np.ndarray
    settled: np.ndarray


def _children(corners, closest, cell, distance, split, target: SurfaceIndex):
    """Split the elements marked in `split` and measure their children (`_Children`); the
    queries' other results and the children's centres die here, before the next level."""
    # A child's distance is at most its centre's distance to the parent's closest point.
    children, centres, reach = _split_with_reach(corners, closest, split)
    per_child = len(children) // np.count_nonzero(split)
    found, point, found_cell = _query_children(
        centres, reach, split, distance, closest, cell, target
    )
    flat = flat_families(distance[split], found.reshape(-1, per_child), FLAT_TOLERANCE)
    if flat.any() and corners.shape[1] == 2:  # segments: their corners must agree too
        rows = np.flatnonzero(split)[flat]
        flat[flat] = _flat_at_corners(
            corners[rows], closest[rows], cell[rows], distance[rows], target
        )
    low, high = element_bounds(children, found, point)
    return _Children(
        children,
        found,
        point,
        found_cell,
        element_sizes(children),
        low,
        high,
        np.repeat(flat, per_child),
    )


def _flat_at_corners(corners, closest, cell, distance, target: SurfaceIndex) -> np.ndarray:
    """Per element (corners (k, n, dim), its centre's closest point, closest element and
    distance): is d at every corner its centre's distance, within FLAT_TOLERANCE?

    Children that keep their parent's distance do not make d constant over the parent: on
    pixel meshes d often holds a parallel neighbour's distance over most of an element and
    falls towards one end, where another element of the other surface comes nearer (2D
    offset discs at 0.5 x 1.5 mm: d = 2 at the centres of a 1.5 mm segment and both
    halves, 1.8975 at one end; settled, it put HD95 at 2.0 against 1.9905). The corners see
    such an end. Each corner lies within |v_i - p| of the other surface (p: the centre's
    closest point), its search radius. Segments only: on triangles the check moved NSD by up
    to 1.5e-3 at the default level (docs/reference.md, Open)."""
    reach = np.linalg.norm(corners - closest[:, None], axis=2).max(axis=1)
    at_corners = _corner_distance(corners, reach, cell, target)
    return np.abs(at_corners - distance[:, None]).max(axis=1) <= FLAT_TOLERANCE


def _query_children(centres, reach, split, distance, closest, cell, target: SurfaceIndex):
    """(distance, closest point, closest element) of the children's centres on target, in
    `_split_with_reach`'s order.

    A child is searched within its reach with its parent's closest element as the hint (the
    likeliest closest element of the children). A triangle's middle child has its parent's
    centre (`geometry.CENTRAL_CHILD`): it takes its parent's distance, closest point and
    element instead of searching the same point again, a quarter of the children's queries.
    """
    rows = np.flatnonzero(split)
    per_child = len(centres) // len(rows)
    parent = np.repeat(rows, per_child)
    searched = np.ones(len(parent), bool)
    central = CENTRAL_CHILD[centres.shape[1]]
    if central is not None:
        searched[central::per_child] = False
    found_distance, found_point, found_cell = distance[parent], closest[parent], cell[parent]
    hit = target.query(centres[searched], reach[searched], hint=(found_cell[searched], 1))
    found_distance[searched], found_point[searched], found_cell[searched] = (
        hit.distance,
        hit.point,
        hit.cell,
    )
    return found_distance, found_point, found_cell


def _split_with_reach(corners, closest, split: np.ndarray):
    """Children of the elements marked in `split` (split_elements), their centres, and each
    centre's distance to its parent's closest point (`elements.split_children`)."""
    return elements.split_children(plain(corners), plain(closest), np.flatnonzero(split))


def _corner_distance(
    corners: np.ndarray, reach: np.ndarray, hint: np.ndarray, target: SurfaceIndex
) -> np.ndarray:
    """Exact distances (k, n) at the corners (k, n, dim) of k elements, element i's corners
    within reach[i] of target, hint[i] the likeliest closest element of its corners.

    Open elements share corners: a triangle's four children have six distinct corners (its
    own and its edge midpoints), not twelve, and neighbouring elements share the corners and
    midpoints of their common edges. Each distinct point is queried once, with the reach and
    hint of the first element that has it (any element's reach bounds the distance at its
    corners), so elements that share a point share its distance.
    """
    count, per_cell, dim = corners.shape
    points = corners.reshape(-1, dim)
    first, same = _distinct_points(points)
    element = first // per_cell
    found = target.query(points[first], reach[element], hint=(hint[element], 1))
    return found.distance[same].reshape(count, per_cell)


_KEY = np.array([1.0, 0.7548776662466927, 0.5698402909980532])
"""Weights of the sort key of `_distinct_points` (any fixed irrational-looking numbers)."""


def _distinct_points(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, same): rows `first` of points (k, dim) are distinct, and points[first][same]
    equals points. Rows are the same when all their coordinates are: a midpoint that two
    elements compute from the same two corners is the same float (0.5 * (a + b), addition
    commutes). Sorted by one weighted sum of the coordinates, summed column by column (no
    (k, dim) temporary, no BLAS: see _dot); only rows next to each other with the same sum are
    compared. Two different rows with the same sum only cost a duplicate query, never a
    wrong distance."""
    key = points[:, 0] * _KEY[0]
    for axis in range(1, points.shape[1]):
        key += points[:, axis] * _KEY[axis]
    return distinct_in_order(plain(points), key, np.argsort(key))


@njit(**JIT)
def distinct_in_order(points, key, order):
    """(first, same) of `_distinct_points`, from the order of the points' sort key:
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
