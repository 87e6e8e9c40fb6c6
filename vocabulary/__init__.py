"""The metrics the study compares, each stated once: its key, name, unit, direction, family,
parameters and their defaults. Every package derives its metric lists and defaults from here.

This package sits below all others and imports nothing of the project, so the reference, the
adapters and the study agree on one vocabulary without loading each other. Adding a metric
starts with one `Metric` in `METRICS` (docs/adding-a-metric.md).

Notation: A and B are the two masks, dA and dB their boundaries with surface measure |.|,
d(x, S) the distance from x to the closest point of S.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Parameter:
    """A parameter of some metrics: `config_key` under the config's `metrics:`, `argument` the
    keyword of the code that computes them (reference, adapters), `default` its value when
    none is given."""

    config_key: str
    argument: str
    default: float
    unit: str
    description: str


PERCENTILE = Parameter("percentile", "percentile", 95, "%", "p of HDp (key HD95)")
TAU = Parameter("tau_mm", "tau", 2.0, "mm", "tolerance of NSD and BIoU in mm")
PARAMETERS: tuple[Parameter, ...] = (PERCENTILE, TAU)


@dataclass(frozen=True)
class Metric:
    """One metric.

    family: "distance" (computed from the distances between the two boundaries) or
        "overlap" (from the volumes the masks or their boundary bands share).
    unit: "mm" (absolute, inf when exactly one mask is empty) or "ratio" (in [0, 1]).
    better: which way is better, "lower" or "higher".
    tested: compared with the reference in the Δ tables and Wilcoxon tests (the paper's six).
    definition: the formula, in the module's notation.
    """

    key: str
    name: str
    family: Literal["distance", "overlap"]
    unit: Literal["mm", "ratio"]
    better: Literal["lower", "higher"]
    parameters: tuple[Parameter, ...] = ()
    tested: bool = True
    definition: str = ""

    @property
    def delta_scale(self) -> float:
        """Factor from a Δ in the metric's unit to the unit Δs are reported in (ratios as
        percentage points)."""
        return 100.0 if self.unit == "ratio" else 1.0

    @property
    def delta_unit(self) -> str:
        """The unit Δs of this metric are reported in."""
        return "%pt" if self.unit == "ratio" else "mm"


METRICS: tuple[Metric, ...] = (
    Metric(
        "HD",
        "Hausdorff distance",
        "distance",
        "mm",
        "lower",
        definition="max(max_{x in dA} d(x, dB), max_{y in dB} d(y, dA))",
    ),
    Metric(
        "HD95",
        "p-th percentile Hausdorff distance (HDp)",
        "distance",
        "mm",
        "lower",
        (PERCENTILE,),
        definition="max(P_p{d(x, dB): x in dA}, P_p{d(y, dA): y in dB}), each percentile of "
        "the distances weighted by surface measure",
    ),
    Metric(
        "MASD",
        "mean average surface distance",
        "distance",
        "mm",
        "lower",
        definition="(mean_{x in dA} d(x, dB) + mean_{y in dB} d(y, dA)) / 2",
    ),
    Metric(
        "ASSD",
        "average symmetric surface distance",
        "distance",
        "mm",
        "lower",
        definition="(int_dA d(x, dB) + int_dB d(y, dA)) / (|dA| + |dB|)",
    ),
    Metric(
        "NSD",
        "normalized surface distance (surface Dice)",
        "distance",
        "ratio",
        "higher",
        (TAU,),
        definition="(|{x in dA: d(x, dB) <= tau}| + |{y in dB: d(y, dA) <= tau}|) / (|dA| + |dB|)",
    ),
    Metric(
        "BIoU",
        "boundary intersection over union",
        "overlap",
        "ratio",
        "higher",
        (TAU,),
        definition="|(A ∩ bA) ∩ (B ∩ bB)| / |(A ∩ bA) ∪ (B ∩ bB)|, bX the points within tau of dX",
    ),
    Metric(
        "DSC",
        "Dice similarity coefficient",
        "overlap",
        "ratio",
        "higher",
        tested=False,
        definition="2 |A ∩ B| / (|A| + |B|), counted on the voxels",
    ),
)
"""Every metric, in the paper's order (the order of every table's rows)."""

BY_KEY: dict[str, Metric] = {metric.key: metric for metric in METRICS}


def metric_keys(
    *,
    family: str | None = None,
    unit: str | None = None,
    tested: bool | None = None,
    parameter: Parameter | None = None,
) -> tuple[str, ...]:
    """The keys of the metrics that match every criterion given, in the paper's order."""
    return tuple(
        metric.key
        for metric in METRICS
        if (family is None or metric.family == family)
        and (unit is None or metric.unit == unit)
        and (tested is None or metric.tested == tested)
        and (parameter is None or parameter in metric.parameters)
    )


METRIC_KEYS: tuple[str, ...] = metric_keys()
"""Every metric key. "HD95" stands for HDp at the chosen percentile."""

DISTANCE_KEYS: tuple[str, ...] = metric_keys(family="distance")
"""The metrics of the distance pass between the two boundaries."""

MM_KEYS: tuple[str, ...] = metric_keys(unit="mm")
"""Absolute metrics in mm, lower is better; inf when exactly one mask is empty."""

RATIO_KEYS: tuple[str, ...] = metric_keys(unit="ratio")
"""Relative metrics in [0, 1], higher is better."""

TESTED_KEYS: tuple[str, ...] = metric_keys(tested=True)
"""The metrics compared with the reference in the Δ tables and the Wilcoxon tests."""

DEFAULT_PERCENTILE: float = PERCENTILE.default
DEFAULT_TAU: float = TAU.default
