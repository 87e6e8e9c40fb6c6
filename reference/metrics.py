"""Boundary-element-weighted distance metrics (paper, Algorithm 1) from one distance pass.

For each direction X -> Y: query points x_n at element centres, d_n = exact distance from x_n
to the surface Y, s_n = size of the element (length in 2D, area in 3D). With |S_X| = sum s_n:

    HD    = max(max d_AB, max d_BA)
    HDp   = max(d_AB[n_p], d_BA[m_p]),  n_p = smallest n (in sorted order) with
            sum_{k <= n} s_k >= p / 100 * |S_A|
    MASD  = (sum d_AB s_A / |S_A| + sum d_BA s_B / |S_B|) / 2
    ASSD  = (sum d_AB s_A + sum d_BA s_B) / (|S_A| + |S_B|)
    NSD   = (sum of s with d <= tau, both directions) / (|S_A| + |S_B|)

Elements are subdivided only where a finer element can change a result: d is 1-Lipschitz, so
over an element of radius r (largest distance from its query point to its corners) d stays
within [d - r, d + r], and it stays below |x - p| for the closest point p of the centre. An
element is split (into 4 triangles / 2 segments) while that interval contains the current
weighted percentile (HDp) or straddles tau (NSD), up to `subdivision` times, unless its
family came out flat (all children at the parent's distance: splitting further repeats it).
The public HD replaces the centre maximum by the bracket of module `hausdorff` (vertices
and refined points, within 1e-3 mm of the surface maximum). With `refine="uniform"` every
element is split, which is what the convergence study compares against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.closest import SurfaceIndex

TIE_TOLERANCE = 1e-6
"""Relative tie tolerance at tau: d counts as within tau if d <= tau + TIE_TOLERANCE * L,
L = the largest extent of the two surfaces. On voxel grids many distances equal tau exactly;
float32 element selection and float64 rounding move them by ~1e-8 L, so exact ties stay in."""


def tie_threshold(tau: float, *vertices: np.ndarray) -> float:
    """tau + TIE_TOLERANCE * L, L = the largest extent of the given vertex arrays (at least tau)."""
    extent = float(np.ptp(np.concatenate(vertices), axis=0).max())
    return tau + TIE_TOLERANCE * max(extent, tau)


@dataclass
class Directed:
    """Distances and element sizes of one direction (query surface -> other surface).

    centres: (distance, closest cell) at the centres of the unsplit elements, kept for the HD
    bracket (module `hausdorff`), which starts from the same points.
    """

    distance: np.ndarray
    size: np.ndarray
    centres: tuple[np.ndarray, np.ndarray] | None = None

    def percentile(self, percentile: float) -> float:
        """d[n_p]: the sorted distance at which the cumulative size reaches p% of the total."""
        order = np.argsort(self.distance, kind="stable")
        cumulative = np.cumsum(self.size[order])
        target = percentile / 100.0 * cumulative[-1]
        position = min(int(np.searchsorted(cumulative, target, side="left")), len(order) - 1)
        return float(self.distance[order[position]])

    def weighted_sum(self) -> float:
        return float(np.dot(self.distance, self.size))

    def within(self, threshold: float) -> float:
        return float(self.size[self.distance <= threshold].sum())


_EDGES = {2: ((0, 1),), 3: ((0, 1), (1, 2), (2, 0))}
"""Edges of a segment / triangle, as corner pairs; their midpoints are the new points of a split."""

_CHILDREN = {2: np.array([[0, 2], [2, 1]]),
             3: np.array([[0, 3, 5], [3, 1, 4], [5, 4, 2], [3, 4, 5]])}
"""Children of a split element, as indices into (corners..., edge midpoints...): a segment
(a, b) -> (a, m), (m, b); a triangle (a, b, c) -> (a, ab, ca), (ab, b, bc), (ca, bc, c),
(ab, bc, ca)."""


def edge_midpoints(corners: np.ndarray) -> np.ndarray:
    """(k, dim, dim) corners -> (k, edges, dim) midpoints of the elements' edges."""
    return np.stack([0.5 * (corners[:, i] + corners[:, j]) for i, j in _EDGES[corners.shape[1]]],
                    axis=1)


def split_values(corner_values: np.ndarray, midpoint_values: np.ndarray) -> np.ndarray:
    """Per-corner values (k, n, ...) of k split elements and the values at their edge midpoints
    (k, edges, ...) -> the children's per-corner values (c * k, n, ...), in split_elements order."""
    n = corner_values.shape[1]
    points = np.concatenate([corner_values, midpoint_values], axis=1)
    return points[:, _CHILDREN[n]].reshape(-1, n, *corner_values.shape[2:])


