"""Compare two masks with every available tool and the reference, side by side.

For a researcher's own data: each tool's value, the reference's value and Δ = tool − reference
per metric; tools that ignore the voxel size for a metric are flagged; unavailable tools are
listed with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adapters import REGISTRY, Adapter, Outcome, invoke
from study.records import METRICS


@dataclass
class Comparison:
    """Everything the compare command prints."""

    spacing: tuple[float, ...]
    reference: dict[str, float] | None
    reference_note: str | None
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


def load_pair(path_a: str | Path, path_b: str | Path, label: int | None = None):
    """(a, b, spacing) from two image files; `label` selects one value, else any non-zero.

    Fails early if a file is missing or the two images differ in size or spacing.
    """
    import SimpleITK as sitk

    images = []
    for path in (path_a, path_b):
        if not Path(path).is_file():
            raise FileNotFoundError(f"mask file {path} does not exist")
        images.append(sitk.ReadImage(str(path)))
    image_a, image_b = images
    if image_a.GetSize() != image_b.GetSize():
        raise ValueError(f"{path_a} has size {image_a.GetSize()}, {path_b} {image_b.GetSize()}")
    if not np.allclose(image_a.GetSpacing(), image_b.GetSpacing()):
        raise ValueError(f"{path_a} has spacing {image_a.GetSpacing()}, "
                         f"{path_b} {image_b.GetSpacing()}")
    arrays = [sitk.GetArrayFromImage(image) for image in images]
    masks = [array == label if label is not None else array != 0 for array in arrays]
    return masks[0], masks[1], tuple(float(s) for s in reversed(image_a.GetSpacing()))


def reference_metrics(a, b, spacing, *, percentile: float, tau: float):
    """(values, None) from `reference.compute_metrics`, or (None, why not)."""
    try:
        from reference import compute_metrics
    except ImportError as error:
        return None, f"reference.compute_metrics is not available: {error}"
    try:
        return compute_metrics(a, b, spacing, percentile=percentile, tau=tau), None
    except Exception as error:  # noqa: BLE001 - report, keep the tools' columns
        return None, f"reference failed: {type(error).__name__}: {error}"


def compare(a: np.ndarray, b: np.ndarray, spacing: Sequence[float], *,
            tools: Sequence[str] | None = None, percentile: float = 95,
            tau: float = 2.0, timeout: float = 600.0) -> Comparison:
    """Run the reference and each tool on (a, b)."""
    names = list(tools) if tools else list(REGISTRY)
    unknown = [name for name in names if name not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; known: {sorted(REGISTRY)}")
    values, note = reference_metrics(a, b, spacing, percentile=percentile, tau=tau)
    result = Comparison(tuple(float(s) for s in spacing), values, note)
    for name in names:
        outcome = invoke(name, a, b, spacing, percentile=percentile, tau=tau, timeout=timeout)
        if outcome.unavailable is not None:
            result.unavailable[name] = outcome.unavailable
        else:
            result.outcomes[name] = outcome
    return result


def _cell(adapter: Adapter, metric: str, outcome: Outcome, reference) -> str:
    if metric not in adapter.metrics:
        return ""
    if metric not in outcome.values:
        return "error" if outcome.error else "-"
    value = outcome.values[metric]
    flag = "*" if metric in adapter.ignores_spacing else ""
    if reference is None or metric not in reference or not math.isfinite(value):
        return f"{value:.4g}{flag}"
    return f"{value:.4g}{flag} ({value - reference[metric]:+.3g})"


def format_comparison(result: Comparison, *, percentile: float = 95, tau: float = 2.0) -> str:
    """A plain-text table: one row per tool, one column per metric, 'value (Δ)'."""
    header = ["tool", *METRICS, "seconds"]
    rows = []
    if result.reference is not None:
        rows.append(["reference", *(f"{result.reference.get(m, math.nan):.4g}"
                                    for m in METRICS), ""])
    for name, outcome in result.outcomes.items():
        adapter = REGISTRY[name]
        label = f"{adapter.label} {adapter.version()}"
        rows.append([label, *(_cell(adapter, m, outcome, result.reference) for m in METRICS),
                     f"{outcome.seconds:.3f}"])
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [f"spacing (mm, array axis order): {result.spacing}; HD95 = HD{percentile:g}, "
             f"NSD and BIoU at tau = {tau:g} mm",
             "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True))
              for row in rows]
    lines.append("(Δ = tool − reference in brackets; * = the tool ignores the voxel size for "
                 "this metric, its value is in voxels)")
    if result.reference_note:
        lines.append(f"reference: {result.reference_note}")
    for name, outcome in result.outcomes.items():
        if outcome.error:
            lines.append(f"{name}: error: {outcome.error}")
        if outcome.warnings:
            lines.append(f"{name}: warned: {'; '.join(outcome.warnings)[:300]}")
    for name, reason in result.unavailable.items():
        lines.append(f"{name}: unavailable: {reason}")
    return "\n".join(lines)
