"""What a reader can act on, computed from the run: how close each tool comes to the reference
per metric and voxel size, which tools to use or avoid per metric and grid kind, and how far a
number published with a tool can lie from the reference's.

Every statistic is of Δ = tool − reference on the mask pairs (`statistics.deltas`), in display
units (mm; percentage points for NSD, BIoU and DSC). Pairs without a reference score are left
out (they say nothing about the tool); a failed or non-finite Δ counts against the tool.

The thresholds are stated here and nowhere else: `TOLERANCE`, `MOST_PAIRS`, `INTERVAL`,
`MIN_CATEGORY_PAIRS`, `VOXEL_RATIO_TOLERANCE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from study.analysis import statistics as st
from study.analysis.tables import shorten
from study.records import METRICS, NATIVE, RELATIVE_METRICS, is_anisotropic, spacing_title
from study.records import parse_spacing_label as voxel_sides
from study.scoring import grid_check

TOLERANCE: dict[str, float] = {"mm": 0.5, "%pt": 2.0}
"""|Δ| within which a tool's score stands in for the reference's (display units): half a
millimetre for the distances, 2 percentage points for NSD, BIoU and DSC."""

MOST_PAIRS = 0.9
"""A tool is recommended for a metric and grid kind when at least this share of the pairs has
|Δ| within `TOLERANCE` (a failed or non-finite Δ is not within)."""

INTERVAL: tuple[float, float] = (2.5, 97.5)
"""Percentiles of Δ bounding the central 95 % of the pairs: the interval table's bounds
(numpy's default linear interpolation between order statistics)."""

MIN_CATEGORY_PAIRS = 20
"""Fewest finite Δ of one OAR category for the interval table to give that category a row."""

VOXEL_RATIO_TOLERANCE = 0.1
"""A tool is measured to ignore the voxel size when, over the isotropic voxel sizes s of the run
(at least two), the median r(s) of its distances over the reference's scales as 1 / s: s r(s)
is the same at every s within this relative tolerance (distances in voxels, not millimetres)."""

GRID_KINDS: tuple[str, ...] = ("isotropic", "anisotropic", "native")


def grid_kind(spacing: str) -> str:
    """ "anisotropic" for a voxel size with sides of different lengths, "native" for the
    native grid (a voxel size per pair), else "isotropic"."""
    if spacing == NATIVE:
        return "native"
    return GRID_KINDS[int(is_anisotropic(spacing))]


def tolerance_text(unit: str) -> str:
    """ "±0.5 mm" or "±2 %pt"."""
    return f"±{TOLERANCE[unit]:g} {unit}"


def error_messages(scores: pd.DataFrame, tool: str) -> dict[str, str]:
    """Per metric, the first message of a tool's failed scores, cut to its first clause."""
    failed = st.measured(scores)
    failed = failed.loc[(failed["tool"] == tool) & (failed["status"] == "error")]
    return {
        metric: shorten(str(rows["message"].iloc[0]) or "no message")
        for metric, rows in failed.groupby("metric")
    }


# --------------------------------------------------------------------------------------------
# Δ per pair and its summary
# --------------------------------------------------------------------------------------------


def pair_deltas(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> pd.DataFrame:
    """Δ of every scored pair that has a reference score (`statistics.deltas`), with `scaled`
    (Δ in display units), `unit`, `grid_kind` and `within` (finite and |Δ| ≤ `TOLERANCE`)."""
    delta = st.deltas(scores, tools)
    delta = delta.loc[delta["kind"] != "no_reference"].reset_index(drop=True)
    unit = delta["metric"].map(st.display_unit)
    scaled = delta["delta"] * delta["metric"].map(st.display_scale)
    finite = delta["kind"] == "finite"
    return delta.assign(
        scaled=scaled,
        unit=unit,
        grid_kind=delta["spacing"].map(grid_kind),
        within=finite & (scaled.abs() <= unit.map(TOLERANCE)),
    )


def agreement(delta: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group of `pair_deltas` rows: n pairs; n_failed and n_nonfinite; of the finite Δ
    (n_finite) the median, SD (ddof = 1), worst (the Δ of the largest |Δ|, with its sign) and
    the OAR category it occurred in, and the `INTERVAL` percentiles lo and hi; `within`, the
    share of all n pairs with |Δ| ≤ `TOLERANCE`."""
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
                "within": float(group["within"].mean()),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Measured reasons to avoid a tool
# --------------------------------------------------------------------------------------------


def ignores_voxel_size(delta: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(tool, metric) -> the measured sign that the tool ignores the voxel size, for the
    distance metrics. With r(s) the median ratio of the tool's value to the reference's at
    isotropic voxel size s, a tool computing in voxels has r(s) = c / s for its own c, so s r(s)
    is the same at every s (within `VOXEL_RATIO_TOLERANCE`), while a tool in millimetres keeps
    r(s) itself roughly constant. Comparing sizes with each other, not r(s) with 1 / s, keeps a
    tool whose quantity differs from the reference's by a factor that happens to be near 1 / s
    at one size from being accused. Nothing can be said with fewer than two isotropic sizes."""
    finite = delta.loc[(delta["kind"] == "finite") & ~delta["metric"].isin(RELATIVE_METRICS)]
    finite = finite.loc[
        (finite["value_reference"].astype(float) > 0) & (finite["grid_kind"] == "isotropic")
    ]
    found = {}
    for (tool, metric), rows in finite.groupby(["tool", "metric"], sort=False):
        ratios = (rows["value"] / rows["value_reference"]).groupby(rows["spacing"]).median()
        if len(ratios) < 2:
            continue
        in_voxels = ratios.to_numpy() * ratios.index.map(lambda s: voxel_sides(s)[0]).to_numpy()
        if np.all(np.abs(in_voxels / in_voxels[0] - 1) <= VOXEL_RATIO_TOLERANCE):
            at = ", ".join(f"{r:.2f} × at {spacing_title(s)}" for s, r in ratios.items())
            found[tool, metric] = (
                f"ignores the voxel size: its {metric} is the reference's {at} "
                "(distances in voxels)"
            )
    return found


def field_of_view_dependence(rows: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(tool, metric) -> how its score changed between cropped and scan-sized grids of the
    same pairs (`scoring.grid_check`), for those that changed."""
    if rows is None or rows.empty:
        return {}
    return field_of_view_changes(grid_check.grid_differences(rows))


def field_of_view_changes(differences: pd.DataFrame) -> dict[tuple[str, str], str]:
    """`field_of_view_dependence` of the grid check's differences, already computed
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
    tool raised, for the tools that raise on an empty mask."""
    if edge_cases is None or edge_cases.empty:
        return {}
    raised = edge_cases.loc[(edge_cases["output"] == "error") & (edge_cases["case"] != "S")]
    return {
        (tool, metric): f"raises an error on empty masks ({', '.join(sorted(rows['case']))})"
        for (tool, metric), rows in raised.groupby(["tool", "metric"])
    }


def declared_spacing_ignored(tool: str, metric: str) -> str:
    """The adapter's own note that the tool ignores the voxel size for `metric` ("" if none)."""
    from adapters import REGISTRY

    adapter = REGISTRY.get(tool)
    if adapter is not None and metric in adapter.ignores_spacing:
        return f"its {metric} ignores the voxel size (the adapter's note)"
    return ""


# --------------------------------------------------------------------------------------------
# Recommendations
# --------------------------------------------------------------------------------------------

RECOMMENDATION_COLUMNS: tuple[str, ...] = (
    "metric",
    "grid_kind",
    "spacings",
    "tool",
    "verdict",
    "rank",
    "unit",
    "n",
    "within",
    "median",
    "worst",
    "worst_category",
    "n_failed",
    "n_nonfinite",
    "reasons",
    "cautions",
)
"""Columns of the recommendations table: verdict "use" (ranked by |worst|) or "avoid" (with
the measured reasons, "; "-joined); cautions hold what a user of a recommended tool must handle
(empty masks)."""


def bias_reason(row: Mapping) -> str:
    """Why a tool misses the tolerance: its share within, the median and worst Δ."""
    unit = row["unit"]
    if row["n_finite"] == 0:
        return f"no finite Δ on {row['n']} pairs"
    direction = (
        "over-estimates"
        if row["median"] > TOLERANCE[unit]
        else "under-estimates"
        if row["median"] < -TOLERANCE[unit]
        else "scatters"
    )
    return (
        f"{direction}: {row['within']:.0%} of {row['n']} pairs within {tolerance_text(unit)}, "
        f"median Δ {st.signed(row['median'])}, worst {st.signed(row['worst'])} {unit} "
        f"({row['worst_category']} OARs)"
    )


def verdict_reasons(row: Mapping, measured: Mapping[str, Mapping], message: str) -> list[str]:
    """Every measured reason to avoid one tool for one metric and grid kind (none: use it).
    `measured`: the (tool, metric) findings of `ignores_voxel_size` ("spacing") and
    `field_of_view_dependence` ("field of view"); `message`: the tool's error, if it failed."""
    key = (row["tool"], row["metric"])
    reasons = []
    if row["within"] < MOST_PAIRS:
        reasons.append(bias_reason(row))
    if row["n_failed"]:
        reasons.append(f"fails on {row['n_failed']} of {row['n']} pairs ({message})")
    if row["n_nonfinite"]:
        reasons.append(f"{row['n_nonfinite']} of {row['n']} Δ not finite")
    reasons += [
        measured[kind][key] for kind in ("spacing", "field of view") if key in measured[kind]
    ]
    return reasons


def recommendations(
    scores: pd.DataFrame,
    grid_checked: pd.DataFrame | None = None,
    edge_cases: pd.DataFrame | None = None,
    tools: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per metric of `statistics.TESTED_METRICS` and grid kind, every scored tool: "use" when
    at least `MOST_PAIRS` of the pairs lie within `TOLERANCE`, it failed on none and neither
    ignores the voxel size nor depends on the field of view (measured); ranked by |worst Δ|.
    Else "avoid", with each measured reason. Columns: `RECOMMENDATION_COLUMNS`."""
    delta = pair_deltas(scores, tools)
    delta = delta.loc[delta["metric"].isin(st.TESTED_METRICS)]
    if delta.empty:
        return pd.DataFrame(columns=list(RECOMMENDATION_COLUMNS))
    measured = {
        "spacing": ignores_voxel_size(delta),
        "field of view": field_of_view_dependence(grid_checked),
    }
    empty = empty_mask_errors(edge_cases)
    messages = {tool: error_messages(scores, tool) for tool in delta["tool"].unique()}
    spacings = delta.groupby("grid_kind")["spacing"].agg(lambda s: list(dict.fromkeys(s)))
    rows = []
    for row in agreement(delta, ["metric", "grid_kind", "tool"]).to_dict("records"):
        key = (row["tool"], row["metric"])
        reasons = verdict_reasons(row, measured, messages[row["tool"]].get(row["metric"], ""))
        cautions = [text for text in (empty.get(key), declared_spacing_ignored(*key)) if text]
        rows.append(
            {
                **row,
                "spacings": ", ".join(spacing_title(s) for s in spacings[row["grid_kind"]]),
                "verdict": "avoid" if reasons else "use",
                "reasons": "; ".join(reasons),
                "cautions": "; ".join(cautions),
            }
        )
    table = pd.DataFrame(rows)
    return rank(table)[list(RECOMMENDATION_COLUMNS)]


def rank(table: pd.DataFrame) -> pd.DataFrame:
    """Order per metric (table order) and grid kind: the tools to use by |worst Δ|, numbered
    from 1, then the tools to avoid in tool order."""
    metric_rank = {m: i for i, m in enumerate(st.TESTED_METRICS)}
    tool_rank = {t: i for i, t in enumerate(st.ordered_tools(table["tool"]))}
    table = table.assign(
        _metric=table["metric"].map(metric_rank),
        _grid=table["grid_kind"].map(GRID_KINDS.index),
        _avoid=table["verdict"] == "avoid",
        _worst=np.where(table["verdict"] == "use", table["worst"].abs(), np.inf),
        _tool=table["tool"].map(tool_rank),
    ).sort_values(["_metric", "_grid", "_avoid", "_worst", "_tool"])
    table["rank"] = table.groupby(["metric", "grid_kind"]).cumcount() + 1
    table.loc[table["verdict"] == "avoid", "rank"] = 0
    return table.drop(columns=["_metric", "_grid", "_avoid", "_worst", "_tool"])


def listed(names: Sequence[str], shown: int) -> str:
    """ "A, B, C and 2 more" ("none" for no name)."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more if names else "none"


def summary_lines(table: pd.DataFrame, shown: int = 3) -> list[str]:
    """One line per metric: per grid kind the best `shown` tools to use with their worst Δ,
    and the first `shown` to avoid (their reasons: the recommendations)."""
    lines = []
    for metric, rows in table.groupby("metric", sort=False):
        parts = []
        for kind, group in rows.groupby("grid_kind", sort=False):
            used = [
                f"{st.tool_label(r.tool)} (worst {st.signed(r.worst)})"
                for r in group.loc[group["verdict"] == "use"].itertuples()
            ]
            avoided = [st.tool_label(t) for t in group.loc[group["verdict"] == "avoid", "tool"]]
            parts.append(f"{kind}: use {listed(used, shown)}; avoid {listed(avoided, shown)}")
        unit = rows["unit"].iloc[0]
        lines.append(f"**{metric}** ({tolerance_text(unit)}) — " + " · ".join(parts) + ".")
    return lines


def recommendations_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Display of one metric's recommendations: grid kind, rank, tool, the numbers, and the
    verdict with its reasons or cautions."""
    return pd.DataFrame(
        {
            "Grid": rows["grid_kind"],
            "Rank": rows["rank"].map(lambda r: str(r) if r else "–"),
            "Tool": rows["tool"].map(st.tool_label),
            "Pairs": rows["n"],
            "Within": rows["within"].map(lambda w: f"{w:.0%}"),
            "Median Δ": rows["median"].map(st.signed),
            "Worst Δ": rows["worst"].map(st.signed),
            "Verdict": [
                f"avoid: {r.reasons}"
                if r.verdict == "avoid"
                else ("use" + (f" ({r.cautions})" if r.cautions else ""))
                for r in rows.itertuples()
            ],
        }
    )


# --------------------------------------------------------------------------------------------
# How far off is a published number
# --------------------------------------------------------------------------------------------


def intervals(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> pd.DataFrame:
    """Per tool, metric and voxel size, the `INTERVAL` percentiles of the finite Δ over all
    pairs (category "all") and per OAR category with at least `MIN_CATEGORY_PAIRS` finite Δ.
    A number v published with the tool then corresponds to a reference value in
    [v − hi, v − lo] on 95 % of this study's pairs."""
    delta = pair_deltas(scores, tools)
    overall = agreement(
        delta.assign(category_of="all"), ["tool", "metric", "spacing", "category_of"]
    )
    by_category = agreement(
        delta.assign(category_of=delta["category"]), ["tool", "metric", "spacing", "category_of"]
    )
    by_category = by_category.loc[by_category["n_finite"] >= MIN_CATEGORY_PAIRS]
    table = pd.concat([overall, by_category], ignore_index=True).rename(
        columns={"category_of": "category"}
    )
    table = table.loc[table["n_finite"] > 0]
    order = {t: i for i, t in enumerate(st.ordered_tools(table["tool"]))}
    metric_order = {m: i for i, m in enumerate(METRICS)}
    table = table.assign(
        _t=table["tool"].map(order),
        _m=table["metric"].map(metric_order),
        _c=table["category"] != "all",
    ).sort_values(["_t", "_m", "_c", "category"], kind="stable")
    return table[
        ["tool", "metric", "unit", "spacing", "category", "n_finite", "lo", "hi", "median"]
    ]
