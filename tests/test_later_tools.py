"""The tools since the paper: each quirk docs/tools.md states, shown on masks with known answers.

Where the tool is called directly here, it is called as its own documentation shows; the
adapter must agree with that call, or differ from a user's mistaken call in the way the docs say.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adapters import UNEVEN_SPACING, require, shifted_boxes, uneven_pair

from adapters import CallSettings, invoke
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


SEGAUGE_PAIRS = {
    "uneven boxes": (*uneven_pair(), UNEVEN_SPACING),
    "offset balls 1 mm": (*offset_ball_masks((1.0,) * 3, offset=(0.0, 0.0, 3.0)), (1.0,) * 3),
    "offset balls 0.5x0.5x2": (
        *offset_ball_masks((0.5, 0.5, 2.0), offset=(0.0, 0.0, 3.0)),
        (0.5, 0.5, 2.0),
    ),
}


@pytest.mark.parametrize("pair", list(SEGAUGE_PAIRS))
def test_segauge_adapter_equals_its_readme_call(pair):
    """`segauge.surface_metrics(pred, gt, spacing)` as its README's FAQ shows, with the
    study's tau as `nsd_tolerance` (its default is 1 mm), and `segauge.dice(pred, gt)`."""
    require("segauge")
    import segauge

    a, b, spacing = SEGAUGE_PAIRS[pair]
    tau = 1.5
    outcome = invoke("segauge", a, b, spacing, settings=CallSettings(tau=tau))
    direct = segauge.surface_metrics(b, a, spacing, nsd_tolerance=tau)
    names = {"HD": "hd", "HD95": "hd95", "MASD": "masd", "ASSD": "assd", "NSD": "nsd"}
    expected = {key: direct[name] for key, name in names.items()} | {"DSC": segauge.dice(b, a)}
    assert outcome.error is None and not outcome.failed, outcome
    assert outcome.values == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_segauge_hd95_is_one_percentile_of_both_directions_pooled():
    """Its HD95 reads the area-weighted distances of both surfaces as one set (each at the
    middle of its weight, interpolated), not the larger of two directed percentiles."""
    require("segauge")
    import segauge

    a, b = uneven_pair()
    found = segauge.compute_surface_distances(b, a, UNEVEN_SPACING)
    values, weights = found.both
    order = np.argsort(values)
    middles = np.cumsum(weights[order]) - weights[order] / 2
    pooled = np.interp(0.95, middles / weights.sum(), values[order])
    outcome = invoke("segauge", a, b, UNEVEN_SPACING, metrics=("HD95", "NSD"))
    assert outcome.values["HD95"] == pytest.approx(pooled, abs=1e-12)
    within = sum(w[d <= 2.0].sum() for d, w in ((found.d_pg, found.w_pg), (found.d_gp, found.w_gp)))
    assert outcome.values["NSD"] == pytest.approx(within / weights.sum(), abs=1e-12)


@pytest.mark.parametrize("empty", ["a", "b", "both"])
def test_segauge_answers_empty_masks_by_its_own_convention(empty):
    """Not an error: one empty mask gives infinite distances and NSD 0, both empty give 0
    and NSD 1 (and its DSC of two empty masks is 1)."""
    require("segauge")
    a, b = shifted_boxes(2)
    none = np.zeros_like(a)
    pair = {"a": (none, b), "b": (a, none), "both": (none, none)}[empty]
    outcome = invoke("segauge", *pair, (1.0, 1.0, 1.0))
    assert outcome.error is None and not outcome.failed, outcome
    if empty == "both":
        expected = {"HD": 0, "HD95": 0, "MASD": 0, "ASSD": 0, "NSD": 1, "DSC": 1}
    else:
        inf = float("inf")
        expected = {"HD": inf, "HD95": inf, "MASD": inf, "ASSD": inf, "NSD": 0, "DSC": 0}
    assert outcome.values == expected


def test_segauge_refuses_2d_distances_in_its_own_words_and_dsc_survives():
    require("segauge")
    a, b = shifted_boxes(2)
    outcome = invoke("segauge", a[:, :, 8], b[:, :, 8], (1.5, 1.0))
    assert outcome.values == {"DSC": pytest.approx(0.75)}
    assert set(outcome.failed) == {"HD", "HD95", "MASD", "ASSD", "NSD"}
    assert all("ValueError" in said and "2D" in said for said in outcome.failed.values())
