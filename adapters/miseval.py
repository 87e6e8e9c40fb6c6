"""MISeval (PyPI `miseval`).

Boundary: a voxel is on the boundary when one of its 4 (2D) / 6 (3D) face neighbours, found by
`ndimage.shift`, is background (square connectivity).
Definitions: `calc_SimpleHausdorffDistance` works in 2D only, so the study's HD is
`calc_AverageHausdorffDistance`, which despite its name returns the maximum (HD100) of the
boundary-to-mask distances. It takes no spacing: distances are in voxels whatever the voxel
size (flagged by `ignores_spacing`). DSC is `calc_DSC` (`calc_DSC_Enhanced`).
Arguments: `truth` = a, `pred` = b.
2D: the same calls, HD and DSC offered. The README's table lists "HD" as
`calc_SimpleHausdorffDistance`, but that function hands the two masks to the `hausdorff`
package as point sets of one point per array row (a row's pixel values its coordinates), so
it measures no distance between the masks: on two discs of radius 8 pixels moved 3 pixels
it gives 0.0 for a move along axis 0 and 2.449 (the square root of 6) along axis 1, where
the HD is 3 (tests/test_adapters_2d.py). The README's own guideline recommends AHD for contour
distances, and `calc_AverageHausdorffDistance` has a 2D branch (4 face neighbours): the
adapter calls it in 2D as in 3D, so MISeval's HD is one function in both. It ignores the
spacing in 2D as in 3D.
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
