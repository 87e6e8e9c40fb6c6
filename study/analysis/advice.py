"""The measurements a verdict rests on (`verdicts` applies the rule to them): Δ per pair and
its summary per tool, metric and grid (each voxel size of the run, and "native" for pairs
scored on their own scans' grids: never pooled), the measured reasons to avoid a tool (a bias
or scatter, a voxel size ignored, a field of view that changes its scores, errors on empty
masks), the tools with identical scores, and the reference's time per pair.

Every statistic is of Δ = tool − reference on the mask pairs (`delta.deltas`), in display
units (mm; percentage points for NSD, BIoU and DSC). Pairs without a reference score are left
out (they say nothing about the tool); `defined` marks the pairs whose reference value is
finite.

The thresholds are stated here and in `verdicts`, nowhere else: `TOLERANCE`, `MOST_PAIRS`,
`SAME_SIGN`, `INTERVAL`, `MIN_CATEGORY_PAIRS`, `VOXEL_RATIO_TOLERANCE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from adapters import REGISTRY
from study.analysis import edge_comparison
from study.analysis.delta import deltas, measured
from study.analysis.labels import (
    display_scale,
    display_unit,
    ordered_tools,
    shorten,
    signed,
    tool_label,
)
from study.oars import category_phrase
from study.records import NATIVE, REFERENCE, parse_spacing_label, spacing_title
from study.scoring import grid_check
from vocabulary import RATIO_KEYS

TOLERANCE: dict[str, float] = {"mm": 0.5, "%pt": 2.0}
"""|Δ| within which a tool's score stands in for the reference's (display units): half a
millimetre for the distances, 2 percentage points for NSD, BIoU and DSC."""

MOST_PAIRS = 0.9
"""A tool is recommended for a metric and grid when at least this share of the grid's pairs has
|Δ| within `TOLERANCE` (a failed or non-finite Δ is not within)."""

SAME_SIGN = 0.9
"""A tool that misses the tolerance is called biased (over- or under-estimating, with the size
of its bias) when Δ has one sign on at least this share of its finite Δ; else it scatters."""

INTERVAL: tuple[float, float] = (2.5, 97.5)
"""Percentiles of Δ bounding the central 95 % of the pairs: the interval table's bounds
(numpy's default linear interpolation between order statistics)."""

MIN_CATEGORY_PAIRS = 20
"""Fewest finite Δ of one OAR category for the interval table to give that category a row."""

VOXEL_RATIO_TOLERANCE = 0.1
"""A tool is measured to ignore the voxel size when, over the isotropic voxel sizes s of the run
(at least two), the median r(s) of its distances over the reference's scales as 1 / s: s r(s)
is the same at every s within this relative tolerance (distances in voxels, not millimetres)."""


def isotropic_side(label: str) -> float | None:
    """The side of an isotropic voxel-size label ("2x2x2" -> 2.0); None for an anisotropic
    one and for a label that is not a voxel size ("native": each pair has its own)."""
    if label == NATIVE:
        return None
    sides = set(parse_spacing_label(label))
    return sides.pop() if len(sides) == 1 else None


def tolerance_text(unit: str) -> str:
    """ "±0.5 mm" or "±2 %pt"."""
    return f"±{TOLERANCE[unit]:g} {unit}"


def error_messages(scores: pd.DataFrame, tool: str) -> dict[str, str]:
    """Per metric, the first message of a tool's failed scores, cut to its first clause."""
    return all_error_messages(scores.loc[scores["tool"] == tool]).get(tool, {})


def all_error_messages(scores: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Tool -> `error_messages` of every tool, from one pass over the scores."""
    failed = measured(scores)
    failed = failed.loc[failed["status"] == "error"]
    first = failed.groupby(["tool", "metric"], observed=True)["message"].first()
    found: dict[str, dict[str, str]] = {}
    for (tool, metric), message in first.items():
        found.setdefault(tool, {})[metric] = shorten(str(message) or "no message")
    return found


# --------------------------------------------------------------------------------------------
# Δ per pair and its summary
# --------------------------------------------------------------------------------------------


def pair_deltas(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> pd.DataFrame:
    """Δ of every scored pair that has a reference score (`statistics.deltas`), with `scaled`
    (Δ in display units), `unit`, `defined` (the reference's value is finite: on the other
    pairs, empty masks, Δ says nothing about accuracy) and `within` (defined, finite and
    |Δ| ≤ `TOLERANCE`)."""
    delta = deltas(scores, tools)
    delta = delta.loc[delta["kind"] != "no_reference"].reset_index(drop=True)
    unit = delta["metric"].map(display_unit)
    scaled = delta["delta"] * delta["metric"].map(display_scale)
    defined = pd.Series(np.isfinite(delta["value_reference"].astype(float)), index=delta.index)
    finite = delta["kind"] == "finite"
    return delta.assign(
        scaled=scaled,
        unit=unit,
        defined=defined,
        within=defined & finite & (scaled.abs() <= unit.map(TOLERANCE)),
    )


def agreement(delta: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group of `pair_deltas` rows: n pairs; n_failed and n_nonfinite; of the finite Δ
    (n_finite) the median, SD (ddof = 1), worst (the Δ of the largest |Δ|, with its sign) and
    the OAR category it occurred in, the `INTERVAL` percentiles lo and hi, how many are above
    and below zero (n_above, n_below), and `ratio`, the median of tool / reference over the
    pairs with a positive reference (NaN for NSD, BIoU and DSC); `within`, the share of all n
    pairs with |Δ| ≤ `TOLERANCE`."""
    rows = []
    for key, group in delta.groupby(list(by), sort=False, observed=True):
        finite = group.loc[group["kind"] == "finite"]
        scaled = finite["scaled"]
        worst = scaled.abs().idxmax() if len(finite) else None
        lo, hi = np.percentile(scaled, INTERVAL) if len(finite) else (np.nan, np.nan)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "unit": group["unit"].iloc[0],
                "n": len(group),
                "n_failed": int((group["kind"] == "failed").sum()),
                "n_nonfinite": int((group["kind"] == "nonfinite").sum()),
                "n_finite": len(finite),
                "median": scaled.median(),
                "sd": scaled.std(),
                "worst": np.nan if worst is None else scaled[worst],
                "worst_category": "" if worst is None else finite.loc[worst, "category"],
                "lo": lo,
                "hi": hi,
                "n_above": int((scaled > 0).sum()),
                "n_below": int((scaled < 0).sum()),
                **bias_size(finite),
                "within": float(group["within"].mean()),
            }
        )
    return pd.DataFrame(rows)


