"""scikit-image (PyPI `scikit-image`), `skimage.metrics.hausdorff_distance`.

Boundary: none: every foreground voxel of each mask is a point, by its array indices.
Definitions: `hausdorff_distance(image0, image1)` = max of both directed maxima of the
nearest-point distances (a k-d tree), between all foreground voxels.
Arguments: `image0` = a, `image1` = b, bool arrays; the function takes no spacing.
Quirks: distances are in voxel units whatever the voxel size (ignores_spacing): on anisotropic
voxels they are not distances in any physical unit. An interior voxel lies inside the other
mask or is farther from it than a boundary voxel, so the HD equals a boundary-to-foreground HD
on voxel indices. Both masks empty give 0, one empty gives inf. Its `method="modified"`, the
max of the two directed means over all foreground voxels, is no metric of the study. HD only.
"""

from __future__ import annotations

from adapters.base import PythonAdapter


class ScikitImage(PythonAdapter):
    name = "skimage"
    label = "scikit-image"
    metrics = ("HD",)
    ignores_spacing = frozenset({"HD"})
    module = "skimage"
    distribution = "scikit-image"
    install_hint = "pip install scikit-image"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from skimage.metrics import hausdorff_distance

        return {"HD": float(hausdorff_distance(a, b))}
