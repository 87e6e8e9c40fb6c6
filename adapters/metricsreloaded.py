"""Metrics Reloaded (not on PyPI; source at github.com/Project-MONAI/MetricsReloaded).

`MetricsReloaded.metrics.pairwise_measures.BinaryPairwiseMeasures(pred, ref, measures,
pixdim, dict_args)`, values from `to_dict_meas()`.
Boundary: erosion with a square-connectivity element (connectivity_type=1) and subtraction
(`MorphologyOps.border_map`); distances from scipy's distance transform with `pixdim`.
Definitions: HD = max of both directed maxima; HDp = max of the two directed percentiles
(`hd_perc`); MASD = mean of the two directed means; ASSD = pooled mean over both boundary
point sets; NSD = count of boundary points within tau over all boundary points.
BIoU ignores the voxel size: `boundary_iou` uses an unscaled distance transform, so its
`boundary_dist` is in voxels; the study passed tau unchanged, and so does this adapter.
Arguments: `pred` = b, `ref` = a. Masks are passed as uint8: the tool computes `1 - ref`,
which numpy refuses for bool arrays.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter

_MEASURES = {
    "HD": "hd",
    "HD95": "hd_perc",
    "MASD": "masd",
    "ASSD": "assd",
    "NSD": "nsd",
    "BIoU": "boundary_iou",
    "DSC": "dsc",
}


class MetricsReloaded(PythonAdapter):
    name = "metricsreloaded"
    label = "Metrics Reloaded"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC")
    ignores_spacing = frozenset({"BIoU"})
    module = "MetricsReloaded"
    distribution = "MetricsReloaded"
    install_hint = "`make tools` installs it from github.com/Project-MONAI/MetricsReloaded"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from MetricsReloaded.metrics.pairwise_measures import BinaryPairwiseMeasures

        measures = [_MEASURES[metric] for metric in metrics]
        tool = BinaryPairwiseMeasures(
            b.astype(np.uint8),
            a.astype(np.uint8),
            measures=measures,
            pixdim=list(spacing),
            dict_args={"hd_perc": percentile, "nsd": tau, "boundary_dist": tau},
        )
        results = tool.to_dict_meas()
        return {metric: float(results[_MEASURES[metric]]) for metric in metrics}
