"""torchmetrics (PyPI `torchmetrics`), `torchmetrics.functional.segmentation`.

Boundary: the mask XOR its binary erosion (`mask_edges` without spacing, a full 3x3(x3)
element), on masks padded by one voxel; distances from a distance transform of the other
boundary's complement, in mm with `spacing`.
Definitions: `hausdorff_distance` = max of both directed maxima; `dice_score` = DSC.
Arguments: `preds` = b, `target` = a, in the tool's "index" format (batch, *spatial) with
values 0 and 1 and `num_classes=2`, so the foreground is class 1; `include_background=False`
for both (the default of `hausdorff_distance`; `dice_score` defaults to True, which would
average in the background's Dice); `spacing` as a list of floats in array axis order.
Quirks: the distance transform takes 2D tensors only, so on 3D masks `hausdorff_distance`
raises "ValueError: Expected argument `x` to be of rank 2 but got rank `3`", although its
docstring takes (N, C, ...) input; its HD rows in this study are that error. In 2D its default
"pytorch" engine compares every foreground pixel with every background pixel (memory grows
with the square of the pixel count) and writes the result back at row * height + column:
right on square images only; an image higher than wide (after the one-pixel pad) raises
IndexError, one wider than high gives wrong distances without a word (10.92 instead of 3 mm on
two shifted squares: benchmarks/tools_on_balls.py). The tool has no HD95, mean distance or
NSD. One empty mask gives HD inf (checked before the distance transform, so in 3D too), two
empty masks a RuntimeError from `max()`.
2D: HD and DSC offered, the same calls: a 2D pair goes in as (1, H, W) index tensors, a batch
of one in its documented "index" format (its docstring's example is a (N, C, 16, 16) one-hot
batch). Measured on two discs of radius 5 pixels 3 pixels apart (tests/test_adapters_2d.py):
HD 3.0 on a 16 x 16 image, 9.22 on a 16 x 24 one, and on a 24 x 16 one "IndexError: index 468
is out of bounds for dimension 0 with size 468" (26 x 18, the padded image); DSC is right on
all three. Memory on a 512 x 512 slice: benchmarks/torchmetrics_2d_memory.py.
"""

from __future__ import annotations

import numpy as np

from adapters.base import PythonAdapter


class TorchMetrics(PythonAdapter):
    name = "torchmetrics"
    label = "torchmetrics"
    metrics = ("HD", "DSC")
    fails_on_3d = {"HD": "Expected argument `x` to be of rank 2 but got rank `3`"}
    module = "torchmetrics"
    distribution = "torchmetrics"
    install_hint = "pip install torchmetrics"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import torch
        from torchmetrics.functional.segmentation import dice_score, hausdorff_distance

        target = torch.from_numpy(a[np.newaxis].astype(np.int64))
        preds = torch.from_numpy(b[np.newaxis].astype(np.int64))
        options = {"num_classes": 2, "include_background": False, "input_format": "index"}
        calls = {
            "HD": lambda: hausdorff_distance(preds, target, spacing=list(spacing), **options),
            "DSC": lambda: dice_score(preds, target, **options),
        }
        # Separate calls: HD fails on 3D masks, DSC does not.
        return self.compute_each({metric: calls[metric] for metric in metrics})
