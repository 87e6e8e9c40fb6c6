"""SimpleITK (PyPI `SimpleITK`), `HausdorffDistanceImageFilter` on the masks themselves.

Boundary: none: distances are between all foreground voxels (ITK's directed Hausdorff filter
uses a distance map of the other mask over every foreground voxel), in mm from the image
spacing.
Definitions: HD = `GetHausdorffDistance()` (max of both directed maxima over all voxels);
MASD = `GetAverageHausdorffDistance()` (mean of the two directed means over all voxels);
DSC = `LabelOverlapMeasuresImageFilter.GetDiceCoefficient()`.
Arguments: image1 = a, image2 = b, as images in the project's axis convention (`maskio`).
"""

from __future__ import annotations

from adapters.base import PythonAdapter
from maskio import to_image


class SimpleITK(PythonAdapter):
    name = "simpleitk"
    label = "SimpleITK"
    in_paper = True
    metrics = ("HD", "MASD", "DSC")
    module = "SimpleITK"
    distribution = "SimpleITK"
    install_hint = "pip install SimpleITK"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import SimpleITK as sitk

        image_a, image_b = to_image(a, spacing), to_image(b, spacing)
        values: dict[str, float] = {}
        if {"HD", "MASD"} & set(metrics):
            distances = sitk.HausdorffDistanceImageFilter()
            distances.Execute(image_a, image_b)
            if "HD" in metrics:
                values["HD"] = float(distances.GetHausdorffDistance())
            if "MASD" in metrics:
                values["MASD"] = float(distances.GetAverageHausdorffDistance())
        if "DSC" in metrics:
            overlap = sitk.LabelOverlapMeasuresImageFilter()
            overlap.Execute(image_a, image_b)
            values["DSC"] = float(overlap.GetDiceCoefficient())
        return values
