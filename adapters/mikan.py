"""mikan-rs (PyPI `mikan-rs`, import `mikan`), a Rust library with Python bindings.

Boundary: the mask less its erosion with a face-connected element (as MedPy); distances from
a Euclidean distance transform in mm, computed in parallel threads.
Definitions: `hd` = max of both directed maxima; `hd95` = the larger of the two directed 95th
percentiles (fixed at 95; MedPy, which the tool says it agrees with, takes the percentile of
the union); `masd` = mean of the two directed means (MASD); `assd` = mean of the union of both
directed sets (ASSD); `dice` = DSC.
Arguments: as its README shows, `mikan.Evaluator(gt, pred)` on SimpleITK images, gt = a and
pred = b, made by `maskio.to_image` (spacing in the image header), then
`.labels(1).metrics([...])`.
Quirks: `mikan.ArrayEvaluator(gt, pred, spacing)` wants the spacing in SimpleITK's (x, y, z)
order for an array in numpy's (z, y, x) order, as `Evaluator` passes it; a user who gives
numpy arrays with the spacing in array order gets the voxel sizes on the wrong axes (on two
offset balls at (0.5, 0.5, 2) mm HD 4.74 instead of 4.24 mm, ASSD 0.89 instead of 1.88 mm:
benchmarks/tools_on_balls.py). One empty mask raises `pyo3_runtime.PanicException` (a
BaseException, from a panic in the Rust code); two empty masks give 0 for every metric.
2D: not offered. Its README shows NIfTI volumes and says nothing of 2D, and its Rust function
takes 3D arrays: a 2D image, through `Evaluator` as through `ArrayEvaluator`, raises "TypeError:
argument 'gt_arr': 'ndarray' object cannot be converted to 'PyArray<T, D>'" before any metric,
DSC included (`not_offered_2d`). Adding an axis of one voxel would be the study's workaround,
not the tool's 2D path.
"""

from __future__ import annotations

from adapters.base import PythonAdapter

_REFUSES_2D = "argument 'gt_arr': 'ndarray' object cannot be converted to 'PyArray<T, D>'"
"""What mikan-rs 0.1.4 raises (a TypeError) for any 2D image, whatever the metric."""

_NAMES = {"HD": "hd", "HD95": "hd95", "MASD": "masd", "ASSD": "assd", "DSC": "dice"}


class Mikan(PythonAdapter):
    name = "mikan"
    label = "mikan-rs"
    metrics = ("HD", "HD95", "MASD", "ASSD", "DSC")
    not_offered_2d = dict.fromkeys(metrics, _REFUSES_2D)
    fixed_percentile = 95
    module = "mikan"
    distribution = "mikan-rs"
    install_hint = "pip install mikan-rs"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import mikan

        from maskio import to_image

        evaluator = mikan.Evaluator(to_image(a, spacing), to_image(b, spacing))
        values = evaluator.labels(1).metrics([_NAMES[metric] for metric in metrics])
        return dict(zip(metrics, map(float, values), strict=True))