def bias_size(finite: pd.DataFrame) -> dict[str, float | str]:
    """How a consistent Δ is best told, from one group's finite `pair_deltas` rows: `ratio`,
    the median of tool / reference (distances with a positive reference only, else NaN), and
    `bias_kind`, "factor" when the tool's value is closer to ratio × reference than to
    reference + median Δ (median absolute residual, in mm), else "offset"."""
    positive = finite.loc[(finite["unit"] == "mm") & (finite["value_reference"].astype(float) > 0)]
    if positive.empty:
        return {"ratio": np.nan, "bias_kind": "offset"}
    value = positive["value"].astype(float)
    reference = positive["value_reference"].astype(float)
    ratio = float((value / reference).median())
    as_factor = (value - ratio * reference).abs().median()
    as_offset = (positive["scaled"] - positive["scaled"].median()).abs().median()
    return {"ratio": ratio, "bias_kind": "factor" if as_factor < as_offset else "offset"}


def interval_text(row: Mapping) -> str:
    """ "Δ in [-0.31, +4.25] %pt on 95 % of pairs: the exact value lies in [v - 4.25, v + 0.31]
    for a published v" from a row's `INTERVAL` bounds lo and hi."""
    low, high = INTERVAL
    unit = row["unit"]
    if not np.isfinite(row["lo"]):
        return "no finite Δ"
    return (
        f"Δ in [{signed(row['lo'])}, {signed(row['hi'])}] {unit} on {high - low:g} % of "
        f"pairs: a published v is within [v {signed(-row['hi'])}, v {signed(-row['lo'])}]"
        " of the exact value"
    )


# --------------------------------------------------------------------------------------------
# Measured reasons to avoid a tool
# --------------------------------------------------------------------------------------------


