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

import html
import inspect
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from adapters import REGISTRY
from study.analysis import advice
from study.analysis.delta import measured, unavailable_tools
from study.analysis.document import VERDICT_STYLES, Section, render_html, render_markdown
from study.analysis.labels import (
    format_number,
    group_title,
    ordered_spacings,
    ordered_tools,
    shorten,
    signed,
    tool_group,
    tool_label,
)
from study.analysis.phrases import edge_row, timing_of
from study.analysis.read import AnalysisInputs, read_inputs
from study.analysis.rendering import Table, write_table
from study.analysis.settings import AnalysisSettings
from study.analysis.timing import median_times, time_per_case
from study.records import REFERENCE, spacing_title
from study.scoring import grid_check
from vocabulary import METRIC_KEYS

HEADER_SECTION = re.compile(r"^([A-Z][a-z]+): ")
"""A section of an adapter's module header: a line starting "Boundary: ", "Quirks: ", ..."""


def adapter_notes(tool: str) -> list[tuple[str, str]]:
    """(title, text) of what the adapter's module header says of the tool: "Tool" (its first
    line), then each section ("Boundary", "Definitions", "Arguments", "Quirks"; untitled
    paragraphs as "Method"), lines joined. A class outside the adapters package (a test's)
    is described by its own docstring. Empty for a tool without an adapter."""
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
            "Median Δ": rows["median"].map(signed),
            "SD": rows["sd"].map(format_number),
            "Worst Δ": [
                f"{signed(r.worst)} ({r.worst_category})" if r.n_finite else "–"
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
    """What the recommendations say of the tool (or of the row it shares with the tools of
    identical scores): per metric and grid, where to use it, where it is the closest, where
    to avoid it and why."""
    mine = recommended.loc[
        [tool in (row.tool, *advice.twins_of(row)) for row in recommended.itertuples()]
    ]
    lines = []
    for verdict, title in (("use", "Use"), ("closest", "Closest, where no tool passes,")):
        rows = mine.loc[mine["verdict"] == verdict]
        if not rows.empty:
            lines.append(
                f"**{title}** for "
                + "; ".join(
                    f"{r.metric} at {r.grid} (rank {r.rank}"
                    + (f", with {advice.tool_names(r)}" if r.identical else "")
                    + f", worst {signed(r.worst)} {r.unit}"
                    + (f"; {advice.interval_text(r._asdict())}" if verdict == "closest" else "")
                    + ")"
                    for r in rows.itertuples()
                )
                + "."
            )
    for r in mine.loc[mine["verdict"] == "avoid"].itertuples():
        lines.append(f"**Avoid** for {r.metric} at {r.grid}: {r.reasons}.")
    return lines


def failures_text(scores: pd.DataFrame, tool: str) -> str:
    """How many of the tool's scores failed per metric, with its own first message."""
    rows = measured(scores)
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
    inputs: AnalysisInputs,
    summary: pd.DataFrame,
    recommended: pd.DataFrame,
    medians: pd.Series,
) -> Section:
    """One tool's card (see the module docstring)."""
    card = Section(f"{tool_label(tool)} (`{tool}`, {group_title(tool).lower()})")
    missing = unavailable_tools(inputs.scores)
    if tool in missing:
        card.lines.append(f"Not available in this run: {shorten(missing[tool], 200)}.")
        return card
    rows = measured(inputs.scores)
    rows = rows.loc[rows["tool"] == tool]
    versions = "/".join(sorted(set(map(str, rows["tool_version"]))))
    environments = ", ".join(sorted(set(map(str, rows["environment"]))))
    card.lines.append(f"**Version** {versions} (environment: {environments}).")
    card.lines += [f"**{title}**: {text}" for title, text in adapter_notes(tool)]
    if declared := declared_facts(tool):
        card.lines.append(f"**Declared by its adapter**: {declared}")
    card.lines += verdicts_text(recommended, tool)
    card.lines += [
        f"**Edge cases** (Table A3): {edge_row(inputs.edge_cases, tool)}; the "
        f"reference: {edge_row(reference_edge_cases(inputs.edge_cases, tool), REFERENCE)}"
        ".",
        f"**Field of view**: {field_of_view_text(inputs.grid_check, tool)}.",
        f"**HD time**: {timing_of(medians, tool)}.",
        f"**Failed scores**: {failures_text(inputs.scores, tool)}.",
    ]
    mine = summary.loc[summary["tool"] == tool]
    spacings = ordered_spacings(mine["spacing"], inputs.settings.grid_labels)
    mine = mine.assign(
        _m=mine["metric"].map(METRIC_KEYS.index), _s=mine["spacing"].map(spacings.index)
    )
    mine = mine.sort_values(["_m", "_s"])
    if not mine.empty:
        card.tables.append(("Δ = tool − reference per metric and voxel size:", delta_frame(mine)))
    return card


