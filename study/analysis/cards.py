"""A card per tool, the recommendations and the interval table, generated from a run.

A card puts one tool's facts together: its version and environment; how it computes, read off
its adapter (the module header's sections Boundary, Definitions, Arguments, Quirks, and the
adapter's declared metrics, fixed percentile and ignored voxel sizes: the one owner of these
facts); its Δ against the reference per metric and voxel size; its edge-case row beside the
reference's; whether its scores depend on the field of view; its median HD time; what failed,
in the tool's own words; and what the recommendations say of it. Numbers and thresholds come
from `advice`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from study.analysis import advice, findings
from study.analysis import statistics as st
from study.analysis.document import Section, render_html, render_markdown
from study.analysis.tables import Table, configured_spacings, format_number, shorten, write_table
from study.records import METRICS, REFERENCE, spacing_title
from study.scoring import grid_check

HEADER_SECTION = re.compile(r"^([A-Z][a-z]+): ")
"""A section of an adapter's module header: a line starting "Boundary: ", "Quirks: ", ..."""


def adapter_notes(tool: str) -> list[tuple[str, str]]:
    """(title, text) of what the adapter's module header says of the tool: "Tool" (its first
    line), then each section ("Boundary", "Definitions", "Arguments", "Quirks"; untitled
    paragraphs as "Method"), lines joined. A class outside the adapters package (a test's)
    is described by its own docstring. Empty for a tool without an adapter."""
    from adapters import REGISTRY

    adapter = REGISTRY.get(tool)
    if adapter is None:
        return []
    module = inspect.getmodule(type(adapter))
    owner = module if module and module.__name__.startswith("adapters.") else type(adapter)
    head, _, body = (inspect.getdoc(owner) or "").partition("\n")
    notes = [("Tool", head.strip())] if head.strip() else []
    for line in body.splitlines():
        titled = HEADER_SECTION.match(line)
        if titled:
            notes.append((titled.group(1), line[titled.end() :].strip()))
        elif line.strip():
            if not notes or (notes[-1][0] == "Tool"):
                notes.append(("Method", ""))
            title, text = notes[-1]
            notes[-1] = (title, f"{text} {line.strip()}".strip())
    return notes


def declared_facts(tool: str) -> str:
    """The adapter's declared metrics, fixed percentile, ignored voxel sizes and 3D-only
    failures, as one sentence ("" for a tool without an adapter)."""
    from adapters import REGISTRY

    adapter = REGISTRY.get(tool)
    if adapter is None:
        return ""
    text = f"offers {', '.join(adapter.metrics)}"
    if adapter.fixed_percentile is not None:
        text += f"; HD95 at the {adapter.fixed_percentile:g}th percentile only"
    if adapter.ignores_spacing:
        text += f"; ignores the voxel size for {', '.join(sorted(adapter.ignores_spacing))}"
    if adapter.fails_on_3d:
        text += f"; fails on 3D masks for {', '.join(adapter.fails_on_3d)}"
    return text + "."


def delta_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """A card's Δ table: per metric and voxel size the pairs, median, SD, worst Δ (with its
    OAR category), the share within `advice.TOLERANCE` and the Δ that failed or were not
    finite."""
    return pd.DataFrame(
        {
            "Metric": rows["metric"],
            "Voxel size": rows["spacing"].map(spacing_title),
            "Pairs": rows["n"],
            "Median Δ": rows["median"].map(st.signed),
            "SD": rows["sd"].map(format_number),
            "Worst Δ": [
                f"{st.signed(r.worst)} ({r.worst_category})" if r.n_finite else "–"
                for r in rows.itertuples()
            ],
            "Within": [
                f"{r.within:.0%} ({advice.tolerance_text(r.unit)})" for r in rows.itertuples()
            ],
            "Failed / not finite": [f"{r.n_failed} / {r.n_nonfinite}" for r in rows.itertuples()],
        }
    )


def field_of_view_text(grid_checked: pd.DataFrame | None, tool: str) -> str:
    """Whether the tool's scores changed between cropped and scan-sized grids."""
    if grid_checked is None or grid_checked.empty:
        return "not checked in this run (the grid check is off)"
    differences = grid_check.grid_differences(grid_checked)
    mine = differences.loc[differences["tool"] == tool]
    if mine.empty:
        return "not in this run's grid check"
    changed = advice.field_of_view_changes(mine)
    found = [f"{metric}: {text}" for (_, metric), text in changed.items()]
    if not found and tool not in grid_check.compared_tools(mine):
        return (
            "not compared: no score was finite on both grids (every call failed or gave inf "
            f"or nan, alike on both) on the {mine['oar'].nunique()} grid-check pairs"
        )
    if not found:
        return (
            f"the same on cropped and scan-sized grids (|d| ≤ {grid_check.SAME_TOLERANCE:g}) "
            f"on all {mine['oar'].nunique()} grid-check pairs and every metric"
        )
    return "; ".join(found)