def split_elements(corners: np.ndarray) -> np.ndarray:
    """Midpoint subdivision: (k, dim, dim) corners -> (2k or 4k, dim, dim) children."""
    return split_values(corners, edge_midpoints(corners))


def _sizes(corners: np.ndarray) -> np.ndarray:
    if corners.shape[1] == 2:
        return np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    return 0.5 * np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0],
                                         corners[:, 2] - corners[:, 0]), axis=1)


def element_radius(corners: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Largest distance from each element's centre to its corners."""
    return np.linalg.norm(corners - centres[:, None], axis=2).max(axis=1)


def _bounds(corners, distance, closest):
    """Lower and upper bound of d over each element, from the query at its centre.

    d is 1-Lipschitz: d(x) >= d(c) - |x - c|. The closest point p of c bounds d from above
    everywhere: d(x) <= |x - p|, largest at a corner. This bound is much tighter than
    d(c) + radius on elements nearly parallel to the other surface, the common case.
    """
    radius = element_radius(corners, corners.mean(axis=1))
    reach = np.linalg.norm(corners - closest[:, None], axis=2).max(axis=1)
    return distance - radius, np.minimum(distance + radius, reach)


FLAT_TOLERANCE = 1e-9
"""mm. Children whose distances all equal their parent's to this tolerance are settled."""


def _flat_families(parent_distance: np.ndarray, child_distance: np.ndarray) -> np.ndarray:
    """Per parent: do all its children (one row each) keep the parent's distance?

    On voxel meshes whole patches lie parallel to the other surface at one distance, often
    exactly tau or the percentile itself; their bounds straddle that value at every level,
    yet splitting them only repeats the same distance. A family that came out flat is not
    split again. (Rounding in the closest-element choice only ever breaks flatness, so it
    errs towards splitting.)
    """
    spread = np.abs(child_distance - parent_distance[:, None]).max(axis=1)
    return spread <= FLAT_TOLERANCE


def directed_distances(corners: np.ndarray, target: SurfaceIndex, *, percentile: float,
                       threshold: float, subdivision: int, refine: str = "adaptive") -> Directed:
    """Distances from the element centres of one surface (corners (k, dim, dim)) to `target`."""
    hit = target.query(corners.mean(axis=1))
    at_centres = hit.distance, hit.cell
    distance, closest = hit.distance, hit.point
    size = _sizes(corners)
    settled = np.zeros(len(distance), bool)
    for level in range(subdivision):
        if refine == "uniform":
            split = np.ones(len(distance), bool)
        else:
            low, high = _bounds(corners, distance, closest)
            quantile = Directed(distance, size).percentile(percentile)
            split = ~settled & (((low <= quantile) & (high >= quantile))
                                | ((low <= threshold) & (high > threshold)))
        if not split.any():
            break
        children = split_elements(corners[split])
        child_centres = children.mean(axis=1)
        per_child = len(children) // np.count_nonzero(split)
        # A child's distance is at most its centre's distance to the parent's closest point.
        parent_closest = np.repeat(closest[split], per_child, axis=0)
        hit = target.query(child_centres, np.linalg.norm(child_centres - parent_closest, axis=1))
        flat = _flat_families(distance[split], hit.distance.reshape(-1, per_child))
        distance = np.concatenate([distance[~split], hit.distance])
        size = np.concatenate([size[~split], _sizes(children)])
        if level == subdivision - 1:
            break  # no further split: skip the geometry (the peak of memory on large pairs)
        corners = np.concatenate([corners[~split], children])
        closest = np.concatenate([closest[~split], hit.point])
        settled = np.concatenate([settled[~split], np.repeat(flat, per_child)])
    return Directed(distance, size, at_centres)


def weighted_metrics(a_to_b: Directed, b_to_a: Directed, *, percentile: float,
                     threshold: float) -> dict[str, float]:
    """HD, HDp ("HD95"), MASD, ASSD, NSD from both directions (see module docstring)."""
    area_a, area_b = a_to_b.size.sum(), b_to_a.size.sum()
    return {
        "HD": float(max(a_to_b.distance.max(), b_to_a.distance.max())),
        "HD95": max(a_to_b.percentile(percentile), b_to_a.percentile(percentile)),
        "MASD": 0.5 * (a_to_b.weighted_sum() / area_a + b_to_a.weighted_sum() / area_b),
        "ASSD": (a_to_b.weighted_sum() + b_to_a.weighted_sum()) / (area_a + area_b),
        "NSD": (a_to_b.within(threshold) + b_to_a.within(threshold)) / (area_a + area_b),
    }
