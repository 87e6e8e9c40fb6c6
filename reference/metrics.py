"""Boundary-element-weighted distance metrics: one formula per metric of the vocabulary's
distance family, over the two directions of one distance pass (module `distance_pass`).

With d_n the exact distance from the centre of element n of X to the surface Y, s_n the
element's size (length in 2D, area in 3D) and |S_X| = sum s_n:

    HD    = max(max d_AB, max d_BA)
    HDp   = max(d_AB[n_p], d_BA[m_p]),  n_p = smallest n (in sorted order) with
            sum_{k <= n} s_k >= p / 100 * |S_A|
    MASD  = (sum d_AB s_A / |S_A| + sum d_BA s_B / |S_B|) / 2
    ASSD  = (sum d_AB s_A + sum d_BA s_B) / (|S_A| + |S_B|)
    NSD   = (sum of s with d <= tau, both directions) / (|S_A| + |S_B|)

HDp and NSD count the pass's open elements by their interpolant ("size within t", module
`distance_pass`). The public HD replaces the centre maximum by the bracket of module
`hausdorff` (vertices and refined points, within 1e-3 mm of the surface maximum).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reference.distance_pass import Directed
from vocabulary import DISTANCE_KEYS


@dataclass(frozen=True)
class BothDirections:
    """The two directed distance distributions of one pass, with the settings they were
    measured for: what each metric's formula (`FORMULAS`) reads."""

    a_to_b: Directed
    b_to_a: Directed
    percentile: float
    threshold: float
    tau: float | None

    @property
    def areas(self) -> tuple[float, float]:
        """|S_A|, |S_B|: the sizes of the two surfaces."""
        return self.a_to_b.size.sum(), self.b_to_a.size.sum()


def hausdorff_at_centres(d: BothDirections) -> float:
    """HD = max(max d_AB, max d_BA) over the query points (the public HD is bracketed)."""
    return float(max(d.a_to_b.distance.max(), d.b_to_a.distance.max()))


def percentile_hausdorff(d: BothDirections) -> float:
    """HDp = the larger of the two directed weighted p-th percentiles."""
    return max(d.a_to_b.percentile(d.percentile), d.b_to_a.percentile(d.percentile))


def mean_average_surface_distance(d: BothDirections) -> float:
    """MASD = (sum d_AB s_A / |S_A| + sum d_BA s_B / |S_B|) / 2."""
    area_a, area_b = d.areas
    return 0.5 * (d.a_to_b.weighted_sum() / area_a + d.b_to_a.weighted_sum() / area_b)


def average_symmetric_surface_distance(d: BothDirections) -> float:
    """ASSD = (sum d_AB s_A + sum d_BA s_B) / (|S_A| + |S_B|)."""
    return (d.a_to_b.weighted_sum() + d.b_to_a.weighted_sum()) / sum(d.areas)


def normalized_surface_distance(d: BothDirections) -> float:
    """NSD = (size within tau, both directions) / (|S_A| + |S_B|)."""
    within = d.a_to_b.within(d.threshold, d.tau) + d.b_to_a.within(d.threshold, d.tau)
    return within / sum(d.areas)


FORMULAS: dict[str, Callable[[BothDirections], float]] = {
    "HD": hausdorff_at_centres,
    "HD95": percentile_hausdorff,
    "MASD": mean_average_surface_distance,
    "ASSD": average_symmetric_surface_distance,
    "NSD": normalized_surface_distance,
}
"""Metric key -> its formula over one distance pass: one per metric of the vocabulary's
distance family (a new distance metric is one function here)."""

PASS_KEYS = frozenset(DISTANCE_KEYS) - {"HD"}
"""The distance metrics read off the distance pass; HD has a bracket of its own (module
`hausdorff`)."""


def weighted_metrics(
    a_to_b: Directed,
    b_to_a: Directed,
    *,
    percentile: float,
    threshold: float,
    tau: float | None = None,
) -> dict[str, float]:
    """Every distance-family metric from both directions (see module docstring)."""
    both = BothDirections(a_to_b, b_to_a, percentile, threshold, tau)
    return {key: FORMULAS[key](both) for key in DISTANCE_KEYS}
