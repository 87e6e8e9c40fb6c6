"""The authors' MeshMetrics (PyPI `pymeshmetrics`, import `meshmetrics`): a cross-check.

Not one of the eleven tools: it is the paper's reference as its authors ship it, kept apart to
cross-check this project's own reference. It meshes both masks (discrete marching cubes /
flying edges), measures exact point-to-mesh distances from element centres weighted by element
size, and computes BIoU from distance fields. Its algorithm has changed between versions.
Arguments: `DistanceMetrics().set_input(ref=a, pred=b, spacing)` with spacing in array order.
"""

from __future__ import annotations

from adapters.base import PythonAdapter


class MeshMetrics(PythonAdapter):
    name = "meshmetrics"
    label = "MeshMetrics (pymeshmetrics)"
    role = "cross-check"
    metrics = ("HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC")
    module = "meshmetrics"
    distribution = "pymeshmetrics"
    install_hint = "pip install pymeshmetrics"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from meshmetrics import DistanceMetrics

        tool = DistanceMetrics(verbose=False)
        tool.set_input(ref=a, pred=b, spacing=spacing)
        calls = {
            "HD": lambda: tool.hd(),
            "HD95": lambda: tool.hd(percentile),
            "MASD": tool.masd,
            "ASSD": tool.assd,
            "NSD": lambda: tool.nsd(tau),
            "BIoU": lambda: tool.biou(tau),
            "DSC": tool.dsc,
        }
        return {metric: float(calls[metric]()) for metric in metrics}
