"""The paper's tables, built from the scores table and the edge-case records.

Each table has a numeric form (written as CSV, one row per statistic group, for re-analysis)
and a display form (strings laid out as in the paper) rendered to Markdown, LaTeX and HTML
(the HTML goes into the Snakemake report).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from study.analysis.delta import (
    REFERENCE_MESHING_VARIANTS,
    deltas,
    measured,
    summarize_deltas,
    unavailable_tools,
)
from study.analysis.edge_comparison import environment_error
from study.analysis.labels import (
    TOOL_GROUPS,
    display_scale,
    display_unit,
    format_number,
    group_title,
    ordered_spacings,
    ordered_tools,
    shorten,
    shows_groups,
    tool_group,
    tool_label,
    tool_versions,
)
from study.analysis.read import edge_case_records, load_edge_cases, read_scores
from study.analysis.rendering import Table, write_table
from study.analysis.settings import AnalysisSettings
from study.analysis.significance import ALPHA, bonferroni_factor_of, implementations, wilcoxon_table
from study.oars import ordered_categories
from study.records import BRACKET_COLUMNS, EDGE_CASES, REFERENCE, spacing_title
from vocabulary import METRIC_KEYS, TESTED_KEYS

# --------------------------------------------------------------------------------------------
# Cells of the Δ tables
# --------------------------------------------------------------------------------------------


def range_cell(row: Mapping) -> str:
    """ "min | max" of one summary row."""
    return f"{format_number(row['min'])} | {format_number(row['max'])}"


def mean_cell(row: Mapping) -> str:
    """ "mean ± SD" of one summary row; SD is "–" when only one finite Δ exists."""
    return f"{format_number(row['mean'])} ± {format_number(row['sd'])}"


def excluded_cell(row: Mapping) -> str:
    """Counts of Δ left out of the statistics, by reason; "0" when none was left out."""
    parts = []
    if row["n_nonfinite"]:
        parts.append(f"{int(row['n_nonfinite'])} non-finite")
    if row["n_failed"]:
        parts.append(f"{int(row['n_failed'])} failed")
    if row["n_undefined"]:
        parts.append(f"{int(row['n_undefined'])} ref. undefined")
    if row["n_no_reference"]:
        parts.append(f"{int(row['n_no_reference'])} no ref.")
    return ", ".join(parts) or "0"


# --------------------------------------------------------------------------------------------
# Δ tables (A1, A2, A4)
# --------------------------------------------------------------------------------------------


def _delta_display(
    summary: pd.DataFrame,
    column_key: str,
    column_order: Sequence[str],
    metrics: Sequence[str],
    column_title,
) -> pd.DataFrame:
    """Rows (metric, tool), columns per value of `column_key`: range, mean ± SD, excluded."""
    tools = ordered_tools(summary["tool"])
    grouped = shows_groups(tools)
    indexed = summary.set_index(["metric", "tool", column_key])
    rows = []
    for metric in metrics:
        for tool in tools:
            if not any((metric, tool, c) in indexed.index for c in column_order):
                continue
            row = {
                "Δ metric": f"Δ{metric} ({display_unit(metric)})",
                **({"Group": group_title(tool)} if grouped else {}),
                "Tool": tool_label(tool),
            }
            for column in column_order:
                title = column_title(column)
                if (metric, tool, column) not in indexed.index:
                    row.update(
                        {
                            f"{title}: min | max": "",
                            f"{title}: mean ± SD": "",
                            f"{title}: excluded": "n/a",
                        }
                    )
                    continue
                stats = indexed.loc[(metric, tool, column)]
                row.update(
                    {
                        f"{title}: min | max": range_cell(stats),
                        f"{title}: mean ± SD": mean_cell(stats),
                        f"{title}: excluded": excluded_cell(stats),
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)


def with_group(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a `group` column (a `statistics.TOOL_GROUPS` key) after its `tool` column:
    the CSV says which tools are the paper's and which came since, one row per statistic."""
    grouped = frame.copy()
    grouped.insert(grouped.columns.get_loc("tool") + 1, "group", grouped["tool"].map(tool_group))
    return grouped


def groups_note(tools: Sequence[str]) -> list[str]:
    """What the Group column means, for a table that shows one (`statistics.shows_groups`)."""
    if not shows_groups(tools):
        return []
    shown = {tool_group(t) for t in tools}
    meaning = {
        "paper": "the eleven tools of the paper",
        "later": "tools added since the paper (not in the paper's tables)",
        "cross-check": "a check of the reference, not a tool the paper compared",
        "other": "a tool without an adapter here",
    }
    return [
        "Group: "
        + "; ".join(f"{TOOL_GROUPS[g]}: {meaning[g]}" for g in meaning if g in shown)
        + "."
    ]


