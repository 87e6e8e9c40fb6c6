"""Every adapter against answers known by hand or by an independent code path.

Parametrized over the registry: a new adapter is covered by adding it there. Tools not
installed here skip with the reason.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage

import adapters
from adapters import REGISTRY, CallSettings, invoke
from vocabulary import METRIC_KEYS

# Anima writes six decimals; everything else is compared at float round-off.
TOLERANCE = 2e-6


def require(name: str):
    adapter = REGISTRY[name]
    reason = adapter.unavailable()
    if reason is not None:
        pytest.skip(f"{name} unavailable: {reason}")
    return adapter


def shifted_boxes(shift: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Two 8-voxel cubes, b shifted by `shift` voxels along axis 0."""
    a = np.zeros((20, 16, 16), dtype=bool)
    a[4:12, 4:12, 4:12] = True
    return a, np.roll(a, shift, axis=0)


def uneven_pair() -> tuple[np.ndarray, np.ndarray]:
    """An asymmetric pair: a box, and a shifted, shortened box with a bump."""
    a = np.zeros((26, 26, 24), dtype=bool)
    a[5:20, 5:20, 5:20] = True
    b = np.zeros_like(a)
    b[7:22, 5:20, 5:18] = True
    b[12:15, 12:15, 18:22] = True
    return a, b


UNEVEN_SPACING = (1.0, 1.0, 2.0)


def directed_distances(x, y, spacing, connectivity=1):
    """Distances in mm from each boundary voxel of x to the boundary of y.

    Boundary = mask minus its erosion (connectivity 1: faces only; 3: full).
    """
    structure = ndimage.generate_binary_structure(x.ndim, connectivity)

    def boundary(mask):
        return mask & ~ndimage.binary_erosion(mask, structure, border_value=0)

    return ndimage.distance_transform_edt(~boundary(y), sampling=spacing)[boundary(x)]


PAPER_LABELS = (
    "Anima",
    "EvaluateSegmentation",
    "Google DeepMind",
    "MedPy",
    "Metrics Reloaded",
    "MISeval",
    "MONAI",
    "Plastimatch",
    "pymia",
    "seg-metrics",
    "SimpleITK",
)
"""The eleven tools of the paper's tables, in their order (docs/study.md): a check of the
registry, which owns the list; the tools added since stand after them."""


def test_registry_names_and_order():
    labels = [REGISTRY[name].label for name in adapters.PAPER_TOOLS]
    assert labels == list(PAPER_LABELS)
    assert adapters.STUDY_TOOLS == adapters.PAPER_TOOLS + adapters.LATER_TOOLS
    assert adapters.CROSS_CHECKS == ("meshmetrics",)
    assert set(REGISTRY) == set(adapters.STUDY_TOOLS) | set(adapters.CROSS_CHECKS)
    assert {adapter.role for adapter in REGISTRY.values()} == {"tool", "cross-check"}
    for name, adapter in REGISTRY.items():
        assert adapter.name == name and adapter.label
        # Any subset of the study's metrics: nothing assumes a tool offers DSC, or HD.
        assert adapter.metrics and set(adapter.metrics) <= set(METRIC_KEYS)
        assert adapter.ignores_spacing <= set(adapter.metrics)
        assert set(adapter.fails_on_3d) <= set(adapter.metrics)
    assert REGISTRY["miseval"].ignores_spacing == {"HD"}
    assert REGISTRY["metricsreloaded"].ignores_spacing == {"BIoU"}


def computable(adapter, metrics, masks: np.ndarray) -> tuple[str, ...]:
    """Of `metrics`, those the tool offers and computes on masks of this many dimensions."""
    failing = adapter.fails_on_3d if masks.ndim == 3 else {}
    return tuple(m for m in metrics if m in adapter.metrics and m not in failing)


def hd_pair(adapter) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    """The uneven pair and its spacing; one (square) slice of it where the tool's HD is 2D
    only."""
    a, b = uneven_pair()
    if "HD" in adapter.fails_on_3d:
        return a[:, :, 10], b[:, :, 10], UNEVEN_SPACING[:2]
    return a, b, UNEVEN_SPACING