def verdicts_text(recommended: pd.DataFrame, tool: str) -> list[str]:
    """What the recommendations say of the tool: where to use it, where to avoid it and why."""
    mine = recommended.loc[recommended["tool"] == tool]
    use = mine.loc[mine["verdict"] == "use"]
    lines = []
    if not use.empty:
        lines.append(
            "**Use** for "
            + "; ".join(
                f"{r.metric} on {r.grid_kind} grids (rank {r.rank}, worst "
                f"{st.signed(r.worst)} {r.unit})"
                for r in use.itertuples()
            )
            + "."
        )
    for r in mine.loc[mine["verdict"] == "avoid"].itertuples():
        lines.append(f"**Avoid** for {r.metric} on {r.grid_kind} grids: {r.reasons}.")
    return lines


def failures_text(scores: pd.DataFrame, tool: str) -> str:
    """How many of the tool's scores failed per metric, with its own first message."""
    rows = st.measured(scores)
    rows = rows.loc[rows["tool"] == tool]
    messages = advice.error_messages(scores, tool)
    if not messages:
        return "none"
    counts = rows.loc[rows["status"] == "error"].groupby("metric").size()
    return "; ".join(
        f"{metric} {counts[metric]} of {int((rows['metric'] == metric).sum())} ({message})"
        for metric, message in messages.items()
    )


def reference_edge_cases(edge_cases: pd.DataFrame | None, tool: str) -> pd.DataFrame | None:
    """The reference's edge-case records of the metrics the tool was probed for."""
    if edge_cases is None:
        return None
    metrics = set(edge_cases.loc[edge_cases["tool"] == tool, "metric"])
    return edge_cases.loc[(edge_cases["tool"] != REFERENCE) | edge_cases["metric"].isin(metrics)]


def tool_card(
    tool: str,
    inputs: findings.AnalysisInputs,
    summary: pd.DataFrame,
    recommended: pd.DataFrame,
    medians: pd.Series,
) -> Section:
    """One tool's card (see the module docstring)."""
    card = Section(f"{st.tool_label(tool)} (`{tool}`, {st.group_title(tool).lower()})")
    missing = st.unavailable_tools(inputs.scores)
    if tool in missing:
        card.lines.append(f"Not available in this run: {shorten(missing[tool], 200)}.")
        return card
    rows = st.measured(inputs.scores)
    rows = rows.loc[rows["tool"] == tool]
    versions = "/".join(sorted(set(map(str, rows["tool_version"]))))
    environments = ", ".join(sorted(set(map(str, rows["environment"]))))
    card.lines.append(f"**Version** {versions} (environment: {environments}).")
    card.lines += [f"**{title}**: {text}" for title, text in adapter_notes(tool)]
    if declared := declared_facts(tool):
        card.lines.append(f"**Declared by its adapter**: {declared}")
    card.lines += verdicts_text(recommended, tool)
    card.lines += [
        f"**Edge cases** (Table A3): {findings.edge_row(inputs.edge_cases, tool)}; the "
        f"reference: {findings.edge_row(reference_edge_cases(inputs.edge_cases, tool), REFERENCE)}"
        ".",
        f"**Field of view**: {field_of_view_text(inputs.grid_check, tool)}.",
        f"**HD time**: {findings.timing_of(medians, tool)}.",
        f"**Failed scores**: {failures_text(inputs.scores, tool)}.",
    ]
    mine = summary.loc[summary["tool"] == tool]
    spacings = st.ordered_spacings(mine["spacing"], configured_spacings(inputs.config))
    mine = mine.assign(_m=mine["metric"].map(METRICS.index), _s=mine["spacing"].map(spacings.index))
    mine = mine.sort_values(["_m", "_s"])
    if not mine.empty:
        card.tables.append(("Δ = tool − reference per metric and voxel size:", delta_frame(mine)))
    return card


def build_cards(inputs: findings.AnalysisInputs, recommended: pd.DataFrame) -> list[Section]:
    """A card for every tool of the scores table (and every unavailable one), in tool order;
    the reference and its meshing variants have none (they are the yardstick)."""
    tools = [t for t in st.ordered_tools(inputs.scores["tool"]) if st.tool_group(t) != "reference"]
    summary = advice.agreement(advice.pair_deltas(inputs.scores), ["tool", "metric", "spacing"])
    medians = pd.Series(dtype=float)
    if inputs.timing is not None and not inputs.timing.empty:
        medians = findings.median_times(st.time_per_case(inputs.timing))
    return [tool_card(tool, inputs, summary, recommended, medians) for tool in tools]


