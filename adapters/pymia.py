"""pymia (PyPI `pymia`), `pymia.evaluation.evaluator.SegmentationEvaluator`.

HD, HDp and NSD (`HausdorffDistance`, `SurfaceDiceOverlap`) use code copied from DeepMind's
surface-distance: half-voxel-shifted surfels weighted by area. MASD is `AverageDistance`:
SimpleITK's average Hausdorff distance over all foreground voxels (no boundary), the mean of
the two directed means.
Arguments: `evaluate(prediction=b, reference=a)` on SimpleITK images, from which the evaluator
takes the spacing (it falls back to 1 mm for numpy input). Needs numpy < 2.4 (`np.in1d`).
2D: the same call on 2D images, every metric offered. pymia's own 2D path (its distance
metrics' `_calculate`) makes each 2D mask a 3D slab one voxel thick, the added axis 1 mm, so
the slab's two flat faces are surface too and weigh every pixel of the masks in: HD95 and NSD
are not the 2D ones. On two discs of radius 8 mm 3 mm apart at 1 mm: HD 3.0, as every 2D
tool, but HD95 2.0 and NSD 0.970 where DeepMind's 2D gives 3.0 and 0.606; DeepMind on the
same slabs gives pymia's values exactly (tests/test_adapters_2d.py). MASD is SimpleITK's.
"""

from __future__ import annotations

from adapters.base import PythonAdapter
from maskio import to_image


class Pymia(PythonAdapter):
    name = "pymia"
    label = "pymia"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "NSD", "DSC")
    module = "pymia"
    distribution = "pymia"
    install_hint = "pip install pymia"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from pymia.evaluation import evaluator as pymia_evaluator
        from pymia.evaluation import metric as pymia_metric

        factories = {
            "HD": lambda: pymia_metric.HausdorffDistance(percentile=100, metric="HD"),
            "HD95": lambda: pymia_metric.HausdorffDistance(percentile=percentile, metric="HD95"),
            "MASD": lambda: pymia_metric.AverageDistance(metric="MASD"),
            "NSD": lambda: pymia_metric.SurfaceDiceOverlap(tolerance=tau, metric="NSD"),
            "DSC": lambda: pymia_metric.DiceCoefficient(metric="DSC"),
        }
        evaluator = pymia_evaluator.SegmentationEvaluator(
            [factories[metric]() for metric in metrics], {1: "foreground"}
        )
        evaluator.evaluate(to_image(b, spacing), to_image(a, spacing), "pair")
        return {result.metric: float(result.value) for result in evaluator.results}