def _versions_note(scores: pd.DataFrame, tools: Sequence[str]) -> str:
    """ "Tool versions: MONAI 1.6.1; ..." for the tools of a table."""
    scores = measured(scores)
    return "Tool versions: " + tool_versions(scores.loc[scores["tool"].isin(list(tools))]) + "."


def _delta_notes(n_pairs: int) -> list[str]:
    return [
        "Δ = tool − reference on the same mask pair; positive Δ over-estimates the metric. "
        "NSD, BIoU and DSC in percentage points (%pt), distances in mm; SD with ddof = 1.",
        "Statistics use finite Δ only; 'excluded' counts the rest: non-finite (NaN or inf on "
        "either side), failed (tool error or unavailable), no ref. (reference missing).",
        f"Mask pairs: {n_pairs}.",
    ]


def _n_pairs(scores: pd.DataFrame) -> int:
    return int(measured(scores)[["dataset", "case", "oar"]].drop_duplicates().shape[0])


def unavailable_note(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> list[str]:
    """ "Not available here: Anima (why)." when configured tools have no scores at all."""
    missing = {t: m for t, m in unavailable_tools(scores).items() if tools is None or t in tools}
    if not missing:
        return []
    return [
        "Not available here (no scores): "
        + "; ".join(f"{tool_label(t)} ({shorten(missing[t])})" for t in ordered_tools(missing))
        + "."
    ]


def bracket_note(scores: pd.DataFrame, metrics: Sequence[str] = TESTED_KEYS) -> list[str]:
    """The reference's own uncertainty, when the study recorded its proven brackets
    (`reference.brackets`): per metric the widest bracket, in Δ's units, and the voxel size
    it was on. A mean Δ inside that width cannot be told from zero by this reference."""
    low, high = BRACKET_COLUMNS
    if low not in scores:
        return []
    rows = scores[(scores["tool"] == REFERENCE) & np.isfinite(scores[low] - scores[high])]
    rows = rows[rows["metric"].isin(list(metrics))]
    if rows.empty:
        return []
    rows = rows.assign(width=(rows[high] - rows[low]) * rows["metric"].map(display_scale))
    order = {spacing: rank for rank, spacing in enumerate(ordered_spacings(rows["spacing"]))}
    rows = rows.sort_values("spacing", key=lambda s: s.map(order), kind="stable")
    widest = rows.loc[rows.groupby("metric", sort=False)["width"].idxmax()].set_index("metric")
    parts = [
        f"{metric} {widest.at[metric, 'width']:.2g} {display_unit(metric)} "
        f"(at {spacing_title(widest.at[metric, 'spacing'])})"
        for metric in metrics
        if metric in widest.index
    ]
    return [
        "The reference's own uncertainty (its proven brackets, reference.brackets), the "
        "widest bracket per metric: "
        + ", ".join(parts)
        + ". A mean Δ within that width cannot be told from zero by this reference."
    ]


def _metrics_present(frame: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    present = set(frame["metric"])
    return [m for m in metrics if m in present]


def table_a1(
    scores: pd.DataFrame, tools: Sequence[str] | None = None, spacings: Sequence[str] | None = None
) -> Table:
    """Table A1: Δ per voxel size, metric and tool (min | max, mean ± SD, excluded counts)."""
    delta = deltas(scores, tools)
    summary = summarize_deltas(delta, ["metric", "spacing", "tool"])
    order = ordered_spacings(summary["spacing"], spacings)
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "spacing", order, metrics, spacing_title)
    notes = (
        _delta_notes(_n_pairs(scores))
        + groups_note(summary["tool"].unique())
        + [_versions_note(scores, delta["tool"].unique())]
        + unavailable_note(scores, tools)
        + bracket_note(scores, metrics)
    )
    return Table(
        "table_a1",
        "Table A1: Δ against the reference per voxel size",
        with_group(_sort_numeric(summary, ["metric", "tool", "spacing"], order)),
        display,
        notes,
    )


def table_a2(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> Table:
    """Table A2: Δ over all voxel sizes, stratified by OAR category."""
    delta = deltas(scores, tools)
    summary = summarize_deltas(delta, ["metric", "category", "tool"])
    order = ordered_categories(summary["category"])
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "category", order, metrics, str)
    notes = _delta_notes(_n_pairs(scores)) + [
        "All voxel sizes pooled.",
        *groups_note(summary["tool"].unique()),
        _versions_note(scores, delta["tool"].unique()),
        *unavailable_note(scores, tools),
    ]
    return Table(
        "table_a2",
        "Table A2: Δ against the reference by size category",
        with_group(_sort_numeric(summary, ["metric", "tool", "category"], order)),
        display,
        notes,
    )


def table_a4(scores: pd.DataFrame, spacings: Sequence[str] | None = None) -> Table:
    """Table A4: Δ of the reference meshed with marching cubes / surface nets against the
    reference's discrete marching cubes."""
    variants = [v for v in REFERENCE_MESHING_VARIANTS if v in set(scores["tool"])]
    if not variants:
        raise ValueError(
            "scores table has no reference meshing variants "
            f"{list(REFERENCE_MESHING_VARIANTS)}; Table A4 needs them"
        )
    delta = deltas(scores, variants)
    summary = summarize_deltas(delta, ["metric", "spacing", "tool"])
    order = ordered_spacings(summary["spacing"], spacings)
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "spacing", order, metrics, spacing_title)
    notes = [
        "Δ = variant − reference (discrete marching cubes) on the same mask pair; NSD and "
        "BIoU in percentage points.",
        f"Mask pairs: {_n_pairs(scores)}.",
    ]
    return Table(
        "table_a4",
        "Table A4: Δ of other meshing algorithms against discrete marching cubes",
        _sort_numeric(summary, ["metric", "tool", "spacing"], order),
        display,
        notes,
    )