def ignores_voxel_size(delta: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    """(tool, metric) -> r(s) per isotropic voxel size s (the measured sign that the tool
    ignores the voxel size), for the distance metrics. With r(s) the median ratio of the
    tool's value to the reference's at isotropic voxel size s, a tool computing in voxels has
    r(s) = c / s for its own c, so s r(s) is the same at every s (within
    `VOXEL_RATIO_TOLERANCE`), while a tool in millimetres keeps r(s) itself roughly constant.
    Comparing sizes with each other, not r(s) with 1 / s, keeps a tool whose quantity differs
    from the reference's by a factor that happens to be near 1 / s at one size from being
    accused. Nothing can be said with fewer than two isotropic sizes."""
    finite = delta.loc[(delta["kind"] == "finite") & ~delta["metric"].isin(RATIO_KEYS)]
    sides = finite["spacing"].map(isotropic_side)
    finite = finite.assign(side=sides).loc[
        (finite["value_reference"].astype(float) > 0) & sides.notna()
    ]
    found = {}
    for (tool, metric), rows in finite.groupby(["tool", "metric"], sort=False):
        ratios = (rows["value"] / rows["value_reference"]).groupby(rows["spacing"]).median()
        if len(ratios) < 2:
            continue
        in_voxels = ratios.to_numpy() * ratios.index.map(isotropic_side).to_numpy(dtype=float)
        if np.all(np.abs(in_voxels / in_voxels[0] - 1) <= VOXEL_RATIO_TOLERANCE):
            found[tool, metric] = ratios
    return found


def voxel_size_reason(ratios: pd.Series, metric: str, spacing: str, here: float) -> str:
    """Why a tool measured to ignore the voxel size (`ignores_voxel_size`'s `ratios`) is to be
    avoided on one grid: where it was measured, and its own ratio on this grid (`here`)."""
    measured = ", ".join(f"{r:.2f} × at {spacing_title(s)}" for s, r in ratios.items())
    own = f"; here {here:.2f} ×" if np.isfinite(here) and spacing not in ratios.index else ""
    return (
        f"ignores the voxel size (measured: its {metric} is the reference's {measured}, "
        f"distances in voxels{own})"
    )


def field_of_view_findings(
    rows: pd.DataFrame | None,
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """(reasons, cautions): (tool, metric) -> how its score changed between cropped and
    scan-sized grids of the same pairs (`scoring.grid_check`). A reason where the change
    decides a verdict (`decisive_changes`); a caution where it decides nothing (on a pair the
    reference leaves undefined, an empty mask, or by no more than `TOLERANCE`)."""
    if rows is None or rows.empty:
        return {}, {}
    differences = grid_check.grid_differences(rows)
    decisive = decisive_changes(differences)
    changed = grid_check.changed_scores(differences.loc[~decisive])
    cautions = {
        (row.tool, row.metric): "changes with the field of view only where no verdict rests "
        f"on it (an empty mask, or within the tolerance): on {row.changed} of {row.compared} "
        f"grid-check pairs (e.g. {row.example})"
        for row in changed.itertuples()
    }
    return field_of_view_changes(differences.loc[decisive]), cautions


def decisive_changes(differences: pd.DataFrame) -> pd.Series:
    """Grid-check rows whose change would move a verdict: on a pair the reference defines
    on both grids (when the reference was checked), by more than `TOLERANCE` (display
    units) or to another status or a non-finite value."""
    keys = ["spacing", "oar", "metric"]
    reference = differences.loc[differences["tool"] == REFERENCE]
    defined = pd.Series(True, index=differences.index)
    if not reference.empty:
        finite = np.isfinite(reference["cropped"].astype(float)) & np.isfinite(
            reference["scan"].astype(float)
        )
        known = set(map(tuple, reference.loc[finite, keys].to_numpy()))
        defined = pd.Series(
            [tuple(k) in known for k in differences[keys].to_numpy()], index=differences.index
        )
    size = differences["difference"].astype(float).abs() * differences["metric"].map(display_scale)
    limit = differences["metric"].map(display_unit).map(TOLERANCE)
    beyond = ~np.isfinite(size) | (size > limit)
    return differences["changed"] & defined & beyond


def field_of_view_changes(differences: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(tool, metric) -> "depends on the field of view: ..." for the scores that changed
    among the grid check's differences, already computed
    (`scoring.grid_check.grid_differences`)."""
    changed = grid_check.changed_scores(differences)
    return {
        (row.tool, row.metric): f"depends on the field of view: changed on {row.changed} of "
        f"{row.compared} grid-check pairs (e.g. {row.example})"
        for row in changed.itertuples()
    }


def empty_mask_errors(edge_cases: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(tool, metric) -> "raises an error on empty masks (O1, O3)" from the edge-case records
    (Table A3's numeric rows), naming the cases O1, O2, O3 (A, B or both empty) on which the
    tool raised, for the tools that raise on an empty mask. When every such error comes from
    the environment (`edge_comparison.environment_error`: NumPy 2 lacks what the tool calls),
    the caution says so: it is not the tool's designed handling."""
    if edge_cases is None or edge_cases.empty:
        return {}
    raised = edge_cases.loc[(edge_cases["output"] == "error") & (edge_cases["case"] != "S")]
    found = {}
    for (tool, metric), rows in raised.groupby(["tool", "metric"]):
        text = f"raises an error on empty masks ({', '.join(sorted(rows['case']))})"
        messages = rows["message"] if "message" in rows else pd.Series([""] * len(rows))
        causes = {edge_comparison.environment_error(m) for m in messages}
        if None not in causes:
            text += f" in this environment, not by design: {'; '.join(sorted(causes))}"
        found[tool, metric] = text
    return found


def declared_spacing_ignored(tool: str, metric: str) -> str:
    """The adapter's own note that the tool ignores the voxel size for `metric` ("" if none)."""
    adapter = REGISTRY.get(tool)
    if adapter is not None and metric in adapter.ignores_spacing:
        return f"its {metric} ignores the voxel size (the adapter's note)"
    return ""


def identical_tools(delta: pd.DataFrame) -> dict[tuple[str, str, str], list[str]]:
    """(metric, spacing, tool) -> the tools whose scores on that grid equal its own on every
    pair (value and status alike), itself first, in tool order; a tool without a twin maps to
    itself alone."""
    keys = ["dataset", "case", "oar"]
    groups: dict[tuple[str, str, str], list[str]] = {}
    for (metric, spacing), rows in delta.groupby(["metric", "spacing"], sort=False):
        by_scores: dict[tuple, list[str]] = {}
        for tool in ordered_tools(rows["tool"]):
            mine = rows.loc[rows["tool"] == tool].sort_values(keys)
            signature = tuple(
                zip(
                    *(mine[k].astype(str) for k in keys),
                    mine["status"].astype(str),
                    mine["value"].astype(float).map(repr),
                    strict=True,
                )
            )
            by_scores.setdefault(signature, []).append(tool)
        for members in by_scores.values():
            for tool in members:
                groups[metric, spacing, tool] = members
    return groups


# --------------------------------------------------------------------------------------------
# Recommendations
# --------------------------------------------------------------------------------------------


def bias_reason(row: Mapping) -> str:
    """Why a tool misses the tolerance: a bias (Δ of one sign on at least `SAME_SIGN` of the
    finite Δ; its size as a factor or an offset, `bias_size`) or scatter, then its share
    within and its worst Δ."""
    unit, finite = row["unit"], row["n_finite"]
    if finite == 0:
        return f"no finite Δ on {row['n']} pairs"
    above, below = row["n_above"], row["n_below"]
    tolerance = row.get("tolerance", TOLERANCE[unit])
    share = f"{row['within']:.0%} of {row['n']} pairs within ±{tolerance:.2g} {unit}"
    worst = f"worst {signed(row['worst'])} {unit} ({category_phrase(row['worst_category'])})"
    if max(above, below) >= SAME_SIGN * finite:
        high = above >= below
        size = (
            f"by a factor of {row['ratio']:.2f} (median tool / reference; median Δ "
            f"{signed(row['median'])} {unit})"
            if row["bias_kind"] == "factor" and np.isfinite(row["ratio"])
            else f"by {signed(row['median'])} {unit} (median Δ)"
        )
        return (
            f"{'over' if high else 'under'}-estimates {size}, a bias: Δ "
            f"{'>' if high else '<'} 0 on {above if high else below} of {finite} pairs; "
            f"{share}, {worst}"
        )
    return (
        f"scatters: Δ > 0 on {above}, = 0 on {finite - above - below}, < 0 on {below} of "
        f"{finite} pairs, median Δ {signed(row['median'])} {unit}; {share}, {worst}"
    )


def joined(texts: Mapping[str, Sequence[str]]) -> str:
    """One text for tools with identical scores (tool -> its reasons or cautions): what all
    share once, then what only some have, labelled ("SimpleITK only: ...")."""
    lists = list(texts.values())
    common = [text for text in dict.fromkeys(sum(lists, [])) if all(text in x for x in lists)]
    own = [
        f"{tool_label(tool)} only: {text}"
        for tool, mine in texts.items()
        for text in mine
        if text not in common
    ]
    return "; ".join(common + own)


def reference_seconds(scores: pd.DataFrame) -> pd.DataFrame:
    """Per grid (spacing label, the index), the reference's median and longest time per pair
    (columns median, max): its one call for every metric of a pair (the scores' `seconds`)."""
    rows = measured(scores)
    rows = rows.loc[(rows["tool"] == REFERENCE) & (rows["status"] == "ok")]
    calls = rows.drop_duplicates(["dataset", "case", "oar", "spacing"])
    return calls.groupby("spacing")["seconds"].agg(["median", "max"])


def grid_order(spacing: str) -> tuple:
    """Sort key of the grids: the isotropic voxel sizes from the finest, then the others by
    label ("0.5x0.5x2" before "native")."""
    side = isotropic_side(spacing)
    return (side is None, side or 0.0, str(spacing))