@pytest.mark.parametrize("name", list(REGISTRY))
def test_keys_and_finite_values(name):
    adapter = require(name)
    a, b = uneven_pair()
    outcome = invoke(adapter, a, b, UNEVEN_SPACING)
    assert set(outcome.values) == set(computable(adapter, adapter.metrics, a)), outcome.error
    assert all(math.isfinite(value) for value in outcome.values.values()), outcome.values
    # A metric the tool cannot compute on 3D masks fails alone, in the tool's own words.
    assert outcome.failed.keys() == adapter.fails_on_3d.keys()
    for metric, words in adapter.fails_on_3d.items():
        assert words in outcome.failed[metric]
    assert outcome.seconds > 0
    assert adapter.version() not in ("", "not installed")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_whole_voxel_shift_gives_exact_hd_and_dsc(name):
    """Cubes 8 voxels wide, offset by 2 voxels of 1.5 mm: HD = 3 mm, DSC = 6/8 (the 2D
    slice of them where the tool's HD is 2D only): each of the two the tool offers."""
    adapter = require(name)
    a, b = shifted_boxes(2)
    spacing = (1.5, 1.0, 1.0)
    if "HD" in adapter.fails_on_3d:  # a square slice: torchmetrics' 2D HD needs one
        a, b, spacing = a[2:18, :, 8], b[2:18, :, 8], spacing[:2]
    metrics = computable(adapter, ("HD", "DSC"), a)
    if not metrics:
        pytest.skip(f"{name} offers neither HD nor DSC")
    outcome = invoke(adapter, a, b, spacing, metrics=metrics)
    assert outcome.error is None, outcome.error
    expected = {"HD": 2.0 if "HD" in adapter.ignores_spacing else 3.0, "DSC": 0.75}
    assert outcome.values == pytest.approx({m: expected[m] for m in metrics}, abs=TOLERANCE)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_doubling_the_spacing(name):
    """HD doubles with the voxel size, except where the tool ignores the voxel size."""
    adapter = require(name)
    if "HD" not in adapter.metrics:
        pytest.skip(f"{name} offers no HD")
    a, b, spacing = hd_pair(adapter)
    single = invoke(adapter, a, b, spacing, metrics=("HD",))
    double = invoke(adapter, a, b, tuple(2 * s for s in spacing), metrics=("HD",))
    assert single.error is None and double.error is None, (single.error, double.error)
    factor = 1.0 if "HD" in adapter.ignores_spacing else 2.0
    assert double.values["HD"] == pytest.approx(factor * single.values["HD"], rel=1e-5)


def test_miseval_ignores_the_voxel_size():
    require("miseval")
    a, b = shifted_boxes(3)
    values = {
        s: invoke("miseval", a, b, (s, s, s), metrics=("HD",)).values["HD"] for s in (0.5, 1.0, 3.0)
    }
    assert values == {0.5: 3.0, 1.0: 3.0, 3.0: 3.0}


def test_metrics_reloaded_biou_ignores_the_voxel_size():
    require("metricsreloaded")
    a, b = uneven_pair()
    values = [
        invoke("metricsreloaded", a, b, (s, s, s), metrics=("BIoU",)).values["BIoU"]
        for s in (0.5, 2.0)
    ]
    assert values[0] == values[1]


# Fingerprints of how each tool finds the boundary (docs/study.md), each checked against
# scipy's erosion + EDT.


def _fingerprints():
    a, b = uneven_pair()
    d_ab = directed_distances(a, b, UNEVEN_SPACING)
    d_ba = directed_distances(b, a, UNEVEN_SPACING)
    full_ab = directed_distances(a, b, UNEVEN_SPACING, connectivity=3)
    full_ba = directed_distances(b, a, UNEVEN_SPACING, connectivity=3)
    pooled_full = np.concatenate([full_ab, full_ba])
    return [
        ("medpy", "MASD", d_ba.mean()),  # asd: directed, result (b) to reference (a)
        ("monai", "MASD", d_ba.mean()),  # symmetric=False: directed, y_pred (b) to y (a)
        ("anima", "MASD", max(d_ab.mean(), d_ba.mean())),  # max of directed means
        ("metricsreloaded", "MASD", (d_ab.mean() + d_ba.mean()) / 2),
        ("plastimatch", "MASD", (d_ab.mean() + d_ba.mean()) / 2),
        ("metricsreloaded", "ASSD", np.concatenate([d_ab, d_ba]).mean()),
        ("monai", "ASSD", np.concatenate([d_ab, d_ba]).mean()),
        ("segmetrics", "ASSD", pooled_full.mean()),  # fully connected contour
        ("segmetrics", "HD95", np.percentile(pooled_full, 95)),  # percentile of the union
        ("medpy", "HD95", np.percentile(np.concatenate([d_ab, d_ba]), 95)),
        ("metricsreloaded", "HD95", max(np.percentile(d_ab, 95), np.percentile(d_ba, 95))),
        ("monai", "HD95", max(np.percentile(d_ab, 95), np.percentile(d_ba, 95))),
        ("plastimatch", "HD95", (np.percentile(d_ab, 95) + np.percentile(d_ba, 95)) / 2),
        ("mikan", "HD95", max(np.percentile(d_ab, 95), np.percentile(d_ba, 95))),
        ("mikan", "MASD", (d_ab.mean() + d_ba.mean()) / 2),
        ("mikan", "ASSD", np.concatenate([d_ab, d_ba]).mean()),
        ("grandchallenge", "HD95", max(_lower_percentile(d_ab), _lower_percentile(d_ba))),
        ("grandchallenge", "MASD", max(contour_to_mask(a, b).mean(), contour_to_mask(b, a).mean())),
        ("skimage", "HD", max(all_voxels_to_mask(a, b).max(), all_voxels_to_mask(b, a).max())),
    ]


