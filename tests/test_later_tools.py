"""The tools since the paper: each quirk docs/tools.md states, shown on masks with known answers.

Where the tool is called directly here, it is called as its own documentation shows; the
adapter must agree with that call, or differ from a user's mistaken call in the way the docs say.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adapters import require, shifted_boxes

from adapters import invoke
from reference.analytic import offset_ball_masks


def wide_squares() -> tuple[np.ndarray, np.ndarray]:
    """Two 8-pixel squares on a 16 x 20 image, b shifted by 2 pixels along axis 1 (1.5 mm
    each): HD = 3 mm."""
    a, b = shifted_boxes(2)
    return a[:, :, 8].T.copy(), b[:, :, 8].T.copy()


def test_torchmetrics_hd_fails_on_3d_in_its_own_words_and_dsc_survives():
    require("torchmetrics")
    import torch
    from torchmetrics.functional.segmentation import hausdorff_distance

    a, b = shifted_boxes(2)
    outcome = invoke("torchmetrics", a, b, (1.5, 1.0, 1.0), metrics=("HD", "DSC"))
    with pytest.raises(ValueError) as direct:
        tensors = [torch.from_numpy(m[np.newaxis].astype(np.int64)) for m in (b, a)]
        hausdorff_distance(*tensors, num_classes=2, spacing=[1.5, 1.0, 1.0], input_format="index")
    assert outcome.failed == {"HD": f"ValueError: {direct.value}"}
    assert outcome.error is None and outcome.values == {"DSC": pytest.approx(0.75)}


def test_torchmetrics_2d_hd_is_right_on_square_images_only():
    """Its 2D distance transform indexes the flattened image by the height: on a wider than
    high image the distances land on the wrong pixels, and no error says so."""
    require("torchmetrics")
    a, b = wide_squares()
    spacing = (1.0, 1.5)  # 1.5 mm along axis 1, the shift's
    square = invoke("torchmetrics", a[:, 2:18], b[:, 2:18], spacing, metrics=("HD",))
    wide = invoke("torchmetrics", a, b, spacing, metrics=("HD",))
    assert square.values["HD"] == pytest.approx(3.0)
    assert wide.error is None and wide.values["HD"] > 3.0 + 1.0


def test_mikan_spacing_order_trap():
    """`ArrayEvaluator` with the spacing in numpy's order puts each voxel size on the wrong
    axis; reversed, as `Evaluator` passes it, it agrees with the adapter (docs/tools.md)."""
    require("mikan")
    import mikan

    spacing = (0.5, 0.5, 2.0)
    a, b = offset_ball_masks(spacing, radii=(8.0, 5.0), offset=(1.0, 2.0, 3.0))
    adapter = invoke("mikan", a, b, spacing, metrics=("HD", "ASSD")).values

    def array_call(order):
        evaluator = mikan.ArrayEvaluator(a.astype(np.uint8), b.astype(np.uint8), order)
        return dict(zip(("HD", "ASSD"), evaluator.labels(1).metrics(["hd", "assd"]), strict=True))

    assert array_call(spacing[::-1]) == pytest.approx(adapter, abs=1e-9)
    assert array_call(spacing)["HD"] > adapter["HD"] + 1.0


@pytest.mark.parametrize("empty", ["a", "b"])
def test_mikan_one_empty_mask_panics_into_an_error_row(empty):
    require("mikan")
    a, b = shifted_boxes(2)
    pair = {"a": (np.zeros_like(a), b), "b": (a, np.zeros_like(b))}[empty]
    outcome = invoke("mikan", *pair, (1.0, 1.0, 1.0), metrics=("HD",))
    assert outcome.error is not None and "PanicException" in outcome.error, outcome


def test_grandchallenge_mean_contour_distance_measures_to_the_foreground():
    """b inside a: every contour voxel of b lies in a, so b's directed mean is 0 and the
    'mean contour distance' is a's: from its contour voxels to b's foreground."""
    require("grandchallenge")
    from scipy import ndimage

    a = np.zeros((24, 24, 24), bool)
    a[4:20, 4:20, 4:20] = True
    b = np.zeros_like(a)
    b[8:16, 8:16, 8:16] = True
    values = invoke("grandchallenge", a, b, (1.0, 1.0, 1.0), metrics=("MASD", "HD")).values
    contour_a = a & ~ndimage.binary_erosion(a, np.ones((3, 3, 3), bool))
    assert values["MASD"] == pytest.approx(ndimage.distance_transform_edt(~b)[contour_a].mean())
    assert values["HD"] == pytest.approx(np.sqrt(3) * 4, abs=1e-9)


def test_skimage_counts_voxels_whatever_the_spacing():
    require("skimage")
    a, b = shifted_boxes(3)
    values = {
        s: invoke("skimage", a, b, (s, s, 2 * s), metrics=("HD",)).values["HD"] for s in (0.5, 3.0)
    }
    assert values == {0.5: 3.0, 3.0: 3.0}
