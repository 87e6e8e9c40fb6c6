"""MedPy (PyPI `medpy`), `medpy.metric.binary`.

Boundary: binary erosion with a square-connectivity (connectivity=1) structuring element,
subtracted from the mask; distances from scipy's Euclidean distance transform with
`voxelspacing`.
Definitions: `hd` = max of both directed maxima; `hd95` = 95th percentile of the union of both
directed distance sets (fixed at 95); `asd` = mean distance from the `result` boundary to the
`reference` boundary only (directed), which the study reports as MASD.
Arguments: `result` = b (prediction), `reference` = a.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter


class MedPy(PythonAdapter):
    name = "medpy"
    label = "MedPy"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "DSC")
    fixed_percentile = 95
    module = "medpy"
    distribution = "medpy"
    install_hint = "pip install medpy"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from medpy.metric import binary

        calls = {
            "HD": lambda: binary.hd(b, a, voxelspacing=spacing),
            "HD95": lambda: binary.hd95(b, a, voxelspacing=spacing),
            "MASD": lambda: binary.asd(b, a, voxelspacing=spacing),
            "DSC": lambda: binary.dc(b, a),
        }
        return {metric: float(np.float64(calls[metric]())) for metric in metrics}
