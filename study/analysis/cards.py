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
from study.analysis import advice, verdict_text, verdicts
from study.analysis.delta import measured, unavailable_tools
from study.analysis.document import VERDICT_STYLES, Section, render_html, render_markdown
from study.analysis.labels import (
    format_number,
    group_title,
    ordered_tools,
    shorten,
    signed,
    tool_group,
    tool_label,
)
from study.analysis.phrases import edge_row, timing_of
from study.analysis.read import AnalysisInputs, read_inputs, read_verdicts
from study.analysis.rendering import Table, write_table
from study.analysis.settings import AnalysisSettings
from study.analysis.tables import bracket_note
from study.analysis.timing import median_times, time_per_case
from study.oars import category_phrase
from study.records import REFERENCE
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
    """A card's Δ table, from its verdict rows: per metric and voxel size the pairs the
    reference defines, median, SD, worst Δ (with its category), the share within the
    tolerance, and the Δ that failed or were not finite."""
    return pd.DataFrame(
        {
            "Metric": rows["metric"],
            "Voxel size": rows["grid"],
            "Pairs": rows["n"],
            "Median Δ": rows["median"].map(signed),
            "SD": rows["sd"].map(format_number),
            "Worst Δ": [
                f"{signed(r.worst)} ({category_phrase(r.worst_category)})" if r.n_finite else "–"
                for r in rows.itertuples()
            ],
            "Within": [
                f"{verdicts.share(r.within)} (±{r.tolerance:.2g} {r.unit})"
                for r in rows.itertuples()
            ],
            "Failed / not finite": [f"{r.n_failed} / {r.n_nonfinite}" for r in rows.itertuples()],
            "Verdict": rows["verdict"],
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


def rows_of_tool(table: pd.DataFrame, tool: str) -> pd.DataFrame:
    """The verdict rows over every grid's pairs that speak for the tool (its own, or the row it
    shares with tools of identical scores)."""
    rows = verdict_text.of_stratum(table)
    return rows.loc[[tool in (r.tool, *verdict_text.twins_of(r)) for r in rows.itertuples()]]


def verdicts_text(recommended: pd.DataFrame, tool: str) -> list[str]:
    """What the verdict table says of the tool: per metric and grid, where to use it, where it
    is the closest, where to avoid it, where it was not measured, each with its reason."""
    mine = rows_of_tool(recommended, tool)
    titles = {
        "use": "Use",
        "closest": "Closest, where no tool passes,",
        "avoid": "Avoid",
        "not measured": "Not measured",
    }
    lines = []
    for verdict, title in titles.items():
        rows = mine.loc[mine["verdict"] == verdict]
        if not rows.empty:
            told = "; ".join(
                f"{r.metric} at {r.grid}"
                + (f" (with {verdict_text.tool_names(r)})" if r.identical else "")
                + f": {r.reason}"
                for r in rows.itertuples()
            )
            lines.append(f"**{title}** for {told}.")
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
    tool: str, inputs: AnalysisInputs, recommended: pd.DataFrame, medians: pd.Series
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
    mine = rows_of_tool(recommended, tool)
    if not mine.empty:
        card.tables.append(("Δ = tool − reference per metric and voxel size:", delta_frame(mine)))
    return card


def build_cards(inputs: AnalysisInputs, recommended: pd.DataFrame) -> list[Section]:
    """A card for every tool of the scores table (and every unavailable one), in tool order;
    the reference and its meshing variants have none (they are the yardstick)."""
    tools = [t for t in ordered_tools(inputs.scores["tool"]) if tool_group(t) != "reference"]
    medians = pd.Series(dtype=float)
    if inputs.timing is not None and not inputs.timing.empty:
        medians = median_times(time_per_case(inputs.timing))
    return [tool_card(tool, inputs, recommended, medians) for tool in tools]


def caveat(scores: pd.DataFrame) -> str:
    """What every number here is measured on."""
    pairs = measured(scores)[["dataset", "case", "oar"]].drop_duplicates()
    return (
        f"Measured on this run's data only ({len(pairs)} mask pairs of "
        f"{', '.join(sorted(pairs['dataset'].unique()))}, with these tool versions): other "
        "organs, other shapes, other voxel sizes or other versions can move every number."
    )


def recommendation_sections(recommended: pd.DataFrame) -> list[Section]:
    """One section per metric: per grid its verdicts in a sentence (every verdict with its
    reason) and the table of every tool; then the verdicts per stratum."""
    sections = []
    for metric, rows in verdict_text.of_stratum(recommended).groupby("metric", sort=False):
        section = Section(metric)
        for _, group in rows.groupby("spacing", sort=False):
            first = next(group.itertuples())
            caption = (
                f"**{metric} at {first.grid}** (tolerance {verdict_text.tolerance_of(first)}; "
                f"readers {verdict_text.readers_text(first)}): {verdict_text.grid_verdict(group)}."
            )
            section.tables.append((caption, verdict_text.verdicts_frame(group)))
        sections.append(section)
    strata = verdict_text.strata_table(recommended)
    if not strata.empty:
        section = Section("Per stratum: the tools to use (or the closest) on each grid")
        section.tables.append(("Each stratum's pairs, judged by the same rule:", strata))
        sections.append(section)
    return sections


def interval_table(recommended: pd.DataFrame, scores: pd.DataFrame) -> Table:
    """How far off is a published number: the central 95 % of Δ per tool, metric, voxel size
    (and size category where it has at least `advice.MIN_CATEGORY_PAIRS` finite Δ), read off
    the verdict table, beside the readers' own scale."""
    rows = recommended.loc[
        (recommended["stratum"] == verdicts.ALL)
        | (
            ~recommended["stratum"].str.startswith("slices ")
            & (recommended["n_finite"] >= advice.MIN_CATEGORY_PAIRS)
        )
    ]
    rows = rows.loc[rows["n_finite"] > 0]
    numeric = pd.DataFrame(
        [
            {**row, "tool": tool}
            for row in rows.to_dict("records")
            for tool in [row["tool"], *verdict_text.twins_of(pd.Series(row))]
        ]
    )
    if numeric.empty:
        numeric = pd.DataFrame(columns=[*recommended.columns])
    order = {t: i for i, t in enumerate(ordered_tools(numeric["tool"]))}
    numeric = numeric.assign(
        _t=numeric["tool"].map(order),
        _m=numeric["metric"].map(list(METRIC_KEYS).index),
        _c=numeric["stratum"] != verdicts.ALL,
    ).sort_values(["_t", "_m", "_c"], kind="stable")
    numeric = numeric.drop(columns=["_t", "_m", "_c"])
    low, high = advice.INTERVAL
    display = pd.DataFrame(
        {
            "Tool": numeric["tool"].map(tool_label),
            "Metric": numeric["metric"],
            "Voxel size": numeric["grid"],
            "Pairs of": numeric["stratum"],
            "Pairs": numeric["n_finite"],
            f"Δ {low:g}th to {high:g}th percentile": [
                f"[{signed(r.lo)}, {signed(r.hi)}] {r.unit}" for r in numeric.itertuples()
            ],
            "Reference given a published v": [
                f"[v {signed(-r.hi)}, v {signed(-r.lo)}]" for r in numeric.itertuples()
            ],
            "Readers' median [IQR]": [verdict_text.readers_text(r) for r in numeric.itertuples()],
        }
    )
    columns = ["tool", "metric", "unit", "spacing", "stratum", "n_finite", "lo", "hi", "median"]
    columns += ["readers_median", "readers_q1", "readers_q3"]
    notes = [
        f"Δ = tool − reference; the interval holds the central {high - low:g} % of the finite Δ "
        f"({low:g}th and {high:g}th percentiles) on the pairs the reference defines. A value v "
        "published with the tool corresponds to a reference value within the last-but-one "
        "column's bounds on that share of our pairs; the readers' own values beside it say how "
        "large that is next to what two observers disagree by.",
        f"Rows per size category only where it has at least {advice.MIN_CATEGORY_PAIRS} finite Δ.",
        caveat(scores),
    ]
    return Table("intervals", "How far off is a published number", numeric[columns], display, notes)


def verdict_cell(group: pd.DataFrame) -> str:
    """One metric on one grid at a glance (HTML): its verdict's word, coloured, and the best
    tools with their worst Δ, or the closest with their interval where none passes."""
    used = group.loc[group["verdict"] == "use"]
    if not used.empty:
        names = [f"{verdict_text.tool_names(r)} ({signed(r.worst)})" for r in used.itertuples()]
        return _badge("USE") + html.escape(verdict_text.listed(names, 2))
    closest = group.loc[group["verdict"] == "closest"]
    if closest.empty:
        return "no verdict"
    names = [
        f"{verdict_text.tool_names(r)}: Δ in {verdict_text.interval(r)}"
        for r in closest.itertuples()
    ]
    return _badge("CLOSEST") + "none passes; " + html.escape(verdict_text.listed(names, 2))


def _badge(word: str) -> str:
    return f"<span style='{VERDICT_STYLES[word]};padding:0 4px;margin-right:4px'>{word}</span>"


def verdict_overview(recommended: pd.DataFrame) -> str:
    """The verdicts at a glance, an HTML fragment for the report's opening page: metric ×
    grid, each cell `verdict_cell`; the worst Δ or the `advice.INTERVAL` of Δ in brackets."""
    table = verdict_text.of_stratum(recommended)
    titles = dict(zip(table["spacing"], table["grid"], strict=True))
    grids = [titles[s] for s in sorted(titles, key=advice.grid_order)]
    rows = []
    for metric, rows_of in table.groupby("metric", sort=False):
        cells = {g["grid"].iloc[0]: verdict_cell(g) for _, g in rows_of.groupby("spacing")}
        rows.append(
            f"<tr><th>{metric}</th>"
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
    verdicts_path,
    outputs: Mapping[str, str | Path],
    timing_paths: Sequence = (),
    grid_check_paths: Sequence = (),
    edge_case_paths: Sequence = (),
    settings: AnalysisSettings | None = None,
) -> pd.DataFrame:
    """Write the cards, the recommendations and the interval table from a run's files and its
    verdict table (`verdicts_path`, rule verdict_table's).

    `outputs` keys: cards_md, cards_html, recommendations_md, recommendations_html,
    verdicts_html, intervals_csv, intervals_md, intervals_tex, intervals_html.
    Returns the verdict table."""
    inputs = read_inputs(
        scores_path, timing_paths, grid_check_paths, edge_case_paths, settings=settings
    )
    recommended = read_verdicts(verdicts_path)
    preamble = [verdict_text.rule_text(), caveat(inputs.scores), *bracket_note(inputs.scores)]
    summary = Section(
        "Summary: a verdict per metric and grid", verdict_text.summary_lines(recommended)
    )
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
    Path(outputs["verdicts_html"]).write_text(verdict_overview(recommended), encoding="utf-8")
    write_table(
        interval_table(recommended, inputs.scores),
        outputs["intervals_csv"],
        outputs["intervals_md"],
        outputs["intervals_tex"],
        outputs["intervals_html"],
    )
    return recommended
