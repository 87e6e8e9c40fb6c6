"""MISeval (PyPI `miseval`).

Boundary: a voxel is on the boundary when one of its 4 (2D) / 6 (3D) face neighbours, found by
`ndimage.shift`, is background (square connectivity).
Definitions: `calc_SimpleHausdorffDistance` works in 2D only, so the study's HD is
`calc_AverageHausdorffDistance`, which despite its name returns the maximum (HD100) of the
boundary-to-mask distances. It takes no spacing: distances are in voxels whatever the voxel
size (flagged by `ignores_spacing`). DSC is `calc_DSC` (`calc_DSC_Enhanced`).
Arguments: `truth` = a, `pred` = b.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter


class MISeval(PythonAdapter):
    name = "miseval"
    label = "MISeval"
    in_paper = True
    metrics = ("HD", "DSC")
    ignores_spacing = frozenset({"HD"})
    module = "miseval"
    distribution = "miseval"
    install_hint = "pip install miseval"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import miseval

        truth, pred = a.astype(np.uint8), b.astype(np.uint8)
        calls = {
            "HD": lambda: miseval.calc_AverageHausdorffDistance(truth, pred, c=1),
            "DSC": lambda: miseval.calc_DSC(truth, pred, c=1),
        }
        return {metric: float(calls[metric]()) for metric in metrics}