def build_cards(inputs: AnalysisInputs, recommended: pd.DataFrame) -> list[Section]:
    """A card for every tool of the scores table (and every unavailable one), in tool order;
    the reference and its meshing variants have none (they are the yardstick)."""
    tools = [t for t in ordered_tools(inputs.scores["tool"]) if tool_group(t) != "reference"]
    summary = advice.agreement(advice.pair_deltas(inputs.scores), ["tool", "metric", "spacing"])
    medians = pd.Series(dtype=float)
    if inputs.timing is not None and not inputs.timing.empty:
        medians = median_times(time_per_case(inputs.timing))
    return [tool_card(tool, inputs, summary, recommended, medians) for tool in tools]


def thresholds_text() -> str:
    """The recommendation rule, with its thresholds."""
    low, high = advice.INTERVAL
    return (
        f"A tool is recommended for a metric on a grid (each voxel size on its own) when at "
        f"least {advice.MOST_PAIRS:.0%} of the grid's pairs have |Δ| within "
        f"{advice.tolerance_text('mm')} ({advice.tolerance_text('%pt')} for NSD and BIoU), none "
        "of its scores failed, and it is not measured to ignore the voxel size or to depend on "
        "the field of view; the recommended tools are ranked by their worst |Δ|, tools with "
        "identical scores sharing one row. Where no tool passes, the "
        f"{advice.CLOSEST} with most pairs within (then the smallest worst |Δ|) are named the "
        f"closest, with the interval holding {high - low:g} % of their Δ, beside the exact "
        "route, the reference (`python -m reference`) and its time per pair. Every other tool "
        f"is to be avoided for it, for the reasons given: a bias when Δ has one sign on at "
        f"least {advice.SAME_SIGN:.0%} of the pairs (its size as a factor or an offset, "
        "whichever varies less), else scatter."
    )


def caveat(scores: pd.DataFrame) -> str:
    """What every number here is measured on."""
    pairs = measured(scores)[["dataset", "case", "oar"]].drop_duplicates()
    return (
        f"Measured on this run's data only ({len(pairs)} mask pairs of "
        f"{', '.join(sorted(pairs['dataset'].unique()))}, with these tool versions): other "
        "organs, other shapes, other voxel sizes or other versions can move every number."
    )


def recommendation_sections(recommended: pd.DataFrame) -> list[Section]:
    """One section per metric: per grid (voxel size), its verdict in a sentence and its table
    of tools to use (ranked), the closest where none passes, and those to avoid (why)."""
    sections = []
    for metric, rows in recommended.groupby("metric", sort=False):
        unit = advice.tolerance_text(rows["unit"].iloc[0])
        section = Section(f"{metric} (tolerance {unit})")
        for _, group in rows.groupby("spacing", sort=False):
            caption = f"**{metric} at {group['grid'].iloc[0]}**: {advice.grid_verdict(group)}."
            section.tables.append((caption, advice.recommendations_frame(group)))
        sections.append(section)
    return sections


