"""Every tool on 2D masks: what it offers there, and what it does with what it offers.

Each adapter declares the metrics its tool refuses on 2D masks, with the tool's own words
(`Adapter.not_offered_2d`); the rest of its metrics are offered in 2D (`metrics_2d`). These
tests call every tool on two offset discs through `adapters.invoke`, as the study calls it, and
fail when a tool starts or stops computing a metric in 2D, when an offered value leaves the
neighbourhood of the exact answer, or when torchmetrics' indexing fault changes. The pairs are
at most 48 x 48 pixels, so each call takes milliseconds once its worker runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_adapters import require

from adapters import REGISTRY, invoke
from reference.analytic import ball_mask
from vocabulary import DEFAULT_TAU

RADIUS_MM = 8.0
SHIFT_MM = 3.0
"""Two discs of radius 8 mm whose centres lie 3 mm apart along axis 0: the exact HD is 3 mm."""


def offset_discs(
    shape=(32, 32), spacing=(1.0, 1.0), centre=(15.5, 15.5), shift=(SHIFT_MM, 0.0), radius=RADIUS_MM
) -> tuple[np.ndarray, np.ndarray]:
    """Disc a around `centre` (mm), disc b the same moved by `shift` (mm): a whole number of
    pixels, so b is a moved copy of a."""
    moved = tuple(c + s for c, s in zip(centre, shift, strict=True))
    return ball_mask(shape, spacing, radius, centre), ball_mask(shape, spacing, radius, moved)


def lens_dsc(radius: float, distance: float) -> float:
    """DSC of two discs of one radius whose centres lie `distance` apart: their lens's area
    over one disc's."""
    lens = 2 * radius**2 * math.acos(distance / (2 * radius)) - distance / 2 * math.sqrt(
        4 * radius**2 - distance**2
    )
    return lens / (math.pi * radius**2)


EXACT_DSC = lens_dsc(RADIUS_MM, SHIFT_MM)  # 0.7627; the 32 x 32 grid gives 0.7692

LOOSE_BOUNDS = {
    "HD": (SHIFT_MM - 0.5, SHIFT_MM + 0.5),
    # A percentile or a mean of distances lies between 0 and the HD; the all-voxel means
    # (SimpleITK, pymia, EvaluateSegmentation) and Anima's flawed ASSD lie near 0.
    "HD95": (0.0, SHIFT_MM + 0.5),
    "MASD": (0.0, SHIFT_MM + 0.5),
    "ASSD": (0.0, SHIFT_MM + 0.5),
    "NSD": (0.0, 1.0),
    "BIoU": (0.0, 1.0),
    "DSC": (EXACT_DSC - 0.02, EXACT_DSC + 0.02),
}
"""Where each offered metric of the discs at 1 mm must lie: near the exact answer where one
metric has one answer (HD, DSC), in its range where the tools' definitions differ."""


def test_each_tool_declares_its_2d_offer_as_measured():
    for adapter in REGISTRY.values():
        assert set(adapter.not_offered_2d) <= set(adapter.metrics), adapter.name
        assert all(adapter.not_offered_2d.values()), adapter.name
        assert set(adapter.metrics_2d) | set(adapter.not_offered_2d) == set(adapter.metrics)
        # A metric that fails on 3D masks is offered for 2D ones (torchmetrics' HD).
        assert set(adapter.fails_on_3d) <= set(adapter.metrics_2d), adapter.name
    refused = {name: set(tool.not_offered_2d) for name, tool in REGISTRY.items()}
    assert {name: metrics for name, metrics in refused.items() if metrics} == {
        "mikan": set(REGISTRY["mikan"].metrics),
        "segauge": {"HD", "HD95", "MASD", "ASSD", "NSD"},
    }


@pytest.mark.parametrize("name", list(REGISTRY))
def test_offered_metrics_near_the_exact_answer_the_others_refused_in_the_tools_words(name):
    adapter = require(name)
    a, b = offset_discs()
    outcome = invoke(adapter, a, b, (1.0, 1.0))
    assert set(outcome.values) == set(adapter.metrics_2d), (outcome.error, outcome.failed)
    for metric, value in outcome.values.items():
        low, high = LOOSE_BOUNDS[metric]
        assert math.isfinite(value) and low <= value <= high, (metric, value)
    for metric, words in adapter.not_offered_2d.items():
        assert words in (outcome.error_of(metric) or ""), (metric, outcome.error_of(metric))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_hd_on_anisotropic_pixels_is_in_mm_unless_the_tool_ignores_the_spacing(name):
    """Pixels of 0.5 x 1.5 mm on a square 48 x 48 grid (square, so torchmetrics computes):
    3 mm, or 6, the shift in pixels, where the tool ignores the spacing (as in 3D)."""
    adapter = require(name)
    if "HD" not in adapter.metrics_2d:
        pytest.skip(f"{name} offers no HD in 2D")
    spacing = (0.5, 1.5)
    a, b = offset_discs((48, 48), spacing, centre=(10.0, 35.0))
    outcome = invoke(adapter, a, b, spacing, metrics=("HD",))
    expected = SHIFT_MM / spacing[0] if "HD" in adapter.ignores_spacing else SHIFT_MM
    assert outcome.values.get("HD") == pytest.approx(expected, abs=2e-6), outcome.error


