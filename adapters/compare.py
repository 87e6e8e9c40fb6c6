"""Compare two masks with every available tool and the reference, side by side.

For a researcher's own data: each tool's value, the reference's value and Δ = tool − reference
per metric; tools that ignore the voxel size for a metric are flagged; unavailable tools are
listed with the reason. Files are loaded by `maskio.load_pair`, which refuses two masks that
are not on one grid: a score computed across grids would be meaningless.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from adapters.base import Adapter
from adapters.calls import DEFAULT_SETTINGS, CallSettings, Outcome
from adapters.harness import describe, invoke_files
from adapters.registry import REGISTRY, resolve
from maskio import load_pair
from vocabulary import METRIC_KEYS


@dataclass
class Comparison:
    """Everything the compare command prints."""

    settings: CallSettings
    spacing: tuple[float, ...]
    reference: dict[str, float] | None
    reference_note: str | None
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


def reference_metrics(a, b, spacing, *, percentile: float, tau: float):
    """(values, None) from `reference.compute_metrics`, or (None, why not): its default
    call's values, each inside its proven bracket, as the study scores the reference; a
    bracket wider than its aim is warned about."""
    try:
        from reference import compute_metrics
    except ImportError as error:
        return None, f"reference.compute_metrics is not available: {error}"
    try:
        return compute_metrics(a, b, spacing, percentile=percentile, tau=tau), None
    except Exception as error:  # noqa: BLE001 - report, keep the tools' columns
        return None, f"reference failed: {type(error).__name__}: {error}"


def compare(
    path_a: str | Path,
    path_b: str | Path,
    *,
    label: int | None = None,
    tools: Sequence[str] | None = None,
    settings: CallSettings = DEFAULT_SETTINGS,
) -> Comparison:
    """Run the reference and each tool (in its worker, which reads the files) on two files,
    all with `settings` (the reference with its percentile and tau)."""
    names = list(tools) if tools else list(REGISTRY)
    adapters = [resolve(name) for name in names]  # ValueError naming the known tools
    pair = load_pair(path_a, path_b, label)  # InputError naming the file and the problem
    values, note = reference_metrics(
        pair.a, pair.b, pair.spacing, percentile=settings.percentile, tau=settings.tau
    )
    result = Comparison(settings, tuple(float(s) for s in pair.spacing), values, note)
    states = describe(adapters, settings.environment)  # one process per other Python
    for adapter in adapters:
        version, reason = states[adapter.name]
        if reason is not None:
            result.unavailable[adapter.name] = reason
            continue
        result.versions[adapter.name] = version
        result.outcomes[adapter.name] = invoke_files(
            adapter, path_a, path_b, label=label, settings=settings
        )
    return result


def _cell(adapter: Adapter, metric: str, outcome: Outcome, reference) -> str:
    if metric not in adapter.metrics:
        return ""
    if metric not in outcome.values:
        return "error" if outcome.error_of(metric) else "-"
    value = outcome.values[metric]
    flag = "*" if metric in adapter.ignores_spacing else ""
    if reference is None or metric not in reference or not math.isfinite(value):
        return f"{value:.4g}{flag}"
    return f"{value:.4g}{flag} ({value - reference[metric]:+.3g})"


def format_comparison(result: Comparison) -> str:
    """A plain-text table: one row per tool, one column per metric, 'value (Δ)'."""
    header = ["tool", *METRIC_KEYS, "seconds"]
    rows = []
    if result.reference is not None:
        rows.append(
            ["reference", *(f"{result.reference.get(m, math.nan):.4g}" for m in METRIC_KEYS), ""]
        )
    for name, outcome in result.outcomes.items():
        adapter = resolve(name)
        label = f"{adapter.label} {result.versions[name]}"
        rows.append(
            [
                label,
                *(_cell(adapter, m, outcome, result.reference) for m in METRIC_KEYS),
                f"{outcome.seconds:.3f}",
            ]
        )
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        f"spacing (mm, array axis order): {result.spacing}; "
        f"HD95 = HD{result.settings.percentile:g}, "
        f"NSD and BIoU at tau = {result.settings.tau:g} mm",
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
    ]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    lines.append(
        "(Δ = tool − reference in brackets; * = the tool ignores the voxel size for "
        "this metric, its value is in voxels)"
    )
    if result.reference_note:
        lines.append(f"reference: {result.reference_note}")
    for name, outcome in result.outcomes.items():
        if outcome.error:
            lines.append(f"{name}: error: {outcome.error}")
        else:
            lines += [f"{name}: {metric} error: {text}" for metric, text in outcome.failed.items()]
        if outcome.warnings:
            lines.append(f"{name}: warned: {'; '.join(outcome.warnings)[:300]}")
    for name, reason in result.unavailable.items():
        lines.append(f"{name}: unavailable: {reason}")
    return "\n".join(lines)