def interval_table(scores: pd.DataFrame) -> Table:
    """How far off is a published number: the central 95 % of Δ per tool, metric, voxel size
    (and OAR category where the pairs suffice), as a table (`advice.intervals`)."""
    numeric = advice.intervals(scores)
    low, high = advice.INTERVAL
    display = pd.DataFrame(
        {
            "Tool": numeric["tool"].map(tool_label),
            "Metric": numeric["metric"],
            "Voxel size": numeric["spacing"].map(spacing_title),
            "OAR category": numeric["category"],
            "Pairs": numeric["n_finite"],
            f"Δ {low:g}th to {high:g}th percentile": [
                f"[{signed(r.lo)}, {signed(r.hi)}] {r.unit}" for r in numeric.itertuples()
            ],
            "Reference given a published v": [
                f"[v {signed(-r.hi)}, v {signed(-r.lo)}]" for r in numeric.itertuples()
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


def verdict_cell(group: pd.DataFrame) -> str:
    """One metric on one grid at a glance (HTML): its verdict's word, coloured, and the best
    tools, or the closest with their interval where none passes."""
    used = group.loc[group["verdict"] == "use"]
    if not used.empty:
        names = [f"{advice.tool_names(r)} ({signed(r.worst)})" for r in used.itertuples()]
        return _badge("USE") + html.escape(advice.listed(names, 2))
    closest = group.loc[group["verdict"] == "closest"]
    names = [
        f"{advice.tool_names(r)}: Δ in [{signed(r.lo)}, {signed(r.hi)}]"
        for r in closest.itertuples()
    ]
    return _badge("CLOSEST") + "none passes; " + html.escape(advice.listed(names, 2))


def _badge(word: str) -> str:
    return f"<span style='{VERDICT_STYLES[word]};padding:0 4px;margin-right:4px'>{word}</span>"


def verdict_overview(recommended: pd.DataFrame) -> str:
    """The verdicts at a glance, an HTML fragment for the report's opening page: metric ×
    grid, each cell `verdict_cell`; the worst Δ or the `advice.INTERVAL` of Δ in brackets."""
    titles = dict(zip(recommended["spacing"], recommended["grid"], strict=True))
    grids = [titles[s] for s in sorted(titles, key=advice.grid_order)]
    rows = []
    for metric, rows_of in recommended.groupby("metric", sort=False):
        unit = advice.tolerance_text(rows_of["unit"].iloc[0])
        cells = {g["grid"].iloc[0]: verdict_cell(g) for _, g in rows_of.groupby("spacing")}
        rows.append(
            f"<tr><th>{metric}<br><small>{html.escape(unit)}</small></th>"
            + "".join(f"<td>{cells.get(grid, '–')}</td>" for grid in grids)
            + "</tr>"
        )
    low, high = advice.INTERVAL
    head = "".join(f"<th>{html.escape(grid)}</th>" for grid in grids)
    return (
        "<style>.prose.max-w-lg{max-width:64rem}.verdicts td,.verdicts th{vertical-align:top;"
        "padding:3px 6px;border-bottom:1px solid #ddd;text-align:left;font-size:13px}</style>"
        "<div class='verdicts'><h3>The answer first: which tool for your grid</h3>"
        f"<table><thead><tr><th>Metric</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
        f"</table><p><small>USE: the tools within the tolerance on at least "
        f"{advice.MOST_PAIRS:.0%} of that grid's pairs (worst Δ in brackets; tools with "
        "identical scores joined by =). CLOSEST: no tool passes; the closest, with the range "
        f"holding {high - low:g} % of their Δ; the exact value is the reference's "
        "(python -m reference). Every reason, caution and number: the recommendations.</small>"
        "</p></div>\n"
    )


LINKS = (
    "Beside this page: each tool's card (cards.md; in the report's Tools category), how far "
    "off a published number is per tool, metric and voxel size (tables/intervals.md), and the "
    "numbers of every row (tables/recommendations.csv)."
)
"""Where the recommendations' reader goes next."""


def make_cards(
    scores_path,
    outputs: Mapping[str, str | Path],
    timing_paths: Sequence = (),
    grid_check_paths: Sequence = (),
    edge_case_paths: Sequence = (),
    settings: AnalysisSettings | None = None,
) -> pd.DataFrame:
    """Write the cards, the recommendations and the interval table from a run's files.

    `outputs` keys: cards_md, cards_html, recommendations_md, recommendations_html,
    recommendations_csv, verdicts_html, intervals_csv, intervals_md, intervals_tex, intervals_html.
    Returns the recommendations."""
    inputs = read_inputs(
        scores_path, timing_paths, grid_check_paths, edge_case_paths, settings=settings
    )
    recommended = advice.recommendations(inputs.scores, inputs.grid_check, inputs.edge_cases)
    preamble = [thresholds_text(), caveat(inputs.scores)]
    summary = Section("Summary: a verdict per metric and grid", advice.summary_lines(recommended))
    pages = {
        "cards": ("Tool cards", build_cards(inputs, recommended), preamble),
        "recommendations": (
            "Recommendations",
            [summary, *recommendation_sections(recommended)],
            [*preamble, LINKS],
        ),
    }
    for name, (title, sections, opening) in pages.items():
        Path(outputs[f"{name}_md"]).parent.mkdir(parents=True, exist_ok=True)
        Path(outputs[f"{name}_md"]).write_text(
            render_markdown(sections, title, opening), encoding="utf-8"
        )
        Path(outputs[f"{name}_html"]).write_text(
            render_html(sections, title, opening), encoding="utf-8"
        )
    recommended.to_csv(outputs["recommendations_csv"], index=False)
    Path(outputs["verdicts_html"]).write_text(verdict_overview(recommended), encoding="utf-8")
    write_table(
        interval_table(inputs.scores),
        outputs["intervals_csv"],
        outputs["intervals_md"],
        outputs["intervals_tex"],
        outputs["intervals_html"],
    )
    return recommended