def thresholds_text() -> str:
    """The recommendation rule, with its thresholds."""
    return (
        f"A tool is recommended for a metric on a kind of grid when at least "
        f"{advice.MOST_PAIRS:.0%} of the pairs have |Δ| within {advice.tolerance_text('mm')} "
        f"({advice.tolerance_text('%pt')} for NSD and BIoU), none of its scores failed, and "
        "it is not measured to ignore the voxel size or to depend on the field of view; the "
        "recommended tools are ranked by their worst |Δ|. Every other tool is to be avoided "
        "for it, for the reasons given."
    )


def caveat(scores: pd.DataFrame) -> str:
    """What every number here is measured on."""
    pairs = st.measured(scores)[["dataset", "case", "oar"]].drop_duplicates()
    return (
        f"Measured on this run's data only ({len(pairs)} mask pairs of "
        f"{', '.join(sorted(pairs['dataset'].unique()))}, with these tool versions): other "
        "organs, other shapes, other voxel sizes or other versions can move every number."
    )


def recommendation_sections(recommended: pd.DataFrame) -> list[Section]:
    """One section per metric: its table of tools to use (ranked) and to avoid (why)."""
    return [
        Section(
            f"{metric}",
            tables=[
                (
                    f"{metric}, tolerance {advice.tolerance_text(rows['unit'].iloc[0])}:",
                    advice.recommendations_frame(rows),
                ),
            ],
        )
        for metric, rows in recommended.groupby("metric", sort=False)
    ]


def interval_table(scores: pd.DataFrame) -> Table:
    """How far off is a published number: the central 95 % of Δ per tool, metric, voxel size
    (and OAR category where the pairs suffice), as a table (`advice.intervals`)."""
    numeric = advice.intervals(scores)
    low, high = advice.INTERVAL
    display = pd.DataFrame(
        {
            "Tool": numeric["tool"].map(st.tool_label),
            "Metric": numeric["metric"],
            "Voxel size": numeric["spacing"].map(spacing_title),
            "OAR category": numeric["category"],
            "Pairs": numeric["n_finite"],
            f"Δ {low:g}th to {high:g}th percentile": [
                f"[{st.signed(r.lo)}, {st.signed(r.hi)}] {r.unit}" for r in numeric.itertuples()
            ],
            "Reference given a published v": [
                f"[v {st.signed(-r.hi)}, v {st.signed(-r.lo)}]" for r in numeric.itertuples()
            ],
        }
    )
    notes = [
        f"Δ = tool − reference; the interval holds the central {high - low:g} % of the finite Δ "
        f"({low:g}th and {high:g}th percentiles). A value v published with the tool "
        "corresponds to a reference value within the last column's bounds on that share of "
        "our pairs.",
        f"Rows per OAR category only where it has at least {advice.MIN_CATEGORY_PAIRS} finite Δ.",
        caveat(scores),
    ]
    return Table("intervals", "How far off is a published number", numeric, display, notes)


def make_cards(
    scores_path,
    outputs: Mapping[str, str | Path],
    timing_paths: Sequence = (),
    grid_check_paths: Sequence = (),
    edge_case_paths: Sequence = (),
    config: Mapping | None = None,
) -> pd.DataFrame:
    """Write the cards, the recommendations and the interval table from a run's files.

    `outputs` keys: cards_md, cards_html, recommendations_md, recommendations_html,
    recommendations_csv, intervals_csv, intervals_md, intervals_tex, intervals_html.
    Returns the recommendations."""
    inputs = findings.read_inputs(
        scores_path, timing_paths, grid_check_paths, edge_case_paths, config=config
    )
    recommended = advice.recommendations(inputs.scores, inputs.grid_check, inputs.edge_cases)
    preamble = [thresholds_text(), caveat(inputs.scores)]
    pages = {
        "cards": ("Tool cards", build_cards(inputs, recommended)),
        "recommendations": ("Recommendations", recommendation_sections(recommended)),
    }
    for name, (title, sections) in pages.items():
        Path(outputs[f"{name}_md"]).parent.mkdir(parents=True, exist_ok=True)
        Path(outputs[f"{name}_md"]).write_text(
            render_markdown(sections, title, preamble), encoding="utf-8"
        )
        Path(outputs[f"{name}_html"]).write_text(
            render_html(sections, title, preamble), encoding="utf-8"
        )
    recommended.to_csv(outputs["recommendations_csv"], index=False)
    write_table(
        interval_table(inputs.scores),
        outputs["intervals_csv"],
        outputs["intervals_md"],
        outputs["intervals_tex"],
        outputs["intervals_html"],
    )
    return recommended
