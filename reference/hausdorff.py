"""Directed Hausdorff distance between two surfaces, bracketed to a tolerance.

h(X, Y) = max over points x of surface X of d_Y(x), d_Y = exact distance to surface Y.

Lower bound: every vertex, centre and subdivision point of X is a point of X, so the largest
exact distance found at any of them is <= h. Upper bound per element T of X, from two facts:

* Lipschitz: d_Y(x) <= d_Y(s) + |x - s| for any sample s, so max_T d_Y <= d_Y(c) + r
  (c = centre, r = largest |c - corner|). At the centres the closest point p of c bounds it
  too: d_Y(x) <= |x - p|, so max_T d_Y <= max_i |v_i - p| (the distance pass's upper bound,
  `metrics.element_bounds`, handed over with its queries).
* Convexity: for any single element f of Y, d_Y(x) <= dist(x, f), and dist(., f) is convex,
  so its maximum over T is reached at a corner: max_T d_Y <= max_i dist(v_i, f). Taking for f
  the closest element of Y to the centre or to any corner gives the exact maximum wherever
  one element of Y is closest over all of T (parallel faces, the usual voxel-mesh case).

Elements whose upper bound exceeds the running lower bound by more than the tolerance are
split into 4 triangles (2 segments); the others are settled. Near the maximum the bound
tightens with element size, so only a few elements near the farthest points are refined.
The first bound needs only the centres; corners are queried for the elements it leaves open,
usually a few near the farthest points (a corner farther than the running lower bound plus
the tolerance always belongs to one of them: its elements' Lipschitz bound reaches it).

The symmetric HD is max(h(A, B), h(B, A)): a direction only needs bracketing down to what is
already known of that maximum. With a `floor` (any exact distance already found between the
two surfaces), an element is settled once its upper bound is within the tolerance of
max(lower, floor); on the shorter direction most elements settle at once. Then
max(lower_AB, lower_BA, floor) <= HD <= that + tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from reference.closest import SurfaceIndex, plain
from reference.distance_pass import (
    Centres,
    edge_midpoints,
    element_bounds,
    element_radius,
    split_values,
)
from reference.elements import JIT, corner, on_element, squared_gap

HD_TOLERANCE = 1e-3
"""Default gap (mm) allowed between the lower and upper bound of a directed HD."""

MAX_LEVELS = 16
"""Subdivision cap; a 2 mm element is then 3e-5 mm, below the float32 slack of the index."""


@dataclass
class Bracket:
    """lower <= value <= upper: of the directed Hausdorff distance here, of any metric in
    module `bounds`. note: what stopped its refinement short of its aim ("" if nothing)."""

    lower: float
    upper: float
    note: str = ""

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def holds(self, value: float) -> bool:
        """lower <= value <= upper."""
        return self.lower <= value <= self.upper


def candidate_distances(
    corners: np.ndarray, candidates: np.ndarray, target: SurfaceIndex
) -> np.ndarray:
    """dist(v_i, f) from the corners v_i of each element (corners (k, n, dim)) to each of its
    candidate elements f of target (candidates (k, c): cells of target): (k, c, n).
    d(x) <= dist(x, f), convex, so over an element d is at most the max over its corners, and
    its mean at most their mean (module `bounds`)."""
    return _to_candidates(
        plain(corners), np.ascontiguousarray(candidates, np.int64), target.vertices, target.cells
    )


@njit(**JIT)
def _to_candidates(corners, candidates, vertices, cells):
    """Exact distance from corner j of element i (corners (k, n, dim)) to element
    candidates[i, c] of the surface (vertices, cells), as out[i, c, j]: `elements.to_cells`'s
    arithmetic, without repeating each corner per candidate."""
    count, per_cell, dim = corners.shape
    out = np.empty((count, candidates.shape[1], per_cell))
    element = np.empty((1, cells.shape[1], dim))
    for i in range(count):
        for c in range(candidates.shape[1]):
            for j in range(cells.shape[1]):
                element[0, j, :] = vertices[cells[candidates[i, c], j]]
            for j in range(per_cell):
                px, py, pz = corner(corners, i, j)
                _, qx, qy, qz = on_element(px, py, pz, element, 0)
                out[i, c, j] = math.sqrt(squared_gap(px, py, pz, qx, qy, qz))
    return out


def _convexity_bound(
    corners: np.ndarray, candidates: np.ndarray, target: SurfaceIndex
) -> np.ndarray:
    """min over candidate elements f of max over corners v_i of dist(v_i, f), per element."""
    return candidate_distances(corners, candidates, target).max(axis=2).min(axis=1)


@dataclass
class _Corners:
    """Elements being refined: corners (k, n, dim) and, per corner, the exact distance to Y,
    the closest element of Y and the closest point on it."""

    points: np.ndarray
    distance: np.ndarray
    cell: np.ndarray
    closest: np.ndarray

    @classmethod
    def of_cells(cls, vertices, cells, target: SurfaceIndex) -> _Corners:
        used, corner = np.unique(cells, return_inverse=True)  # each shared vertex once
        corner = corner.reshape(cells.shape)
        hit = target.query(vertices[used])
        return cls(vertices[cells], hit.distance[corner], hit.cell[corner], hit.point[corner])

    def split(self, chosen: np.ndarray, target: SurfaceIndex) -> _Corners:
        """Children of the chosen elements; only the new points, the edge midpoints, are
        queried. d(m) <= |m - p| for the closest point p of any corner of m's element: the
        smallest such bound is the search radius."""
        corners, closest = self.points[chosen], self.closest[chosen]
        midpoints = edge_midpoints(corners)
        count, edges, dim = midpoints.shape
        radius = np.linalg.norm(midpoints[:, :, None] - closest[:, None], axis=3).min(axis=2)
        hit = target.query(midpoints.reshape(-1, dim), radius.reshape(-1))
        return _Corners(
            split_values(corners, midpoints),
            split_values(self.distance[chosen], hit.distance.reshape(count, edges)),
            split_values(self.cell[chosen], hit.cell.reshape(count, edges)),
            split_values(closest, hit.point.reshape(count, edges, dim)),
        )


def directed_hausdorff(
    vertices: np.ndarray,
    cells: np.ndarray,
    target: SurfaceIndex,
    *,
    tolerance: float = HD_TOLERANCE,
    max_levels: int = MAX_LEVELS,
    floor: float = 0.0,
    centres: Centres | None = None,
) -> Bracket:
    """Bracket of h = max_{x in X} d_Y(x): X = (vertices (n, dim), cells (m, dim)), Y = target.

    lower <= h <= upper always; upper <= max(lower, floor) + tolerance (see module docstring).
    centres: the queries at the centres of X's cells (`distance_pass.Centres`), if the caller
    already has them.
    """
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive; got {tolerance!r}")
    if centres is None:
        corners = plain(vertices[cells])
        hit = target.query(corners.mean(axis=1))
        upper = element_bounds(corners, hit.distance, hit.point)[1]
        centres = Centres.of(hit.distance, hit.cell, upper)
    lower = centres.largest
    # The bound from the centres alone settles most elements at once; only the others need
    # their corners queried (and the convexity bound) in the loop below.
    open_ = centres.upper > max(lower, floor) + tolerance
    settled_upper = max(centres.others_upper, float(centres.upper[~open_].max(initial=0.0)))
    if not open_.any():
        return Bracket(lower, max(settled_upper, lower))
    elements = _Corners.of_cells(vertices, cells[centres.element[open_]], target)
    centre_distance, centre_cell = centres.distance[open_], centres.cell[open_]
    for level in range(max_levels + 1):
        corners = elements.points
        centres = corners.mean(axis=1)
        if level:
            # The centre is no farther from Y than from any corner's closest point.
            reach = np.linalg.norm(centres[:, None] - elements.closest, axis=2).min(axis=1)
            at_centre = target.query(centres, reach)
            centre_distance, centre_cell = at_centre.distance, at_centre.cell
        lower = max(lower, float(centre_distance.max()), float(elements.distance.max()))
        enough = max(lower, floor) + tolerance  # an element bounded by this is settled
        upper = centre_distance + element_radius(corners, centres)
        # The convexity bound costs per_cell + 1 exact distances per candidate: only where
        # the Lipschitz bound leaves the element open.
        open_ = upper > enough
        if open_.any():
            candidates = np.column_stack([centre_cell[open_], elements.cell[open_]])
            upper[open_] = np.minimum(
                upper[open_], _convexity_bound(corners[open_], candidates, target)
            )
        split = upper > enough
        settled_upper = max(settled_upper, float(upper[~split].max(initial=0.0)))
        if not split.any():
            break
        if level == max_levels:
            settled_upper = max(settled_upper, float(upper[split].max()))
            break
        elements = elements.split(split, target)
    return Bracket(lower, max(settled_upper, lower))
