"""Directed Hausdorff distance between two surfaces, bracketed to a tolerance.

h(X, Y) = max over points x of surface X of d_Y(x), d_Y = exact distance to surface Y.

Lower bound: every vertex, centre and subdivision point of X is a point of X, so the largest
exact distance found at any of them is <= h. Upper bound per element T of X, from two facts:

* Lipschitz: d_Y(x) <= d_Y(s) + |x - s| for any sample s, so max_T d_Y <= d_Y(c) + r
  (c = centre, r = largest |c - corner|).
* Convexity: for any single element f of Y, d_Y(x) <= dist(x, f), and dist(., f) is convex,
  so its maximum over T is reached at a corner: max_T d_Y <= max_i dist(v_i, f). Taking for f
  the closest element of Y to the centre or to any corner gives the exact maximum wherever
  one element of Y is closest over all of T (parallel faces, the usual voxel-mesh case).

Elements whose upper bound exceeds the running lower bound by more than the tolerance are
split into 4 triangles (2 segments); the others are settled. Near the maximum the bound
tightens with element size, so only a few elements near the farthest points are refined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.closest import SurfaceIndex
from reference.metrics import element_radius, split_elements

HD_TOLERANCE = 1e-3
"""Default gap (mm) allowed between the lower and upper bound of a directed HD."""

MAX_LEVELS = 16
"""Subdivision cap; a 2 mm element is then 3e-5 mm, below the float32 slack of the index."""


@dataclass
class Bracket:
    """lower <= directed Hausdorff distance <= upper (mm)."""

    lower: float
    upper: float


def _convexity_bound(corners: np.ndarray, candidate_cells: list[np.ndarray],
                     target: SurfaceIndex) -> np.ndarray:
    """min over candidate elements f of max over corners v_i of dist(v_i, f), per element."""
    count, per_cell, dim = corners.shape
    flat = corners.reshape(-1, dim)
    best = np.full(count, np.inf)
    for cell in candidate_cells:
        far = target.distance_to_cells(flat, np.repeat(cell, per_cell))[0]
        best = np.minimum(best, far.reshape(count, per_cell).max(axis=1))
    return best


def _corner_queries(vertices, cells, corners, target):
    """Exact distance and closest element of Y at every corner, each shared vertex once."""
    if cells is not None:
        hit = target.query(vertices)
        return hit.distance[cells], hit.cell[cells]
    count, per_cell, dim = corners.shape
    hit = target.query(corners.reshape(-1, dim))
    return hit.distance.reshape(count, per_cell), hit.cell.reshape(count, per_cell)


def directed_hausdorff(vertices: np.ndarray, cells: np.ndarray, target: SurfaceIndex, *,
                       tolerance: float = HD_TOLERANCE, max_levels: int = MAX_LEVELS) -> Bracket:
    """Bracket of max_{x in X} d_Y(x): X = (vertices (n, dim), cells (m, dim)), Y = target."""
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive; got {tolerance!r}")
    corners = vertices[cells]
    lower, settled_upper = 0.0, 0.0
    for level in range(max_levels + 1):
        count, per_cell, dim = corners.shape
        centres = corners.mean(axis=1)
        at_centre = target.query(centres)
        # Level 0 queries the mesh vertices; subdivided elements share few corners.
        corner_distance, corner_cell = _corner_queries(vertices, cells if level == 0 else None,
                                                       corners, target)
        lower = max(lower, float(at_centre.distance.max()), float(corner_distance.max()))
        upper = at_centre.distance + element_radius(corners, centres)
        # The convexity bound costs per_cell + 1 exact distances per candidate: only where
        # the Lipschitz bound leaves the element open.
        open_ = upper > lower + tolerance
        if open_.any():
            candidates = [at_centre.cell[open_]] + [corner_cell[open_, i]
                                                    for i in range(per_cell)]
            upper[open_] = np.minimum(upper[open_],
                                      _convexity_bound(corners[open_], candidates, target))
        split = upper > lower + tolerance
        settled_upper = max(settled_upper, float(upper[~split].max(initial=0.0)))
        if not split.any():
            break
        if level == max_levels:
            settled_upper = max(settled_upper, float(upper[split].max()))
            break
        corners = split_elements(corners[split])
    return Bracket(lower, max(settled_upper, lower))
