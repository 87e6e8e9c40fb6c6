"""Google DeepMind `surface-distance` (PyPI `surface-distance`, import `surface_distance`).

Boundary: the grid is shifted by half a voxel and each 2x2(x2) neighbourhood is looked up in a
marching-cubes-like table, giving surface elements ("surfels") with an area (3D) or length (2D)
and a position; distances come from a Euclidean distance transform in mm.
Definitions: HD and HDp are weighted by surfel area (the directed percentile is the first
distance whose cumulative surfel area reaches p %, the larger direction wins); MASD is the mean
of the two area-weighted directed means (`compute_average_surface_distance`); ASSD is the
area-weighted pooled mean of both directed distance sets (from `compute_surface_distances`);
NSD is the area-weighted fraction within tau (`compute_surface_dice_at_tolerance`).
Quirks: wants bool masks; the package uses `np.Inf`, removed in numpy 2, so it raises on an
empty mask.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter


class DeepMind(PythonAdapter):
    name = "deepmind"
    label = "Google DeepMind"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "ASSD", "NSD", "DSC")
    module = "surface_distance"
    distribution = "surface-distance"
    install_hint = "pip install surface-distance"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import surface_distance as sd

        values: dict[str, float] = {}
        if "DSC" in metrics:
            values["DSC"] = float(sd.compute_dice_coefficient(a, b))
        if not set(metrics) - {"DSC"}:
            return values
        # mask_gt = a, mask_pred = b; spacing in array axis order, as the tool documents.
        distances = sd.compute_surface_distances(a, b, spacing)
        if "HD" in metrics:
            values["HD"] = float(sd.compute_robust_hausdorff(distances, 100))
        if "HD95" in metrics:
            values["HD95"] = float(sd.compute_robust_hausdorff(distances, percentile))
        if "MASD" in metrics:
            gt_to_pred, pred_to_gt = sd.compute_average_surface_distance(distances)
            values["MASD"] = float((gt_to_pred + pred_to_gt) / 2)
        if "ASSD" in metrics:
            values["ASSD"] = _area_weighted_pooled_mean(distances)
        if "NSD" in metrics:
            values["NSD"] = float(sd.compute_surface_dice_at_tolerance(distances, tau))
        return values


def _area_weighted_pooled_mean(distances: dict) -> float:
    """ASSD = (sum d_a s_a + sum d_b s_b) / (sum s_a + sum s_b), the tool's own surfels.

    The package has no ASSD function; the study built it from the distances and surfel areas
    `compute_surface_distances` returns.
    """
    weighted = np.sum(distances["distances_gt_to_pred"] * distances["surfel_areas_gt"]) + np.sum(
        distances["distances_pred_to_gt"] * distances["surfel_areas_pred"]
    )
    area = np.sum(distances["surfel_areas_gt"]) + np.sum(distances["surfel_areas_pred"])
    return float(weighted / area)