def _sort_numeric(summary: pd.DataFrame, keys: Sequence[str], last_order: Sequence[str]):
    """Numeric table sorted by metric, tool (study order) and the last key's given order."""
    metric_rank = {m: i for i, m in enumerate(METRIC_KEYS)}
    tool_rank = {t: i for i, t in enumerate(ordered_tools(summary["tool"]))}
    last_rank = {v: i for i, v in enumerate(last_order)}
    ranked = summary.assign(
        _m=summary["metric"].map(metric_rank),
        _t=summary["tool"].map(tool_rank),
        _l=summary[keys[-1]].map(last_rank),
    )
    return (
        ranked.sort_values(["_m", "_t", "_l"])
        .drop(columns=["_m", "_t", "_l"])
        .reset_index(drop=True)
    )


# --------------------------------------------------------------------------------------------
# Wilcoxon table
# --------------------------------------------------------------------------------------------


def p_cell(row: Mapping) -> str:
    """Corrected p as text; marks identical and untestable pairs instead of a number."""
    if row["status"] == "untestable":
        return "no common finite scores"
    if row["status"] == "identical":
        return "identical (1)"
    return f"{row['p_corrected']:.3g}"


def table_wilcoxon(wilcoxon: pd.DataFrame, n_implementations: int) -> Table:
    """Pairwise Wilcoxon table: one row per voxel size, metric and pair, corrected p."""
    if wilcoxon.empty:
        raise ValueError("Wilcoxon table is empty: no implementations or voxel sizes")
    factor = int(wilcoxon["factor"].iloc[0])
    display = pd.DataFrame(
        {
            "Voxel size": wilcoxon["spacing"].map(spacing_title),
            "Metric": wilcoxon["metric"],
            "Implementation A": wilcoxon["tool_a"].map(tool_label),
            "Implementation B": wilcoxon["tool_b"].map(tool_label),
            "n": wilcoxon["n_common"].astype(int),
            "p (raw)": [("–" if not np.isfinite(p) else f"{p:.3g}") for p in wilcoxon["p_value"]],
            f"p × {factor:,} (capped at 1)": [p_cell(r) for r in wilcoxon.to_dict("records")],
            "Significant": np.where(wilcoxon["significant"], "yes", "no"),
        }
    )
    n_metrics = wilcoxon["metric"].nunique()
    n_spacings = wilcoxon["spacing"].nunique()
    notes = [
        f"Paired two-sided Wilcoxon signed-rank tests (scipy), Bonferroni factor {factor:,} = "
        f"{n_spacings} voxel sizes × {n_metrics} metrics × C({n_implementations}, 2) pairs; "
        f"significant when p × {factor:,} < {ALPHA}.",
        "n = mask pairs where both implementations gave a finite score. 'identical': every "
        "paired difference is 0. 'no common finite scores': not testable (e.g. a tool that "
        "lacks the metric).",
    ]
    return Table(
        "table_wilcoxon",
        "Pairwise Wilcoxon signed-rank tests, Bonferroni-corrected",
        wilcoxon,
        display,
        notes,
    )


# --------------------------------------------------------------------------------------------
# Table A3: edge cases
# --------------------------------------------------------------------------------------------

EDGE_SYMBOLS: dict[str, str] = {
    "0": "0",
    "1": "1",
    "nan": "NaN",
    "inf": "∞",
    "-inf": "−∞",
    "float_max": "∞*",
    "error": "E",
    "empty": "E*",
    "unchanged": "✓",
    "changed": "✗",
}
"""Display of each output class; "number" shows the value itself."""

