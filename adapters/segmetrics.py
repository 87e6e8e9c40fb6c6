"""seg-metrics (PyPI `seg-metrics`), `seg_metrics.seg_metrics.write_metrics`.

Boundary: SimpleITK `LabelContour` with `fullyConnected=True` (full-connectivity erosion);
distances from `SignedMaurerDistanceMap` in mm.
Definitions: `hd` = max over both directed sets; `hd95` = 95th percentile of the union of both
directed sets (fixed at 95); `msd` = mean of that union, the pooled mean, which the study
reports as ASSD; `dice` = DSC.
Arguments: `gdth_img` = a, `pred_img` = b as numpy arrays, `spacing` in array axis order (the
tool reverses it for SimpleITK). Version 1.2.8 returns 0.0 on empty masks and logs a warning.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter

_NAMES = {"HD": "hd", "HD95": "hd95", "ASSD": "msd", "DSC": "dice"}


class SegMetrics(PythonAdapter):
    name = "segmetrics"
    label = "seg-metrics"
    in_paper = True
    metrics = ("HD", "HD95", "ASSD", "DSC")
    fixed_percentile = 95
    module = "seg_metrics"
    distribution = "seg-metrics"
    install_hint = "pip install seg-metrics"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from seg_metrics import seg_metrics

        results = seg_metrics.write_metrics(
            labels=[1],
            gdth_img=a.astype(np.uint8),
            pred_img=b.astype(np.uint8),
            spacing=list(spacing),
            metrics=[_NAMES[metric] for metric in metrics],
            verbose=False,
        )
        per_label = results[0]
        return {metric: float(per_label[_NAMES[metric]][0]) for metric in metrics}