def test_miseval_readme_hd_measures_no_distance_between_the_masks():
    """Why the adapter calls `calc_AverageHausdorffDistance` in 2D as in 3D: the README's
    "HD", `calc_SimpleHausdorffDistance`, takes each array row as a point."""
    require("miseval")
    import miseval

    for shift, readme_hd in (((SHIFT_MM, 0.0), 0.0), ((0.0, SHIFT_MM), math.sqrt(6))):
        a, b = offset_discs(shift=shift)
        truth, pred = a.astype(np.uint8), b.astype(np.uint8)
        assert miseval.evaluate(truth, pred, metric="HD") == pytest.approx(readme_hd)
        assert invoke("miseval", a, b, (1.0, 1.0), metrics=("HD",)).values["HD"] == SHIFT_MM


def test_pymia_2d_is_a_slab_one_voxel_thick():
    """pymia's HD95 and NSD of 2D masks are DeepMind's of the masks as 1 mm thick slabs, whose
    flat faces count as surface; DeepMind's own 2D values differ."""
    require("pymia")
    require("deepmind")
    import surface_distance

    a, b = offset_discs()
    pymia = invoke("pymia", a, b, (1.0, 1.0), metrics=("HD", "HD95", "NSD")).values
    slab = surface_distance.compute_surface_distances(a[..., None], b[..., None], (1.0, 1.0, 1.0))
    assert pymia == pytest.approx(
        {
            "HD": surface_distance.compute_robust_hausdorff(slab, 100),
            "HD95": surface_distance.compute_robust_hausdorff(slab, 95),
            "NSD": surface_distance.compute_surface_dice_at_tolerance(slab, DEFAULT_TAU),
        }
    )
    flat = invoke("deepmind", a, b, (1.0, 1.0), metrics=("HD95", "NSD")).values
    assert pymia["HD95"] == 2.0 and flat["HD95"] == SHIFT_MM
    assert pymia["NSD"] > flat["NSD"] + 0.3


def small_discs(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Discs of radius 5 pixels 3 pixels apart along axis 0, near the image's first corner:
    the exact HD is 3 whatever the image's width and height."""
    return offset_discs(shape, centre=(6.0, 6.0), radius=5.0)


def dsc(a: np.ndarray, b: np.ndarray) -> float:
    """The pair's DSC, counted: torchmetrics' DSC is right on any image."""
    return 2 * np.count_nonzero(a & b) / (np.count_nonzero(a) + np.count_nonzero(b))


def torchmetrics_as_documented(a: np.ndarray, b: np.ndarray) -> float:
    """torchmetrics' `hausdorff_distance` called directly, on (1, H, W) index tensors."""
    import torch
    from torchmetrics.functional.segmentation import hausdorff_distance

    preds, target = (torch.from_numpy(m[np.newaxis].astype(np.int64)) for m in (b, a))
    return float(
        hausdorff_distance(preds, target, num_classes=2, spacing=[1.0, 1.0], input_format="index")
    )


@pytest.mark.parametrize(
    ("shape", "torchmetrics_hd"),
    [((16, 16), SHIFT_MM), ((16, 24), math.sqrt(85))],
    ids=["square", "wider-than-high"],
)
def test_torchmetrics_2d_hd_right_on_a_square_image_wrong_on_a_wide_one(shape, torchmetrics_hd):
    """On a wider than high image its distance transform writes each distance back at row x
    height + column, on the wrong pixel: sqrt(85) = 9.22 instead of 3, without a warning."""
    require("torchmetrics")
    a, b = small_discs(shape)
    outcome = invoke("torchmetrics", a, b, (1.0, 1.0))
    assert outcome.error is None and not outcome.failed and not outcome.warnings
    assert outcome.values["HD"] == pytest.approx(torchmetrics_hd, rel=1e-6)
    assert outcome.values["HD"] == pytest.approx(torchmetrics_as_documented(a, b))
    is_square = shape[0] == shape[1]
    assert (abs(outcome.values["HD"] - SHIFT_MM) < 1e-6) == is_square
    assert outcome.values["DSC"] == pytest.approx(dsc(a, b))


def test_torchmetrics_2d_hd_raises_index_error_on_a_higher_than_wide_image():
    """The same write-back overruns the padded image (26 x 18 = 468 pixels); DSC survives."""
    require("torchmetrics")
    a, b = small_discs((24, 16))
    outcome = invoke("torchmetrics", a, b, (1.0, 1.0))
    said = "IndexError: index 468 is out of bounds for dimension 0 with size 468"
    assert outcome.failed == {"HD": said}
    with pytest.raises(IndexError, match=said.removeprefix("IndexError: ")):
        torchmetrics_as_documented(a, b)
    assert outcome.values["DSC"] == pytest.approx(dsc(a, b))
