"""The metric vocabulary is the one owner of the metrics' facts: the other packages agree
with it because they read it, and these tests check the few places that must follow it by
hand (a formula per distance metric, the empty-mask convention)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference import compute_metrics
from reference.metrics import FORMULAS
from study.pipeline.config import load_config, load_schema
from vocabulary import (
    BY_KEY,
    DEFAULT_PERCENTILE,
    DEFAULT_TAU,
    DISTANCE_KEYS,
    METRIC_KEYS,
    METRICS,
    MM_KEYS,
    PERCENTILE,
    RATIO_KEYS,
    TAU,
    TESTED_KEYS,
    metric_keys,
)


def test_the_papers_metrics_in_the_papers_order():
    assert METRIC_KEYS == ("HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC")
    assert TESTED_KEYS == METRIC_KEYS[:-1]  # DSC is counted on voxels, not tested
    assert MM_KEYS == ("HD", "HD95", "MASD", "ASSD")
    assert RATIO_KEYS == ("NSD", "BIoU", "DSC")
    assert len({metric.key for metric in METRICS}) == len(METRICS)


def test_units_and_directions_agree():
    """Absolute metrics in mm are better lower, ratios better higher, and Δs of ratios are
    reported in percentage points."""
    for metric in METRICS:
        assert metric.better == ("lower" if metric.unit == "mm" else "higher"), metric.key
        assert (metric.delta_unit, metric.delta_scale) == (
            ("mm", 1.0) if metric.unit == "mm" else ("%pt", 100.0)
        )


def test_selection_by_parameter_and_family():
    assert metric_keys(parameter=PERCENTILE) == ("HD95",)
    assert metric_keys(parameter=TAU) == ("NSD", "BIoU")
    assert metric_keys(family="overlap") == ("BIoU", "DSC")


def test_every_distance_metric_has_its_formula_in_the_reference():
    assert set(FORMULAS) == set(DISTANCE_KEYS)


def test_the_config_takes_its_metric_facts_from_the_vocabulary():
    metrics = load_schema()["properties"]["metrics"]["properties"]
    assert metrics["scored"]["items"]["enum"] == list(METRIC_KEYS)
    filled = load_config({})["metrics"]
    assert (filled["percentile"], filled["tau_mm"]) == (DEFAULT_PERCENTILE, DEFAULT_TAU)
    assert filled["scored"] == list(TESTED_KEYS)


@pytest.mark.parametrize("empty", ["a", "b"])
def test_one_empty_mask_gives_inf_distances_and_no_overlap(empty):
    """The reference's convention for one empty mask follows each metric's unit."""
    full = np.zeros((8, 8, 8), bool)
    full[2:6, 2:6, 2:6] = True
    a, b = (np.zeros_like(full), full) if empty == "a" else (full, np.zeros_like(full))
    with pytest.warns(UserWarning, match="empty"):
        scores = compute_metrics(a, b, (1, 1, 1))
    for key, value in scores.items():
        assert value == (math.inf if BY_KEY[key].unit == "mm" else 0.0), key