def _lower_percentile(distances: np.ndarray, fraction: float = 0.95) -> float:
    """The sorted distance at index int((n - 1) p): no interpolation."""
    return np.sort(distances)[int((len(distances) - 1) * fraction)]


def contour_to_mask(x, y):
    """Distances in mm from x's full-connectivity contour to y's foreground (not its contour)."""
    contour = x & ~ndimage.binary_erosion(x, np.ones((3,) * x.ndim, bool))
    return ndimage.distance_transform_edt(~y, sampling=UNEVEN_SPACING)[contour]


def all_voxels_to_mask(x, y):
    """Distances in voxel units from every foreground voxel of x to y's foreground."""
    return ndimage.distance_transform_edt(~y)[x]


@pytest.mark.parametrize(
    ("name", "metric", "expected"),
    _fingerprints(),
    ids=lambda item: item if isinstance(item, str) else "",
)
def test_fingerprint(name, metric, expected):
    require(name)
    a, b = uneven_pair()
    outcome = invoke(name, a, b, UNEVEN_SPACING, metrics=(metric,))
    assert outcome.error is None, outcome.error
    assert outcome.values[metric] == pytest.approx(expected, abs=TOLERANCE)


def test_all_voxel_masd_tools_agree():
    """SimpleITK, pymia (AverageDistance) and EvaluateSegmentation (AVGDIST) use all voxels."""
    a, b = uneven_pair()
    found = {}
    for name in ("simpleitk", "pymia", "evaluatesegmentation"):
        if REGISTRY[name].unavailable() is None:
            found[name] = invoke(name, a, b, UNEVEN_SPACING, metrics=("MASD",)).values["MASD"]
    if len(found) < 2:
        pytest.skip(f"fewer than two of the tools present: {sorted(found)}")
    reference = found["simpleitk"]
    assert all(value == pytest.approx(reference, abs=TOLERANCE) for value in found.values())
    assert found["simpleitk"] < 0.5  # far below the boundary-based MASD of ~1.2 mm


@pytest.mark.parametrize(
    ("first", "second", "metrics"),
    [
        ("deepmind", "pymia", ("HD", "HD95", "NSD")),
        ("metricsreloaded", "monai", ("HD", "HD95")),
    ],
)
def test_pairs_the_paper_calls_identical(first, second, metrics):
    require(first)
    require(second)
    a, b = uneven_pair()
    for spacing in (UNEVEN_SPACING, (0.5, 0.5, 2.0)):
        one = invoke(first, a, b, spacing, metrics=metrics).values
        two = invoke(second, a, b, spacing, metrics=metrics).values
        assert one == pytest.approx(two, abs=1e-6)  # MONAI computes in float32


def test_two_dimensional_masks():
    a, b = shifted_boxes(2)
    a2, b2 = a[:, :, 8], b[:, :, 8]
    for name in ("deepmind", "medpy", "monai", "simpleitk"):
        outcome = invoke(require(name), a2, b2, (1.5, 1.0), metrics=("HD",))
        assert outcome.values["HD"] == pytest.approx(3.0), name


@pytest.mark.parametrize("name", ["medpy", "segmetrics", "plastimatch"])
def test_fixed_percentile_tools_refuse_other_percentiles(name):
    a, b = uneven_pair()
    outcome = invoke(
        require(name), a, b, UNEVEN_SPACING, metrics=("HD95",), settings=CallSettings(percentile=90)
    )
    assert "95th percentile" in outcome.error
    assert (
        "HD95"
        in invoke(
            require(name),
            a,
            b,
            UNEVEN_SPACING,
            metrics=("HD95",),
            settings=CallSettings(percentile=95),
        ).values
    )


def test_evaluatesegmentation_runs_hd_and_hdp_separately():
    require("evaluatesegmentation")
    a, b = uneven_pair()
    values = invoke("evaluatesegmentation", a, b, UNEVEN_SPACING, metrics=("HD", "HD95")).values
    assert values["HD"] == pytest.approx(math.sqrt(2**2 + 4**2), abs=TOLERANCE)
    assert values["HD95"] < values["HD"]
