"""Convergence of the default subdivision: the plain call's scores (`bounds=False`: the
subdivision's own values, before any bracket moves them) minus a much finer uniform level.

The fine values come from an independent path: every element split `fine` times (uniform),
HD as the largest distance at the fine element centres and corners (a lower bound of the
surface maximum), the other metrics from the same size-weighted definitions. The plain HD comes from
the bracket of module `hausdorff`, so plain HD - fine HD must be >= 0 and small.
`benchmarks/reference_convergence.py` prints the table of docs/reference.md from these.
"""

from __future__ import annotations

import numpy as np

from reference.api import compute_metrics, mesh_surface
from reference.closest import SurfaceIndex
from reference.distance_pass import directed_distances, split_elements, tie_threshold
from reference.metrics import weighted_metrics
from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU, DISTANCE_KEYS


def fine_scores(
    surface_a,
    surface_b,
    *,
    fine: int,
    percentile: float = DEFAULT_PERCENTILE,
    tau: float = DEFAULT_TAU,
) -> dict[str, float]:
    """Distance metrics with every element split `fine` times; HD = max at fine centres and
    fine corners (the corners are the mesh vertices and the midpoints added by splitting)."""
    threshold = tie_threshold(tau, surface_a[0], surface_b[0])
    index_a, index_b = SurfaceIndex(*surface_a), SurfaceIndex(*surface_b)
    directions = ((surface_a, index_b), (surface_b, index_a))
    directed = [
        directed_distances(
            src,
            target,
            percentile=percentile,
            threshold=threshold,
            subdivision=fine,
            refine="uniform",
        )
        for src, target in directions
    ]
    scores = weighted_metrics(*directed, percentile=percentile, threshold=threshold, tau=tau)
    for src, target in directions:
        scores["HD"] = max(scores["HD"], _max_at_fine_corners(src, target, fine))
    return scores


def _max_at_fine_corners(surface, target: SurfaceIndex, fine: int) -> float:
    corners = surface[0][surface[1]]
    for _ in range(fine):
        corners = split_elements(corners)
    points = np.unique(corners.reshape(-1, corners.shape[2]), axis=0)
    return float(target.query(points).distance.max())


def differences(a: np.ndarray, b: np.ndarray, spacing, *, fine: int = 4) -> dict[str, float]:
    """Plain minus fine value of HD, HD95, MASD, ASSD, NSD for two non-empty masks."""
    spacing = np.asarray(spacing, float)
    origin = np.zeros(a.ndim)
    surface_a = mesh_surface(a, spacing, origin, "discrete_marching_cubes")
    surface_b = mesh_surface(b, spacing, origin, "discrete_marching_cubes")
    # The plain call takes the lattice path; the fine values take the general path (BVH, no
    # exact zeros), independent of it.
    plain = compute_metrics(a, b, spacing, metrics=DISTANCE_KEYS, bounds=False)
    reference = fine_scores(surface_a, surface_b, fine=fine)
    return {key: float(plain[key] - reference[key]) for key in DISTANCE_KEYS}
