"""MONAI (PyPI `monai`), `monai.metrics`.

Boundary: erosion with a square-connectivity element and subtraction (`get_mask_edges`),
after cropping to the bounding box of both masks; distances from a distance transform with
`spacing` in mm.
Definitions: `compute_hausdorff_distance` = max of both directed maxima, or with `percentile`
the max of the two directed percentiles; MASD = `compute_average_surface_distance(
symmetric=False)`, the directed mean from the `y_pred` boundary to `y` only; ASSD = the same
with `symmetric=True`, the pooled mean; NSD = `compute_surface_dice` (point counts; thresholds
in mm when spacing is given); DSC = `compute_dice`.
Arguments: `y_pred` = b, `y` = a, as (batch, channel, *spatial) tensors, one channel, so
`include_background=True`; spacing as a list of floats.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter


class MONAI(PythonAdapter):
    name = "monai"
    label = "MONAI"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "ASSD", "NSD", "DSC")
    module = "monai"
    distribution = "monai"
    install_hint = "pip install monai"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import torch
        from monai.metrics import (
            compute_average_surface_distance,
            compute_dice,
            compute_hausdorff_distance,
            compute_surface_dice,
        )

        y = torch.from_numpy(a[np.newaxis, np.newaxis].astype(np.float32))
        y_pred = torch.from_numpy(b[np.newaxis, np.newaxis].astype(np.float32))
        voxel = list(spacing)
        calls = {
            "HD": lambda: compute_hausdorff_distance(
                y_pred, y, include_background=True, spacing=voxel
            ),
            "HD95": lambda: compute_hausdorff_distance(
                y_pred, y, include_background=True, percentile=percentile, spacing=voxel
            ),
            "MASD": lambda: compute_average_surface_distance(
                y_pred, y, include_background=True, symmetric=False, spacing=voxel
            ),
            "ASSD": lambda: compute_average_surface_distance(
                y_pred, y, include_background=True, symmetric=True, spacing=voxel
            ),
            "NSD": lambda: compute_surface_dice(
                y_pred, y, class_thresholds=[tau], include_background=True, spacing=voxel
            ),
            "DSC": lambda: compute_dice(y_pred, y, include_background=True),
        }
        return {metric: float(calls[metric]().item()) for metric in metrics}