EDGE_METRICS: tuple[str, ...] = ("DSC", *(m for m in METRIC_KEYS if m != "DSC"))
"""Table A3's metric order, as the paper's: DSC first."""

ENVIRONMENT_MARK = "†"
"""Appended to E when the error came from the environment, not the tool's handling."""

EDGE_LEGEND = (
    "NaN: not a number; ∞*: a very large number standing in for infinity; E: error; "
    f"E{ENVIRONMENT_MARK}: an error raised by the environment rather than by the tool's "
    "handling (a library function the tool calls is missing here, e.g. removed in NumPy 2); "
    "E*: empty output without an error message; W: warning printed; ✓/✗: score "
    "unchanged/changed when A and B are swapped; a number is the value returned; "
    "blank: metric not offered by the tool."
)


def edge_cell(record: Mapping) -> str:
    """Display of one edge-case record: the output class (or value) plus W if warned."""
    output = record["output"]
    if output == "number":
        text = format_number(float(record.get("value") or "nan"))
    else:
        text = EDGE_SYMBOLS[output]
    if output == "error" and environment_error(record.get("message")):
        text += ENVIRONMENT_MARK
    return text + ("W" if record.get("warned") else "")


def table_a3(documents: Sequence[Mapping]) -> Table:
    """Table A3: per tool and metric, O1 / O2 / O3 / S in the paper's layout (DSC included)."""
    records = edge_case_records(documents)
    numeric = records.assign(cell=[edge_cell(record) for record in records.to_dict("records")])
    metrics = [m for m in EDGE_METRICS if m in set(numeric["metric"])]
    display_rows = []
    tool_order = ordered_tools([d["tool"] for d in documents])
    grouped = shows_groups(tool_order)
    for document in sorted(documents, key=lambda d: tool_order.index(d["tool"])):
        cells = numeric.loc[numeric["tool"] == document["tool"]].set_index(["metric", "case"])
        # A tool missing here has no version and no records: say so rather than print None.
        version = (
            document["version"] if document.get("status") != "unavailable" else "not installed"
        )
        row = {
            **({"Group": group_title(document["tool"])} if grouped else {}),
            "Tool": tool_label(document["tool"]),
            "Version": str(version),
        }
        for metric in metrics:
            for case in EDGE_CASES:
                key = (metric, case)
                row[f"{metric} {case}"] = cells.loc[key, "cell"] if key in cells.index else ""
        display_rows.append(row)
    notes = [
        "O1: A empty; O2: B empty; O3: both empty; S: A and B swapped.",
        EDGE_LEGEND,
        *groups_note(tool_order),
    ]
    return Table(
        "table_a3",
        "Table A3: edge-case handling",
        with_group(numeric),
        pd.DataFrame(display_rows),
        notes,
    )


# --------------------------------------------------------------------------------------------
# Entry points of the workflow rules (paths in, files out), one per rule
# --------------------------------------------------------------------------------------------


def write_all(table: Table, outputs: Mapping[str, str]) -> Table:
    """Write a table's CSV, Markdown, LaTeX and (when asked) HTML renderings."""
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table


def make_table_a1(scores_path, outputs: Mapping[str, str], settings: AnalysisSettings) -> Table:
    """Table A1 (Δ per voxel size) of the configured tools from the scores file."""
    scores = read_scores(scores_path)
    tools = settings.present_tools_and_checks(scores["tool"]) or None
    return write_all(table_a1(scores, tools, settings.grid_labels), outputs)


def make_table_a2(scores_path, outputs: Mapping[str, str], settings: AnalysisSettings) -> Table:
    """Table A2 (Δ by OAR category) of the configured tools from the scores file."""
    scores = read_scores(scores_path)
    tools = settings.present_tools_and_checks(scores["tool"]) or None
    return write_all(table_a2(scores, tools), outputs)


def make_table_a4(scores_path, outputs: Mapping[str, str], settings: AnalysisSettings) -> Table:
    """Table A4 (the reference's meshing variants) from the scores file."""
    return write_all(table_a4(read_scores(scores_path), settings.grid_labels), outputs)


def make_wilcoxon_table(scores_path, outputs: Mapping[str, str], settings: AnalysisSettings):
    """Run every pairwise test with the configuration's Bonferroni factor; write the table."""
    scores = read_scores(scores_path)
    names = implementations(settings.tools)
    result = wilcoxon_table(scores, names, settings.grid_labels, bonferroni_factor_of(settings))
    table = table_wilcoxon(result, len(names))
    table.notes += unavailable_note(scores, names)
    return write_all(table, outputs)


def make_edge_case_table(paths: Sequence[str | Path], outputs: Mapping[str, str]) -> Table:
    """Table A3 from the edge-case JSON files; writes csv/md/tex/html outputs."""
    return write_all(table_a3(load_edge_cases(paths)), outputs)
