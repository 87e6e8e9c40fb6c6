"""Edge-case probe: how each tool treats empty masks and swapped inputs (paper, Table A3).

Cases (`study.records.EDGE_CASES`): O1 = A empty, O2 = B empty, O3 = both empty, S = A and B
swapped on a non-trivial pair. Each metric the tool supports (DSC included) is requested in a
call of its own, so an error in one metric cannot hide another metric's output.
Output classes (`study.records.EDGE_OUTPUTS`): number, 0, 1, nan, inf, -inf, float_max (a
float maximum standing in for infinity), error, empty (no value and no error); for S,
unchanged / changed (or error).
"""

from __future__ import annotations

import math

import numpy as np

from adapters import Adapter, CallSettings, Outcome, describe, invoke
from adapters.calls import DEFAULT_SETTINGS
from study.records import EDGE_CASES

FLOAT_MAX_STAND_IN = 1e15
"""Values at least this large stand in for infinity (the paper's "∞*, a very large integer"):
FLT_MAX (3.4e38), half of it (what plastimatch averages to), DBL_MAX and 2^64 (1.8e19, what
seg-metrics 1.1.6 returns for an empty mask) all qualify; no distance in mm comes close."""

SWAP_TOLERANCE = 1e-9
"""Relative difference under which a swapped result counts as unchanged (float round-off)."""

PROBE_SPACING: tuple[float, float, float] = (1.0, 1.0, 2.0)


def probe_pair() -> tuple[np.ndarray, np.ndarray]:
    """A non-trivial, asymmetric 3D pair: a box and a shifted, shortened box plus a bump.

    Asymmetric so that directed definitions (MedPy, MONAI MASD) change under a swap.
    """
    a = np.zeros((24, 24, 16), dtype=bool)
    a[5:17, 5:17, 4:12] = True
    b = np.zeros_like(a)
    b[7:19, 5:17, 4:10] = True
    b[10:13, 10:13, 10:13] = True
    return a, b


def classify(value: float) -> str:
    """Output class of a number the tool returned."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if abs(value) >= FLOAT_MAX_STAND_IN:
        return "float_max"
    if value == 0:
        return "0"
    return "1" if value == 1 else "number"


def _record(
    case: str, metric: str, output: str, value: str, outcome: Outcome, message: str | None = None
) -> dict:
    text = message if message is not None else (outcome.error or "; ".join(outcome.warnings))
    return {
        "case": case,
        "metric": metric,
        "output": output,
        "value": value,
        "warned": bool(outcome.warnings),
        "message": text,
    }


def _single(case: str, metric: str, outcome: Outcome) -> dict:
    if outcome.error is not None:
        return _record(case, metric, "error", "", outcome)
    if metric not in outcome.values:
        return _record(case, metric, "empty", "", outcome)
    value = outcome.values[metric]
    return _record(case, metric, classify(value), repr(value), outcome)


def _swap(metric: str, forward: Outcome, backward: Outcome) -> dict:
    """S: 'unchanged' when both directions give the same value (NaN = NaN counts as same)."""
    merged = Outcome(
        warnings=forward.warnings + backward.warnings, error=forward.error or backward.error
    )
    if merged.error is not None:
        return _record("S", metric, "error", "", merged)
    if metric not in forward.values or metric not in backward.values:
        return _record("S", metric, "empty", "", merged)
    first, second = forward.values[metric], backward.values[metric]
    same = (
        first == second
        or (math.isnan(first) and math.isnan(second))
        or math.isclose(first, second, rel_tol=SWAP_TOLERANCE, abs_tol=1e-12)
    )
    return _record(
        "S", metric, "unchanged" if same else "changed", f"{first!r} / {second!r}", merged
    )


def probe(adapter: Adapter, settings: CallSettings = DEFAULT_SETTINGS) -> dict:
    """The edge-case record of one tool called with `settings`, in their environment
    (format: docs/interfaces.md)."""
    environment = settings.environment
    header = {"tool": adapter.name, "label": adapter.label, "environment": environment}
    version, reason = describe([adapter], environment)[adapter.name]
    if reason is not None:
        return {**header, "version": None, "status": "unavailable", "reason": reason, "records": []}
    a, b = probe_pair()
    empty = np.zeros_like(a)
    inputs = {"O1": (empty, b), "O2": (a, empty), "O3": (empty, empty)}

    def run(first, second, metric) -> Outcome:
        return invoke(adapter, first, second, PROBE_SPACING, metrics=(metric,), settings=settings)

    records = [
        _single(case, metric, run(*inputs[case], metric))
        for case in EDGE_CASES
        if case != "S"
        for metric in adapter.metrics
    ]
    records += [_swap(metric, run(a, b, metric), run(b, a, metric)) for metric in adapter.metrics]
    return {**header, "version": version, "status": "ok", "records": records}
