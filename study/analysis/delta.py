"""Δ, the difference of a tool's score to the reference's, and its summaries.

Δ = m_tool − m_reference, matched on (dataset, case, oar, spacing, metric). Positive Δ is an
over-estimate: pessimistic for the distance metrics (mm), optimistic for NSD, BIoU and DSC,
which are reported in percentage points (Δ × 100).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from study.analysis.labels import display_scale, display_unit
from study.analysis.read import check_scores
from study.records import REFERENCE, REFERENCE_VARIANTS

REFERENCE_MESHING_VARIANTS: tuple[str, ...] = tuple(
    name for name in REFERENCE_VARIANTS if name != REFERENCE
)
"""Reference variants compared against `REFERENCE` in Table A4."""

MATCH_KEYS: tuple[str, ...] = ("dataset", "case", "oar", "spacing", "metric")
"""Columns that identify one mask pair and metric; Δ and paired tests match on these."""

DELTA_KINDS: tuple[str, ...] = ("finite", "nonfinite", "failed", "undefined", "no_reference")
"""finite: both scores finite; nonfinite: the tool's score NaN or inf (Δ undefined or
infinite); failed: the tool has status error/unavailable; undefined: the reference's own value
is inf or NaN (an empty mask), so Δ says nothing of the tool's accuracy, whatever the tool
answered; no_reference: the reference row is missing or failed, so Δ cannot be formed."""

NEGLIGIBLE: dict[str, float] = {"mm": 0.01, "%pt": 0.1}
"""|Δ| at or below this (in display units) counts as agreeing with the reference."""


def is_placeholder(scores: pd.DataFrame) -> pd.Series:
    """Rows that stand for a whole tool rather than one score: an unavailable tool is recorded
    once, with empty case, spacing and metric."""
    blank = pd.Series(False, index=scores.index)
    for column in ("case", "spacing", "metric"):
        blank |= scores[column].isna() | (scores[column] == "")
    return blank


def measured(scores: pd.DataFrame) -> pd.DataFrame:
    """Score rows of actual mask pairs (placeholders of unavailable tools removed)."""
    return scores.loc[~is_placeholder(scores)]


def unavailable_tools(scores: pd.DataFrame) -> dict[str, str]:
    """Tools with no score at all because they are not available here, and why."""
    scored = set(measured(scores)["tool"])
    rows = scores.loc[is_placeholder(scores) & ~scores["tool"].isin(scored)]
    return {tool: str(group["message"].iloc[0]) for tool, group in rows.groupby("tool")}


def deltas(
    scores: pd.DataFrame, tools: Sequence[str] | None = None, yardstick: str = REFERENCE
) -> pd.DataFrame:
    """Δ = value(tool) − value(yardstick) for every score row of the given tools.

    Returns one row per tool score with the match keys, category, tool, tool_version, the two
    values, `delta` (in the metric's own unit) and `kind` (see `DELTA_KINDS`). Rows whose Δ is
    not finite are kept and classified, never dropped.
    """
    check_scores(scores)
    scores = measured(scores)
    if tools is None:
        tools = [
            t
            for t in scores["tool"].unique()
            if t != yardstick and t not in REFERENCE_MESHING_VARIANTS
        ]
    reference = scores.loc[scores["tool"] == yardstick, [*MATCH_KEYS, "value", "status"]]
    if reference.duplicated(list(MATCH_KEYS)).any():
        raise ValueError(f"scores table has duplicate {yardstick!r} rows for one pair and metric")
    reference = reference.rename(columns={"value": "value_reference", "status": "status_reference"})
    rows = scores.loc[scores["tool"].isin(list(tools))]
    merged = rows.merge(reference, on=list(MATCH_KEYS), how="left")
    merged["delta"] = merged["value"].astype(float) - merged["value_reference"].astype(float)
    merged["kind"] = _delta_kind(merged)
    columns = [
        *MATCH_KEYS,
        "category",
        "tool",
        "tool_version",
        "value",
        "status",
        "value_reference",
        "status_reference",
        "delta",
        "kind",
    ]
    return merged[columns].reset_index(drop=True)


def _delta_kind(merged: pd.DataFrame) -> pd.Series:
    """Classify each row of a tool/reference merge into one of `DELTA_KINDS`."""
    failed = merged["status"].isin(["error", "unavailable"])
    no_reference = merged["status_reference"].isna() | merged["status_reference"].isin(
        ["error", "unavailable"]
    )
    undefined = ~np.isfinite(merged["value_reference"].astype(float).to_numpy())
    finite = np.isfinite(merged["delta"].to_numpy(dtype=float))
    kind = np.select(
        [no_reference, undefined, failed, finite],
        ["no_reference", "undefined", "failed", "finite"],
        default="nonfinite",
    )
    return pd.Series(kind, index=merged.index)


def summarize_deltas(delta_table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group: n and the count of each kind; min, max, mean and SD (ddof = 1) of finite Δ.

    Statistics are in display units (`display_scale`): mm, or percentage points for NSD, BIoU
    and DSC. A group with no finite Δ has NaN statistics and its counts say why.
    """
    if "metric" not in by:
        raise ValueError("summaries must be grouped by 'metric' (units differ between metrics)")
    table = delta_table.assign(
        scaled=delta_table["delta"] * delta_table["metric"].map(display_scale)
    )
    counts = (
        table.groupby([*by, "kind"], observed=True)
        .size()
        .unstack("kind", fill_value=0)
        .reindex(columns=list(DELTA_KINDS), fill_value=0)
    )
    counts.columns = [f"n_{kind}" for kind in counts.columns]
    finite = table.loc[table["kind"] == "finite"].groupby(list(by), observed=True)["scaled"]
    stats = finite.agg(["min", "max", "mean", "std"]).rename(columns={"std": "sd"})
    summary = counts.join(stats, how="left")
    summary.insert(0, "n", counts.sum(axis=1))
    summary = summary.reset_index()
    summary["unit"] = summary["metric"].map(display_unit)
    return summary
