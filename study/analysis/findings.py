"""The generated summary: what the data say, in sentences, and how that compares with the paper.

Every sentence is computed from the Δ summaries, the Wilcoxon table, the timings and the grid
check; what the paper claimed, and how each claim is checked, is in `claims`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from study.analysis import (
    advice,
    claims,
    edge_comparison,
    environments,
    paper,
    verdict_text,
    verdicts,
)
from study.analysis.delta import (
    NEGLIGIBLE,
    REFERENCE_MESHING_VARIANTS,
    deltas,
    measured,
    summarize_deltas,
    unavailable_tools,
)
from study.analysis.document import Section, render_html, render_markdown
from study.analysis.labels import (
    display_scale,
    display_unit,
    mask_pair_words,
    ordered_spacings,
    ordered_tools,
    shorten,
    signed,
    tool_group,
    tool_label,
    tool_list,
    tool_versions,
)
from study.analysis.phrases import edge_row, milliseconds, timing_of
from study.analysis.read import (
    AnalysisInputs,
    check_scores,
    read_inputs,
    read_verdicts,
    read_wilcoxon,
)
from study.analysis.settings import AnalysisSettings
from study.analysis.significance import ALPHA, smallest_attainable_p
from study.analysis.tables import EDGE_SYMBOLS
from study.analysis.timing import median_times, time_per_case, timed_grids
from study.records import REFERENCE, spacing_title
from study.scoring import grid_check
from vocabulary import METRIC_KEYS, TESTED_KEYS

# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def setup_section(inputs: AnalysisInputs, spacings: Sequence[str]) -> Section:
    """What was compared: data, configuration, tools and versions, Bonferroni factor."""
    scores, settings = measured(inputs.scores), inputs.settings
    pairs = scores[["dataset", "case", "oar"]].drop_duplicates()
    factor = int(inputs.wilcoxon["factor"].iloc[0]) if not inputs.wilcoxon.empty else None
    words = mask_pair_words(settings.source)
    return Section(
        "Set-up",
        [
            f"Dataset **{', '.join(sorted(pairs['dataset'].unique()))}**: {len(pairs):,} "
            f"{words.plural} in {pairs['case'].nunique():,} {words.cases}, at "
            f"{len(spacings)} voxel sizes: {', '.join(spacing_title(s) for s in spacings)}.",
            f"HDp with p = {settings.percentile}; NSD and BIoU with tau = "
            f"{settings.tau_mm} mm. Δ = tool − reference; NSD and BIoU in percentage "
            "points.",
            f"Versions: {tool_versions(scores)}.",
            f"Wilcoxon p-values are multiplied by the Bonferroni factor {factor:,}."
            if factor
            else "No Wilcoxon tests were run.",
        ],
    )


def spacing_verdict(row: Mapping, tolerance: float) -> str:
    """Verdict on one tool, metric and voxel size from its finite-Δ summary."""
    if not np.isfinite(row["mean"]):
        return "has no finite Δ"
    if max(abs(row["min"]), abs(row["max"])) <= tolerance:
        return "agrees"
    if row["mean"] > tolerance:
        return "over-estimates"
    if row["mean"] < -tolerance:
        return "under-estimates"
    return "scatters around the reference"


def spacings_text(spacings: Sequence[str], every: Sequence[str]) -> str:
    """ "all voxel sizes" or the listed ones."""
    if len(every) > 1 and list(spacings) == list(every):
        return "all voxel sizes"
    return ", ".join(spacing_title(s) for s in spacings)


def deviation_cell(row: Mapping, tolerance: float) -> str:
    """One tool at one voxel size: its verdict and, unless it agrees, mean [min, max] of Δ."""
    verdict = spacing_verdict(row, tolerance)
    if verdict in ("agrees", "has no finite Δ"):
        return verdict.replace("has no", "no")
    short = verdict.split("-")[0].split(" ")[0]  # over, under, scatters
    mean, low, high = (signed(row[key]) for key in ("mean", "min", "max"))
    return f"{short} {mean} [{low}, {high}]"


def deviation_frame(rows: pd.DataFrame, spacings: Sequence[str], tolerance: float):
    """Tool × voxel size of one metric's Δ summaries, largest mean |Δ| first, with the Δ
    left out (not finite or failed)."""
    ranked = (
        rows.groupby("tool")["mean"].apply(lambda m: m.abs().max()).sort_values(ascending=False)
    )
    table = []
    for tool in ranked.index:
        stats = rows.loc[rows["tool"] == tool].set_index("spacing")
        cells = {
            spacing_title(s): deviation_cell(stats.loc[s], tolerance)
            for s in spacings
            if s in stats.index
        }
        excluded = int((stats["n"] - stats["n_finite"]).sum())
        table.append({"Tool": tool_label(tool), **cells, "Not finite or failed": excluded})
    return pd.DataFrame(table).fillna("–")


def deviation_section(summary: pd.DataFrame, spacings: Sequence[str]) -> Section:
    """Per metric, a table of every tool's direction and size of Δ per voxel size (mean
    [min, max]), largest mean |Δ| first."""
    section = Section("Over- and under-estimation")
    metrics = [m for m in TESTED_KEYS if m in set(summary["metric"])]
    if metrics:
        section.lines.append(
            "Per metric, each tool's Δ per voxel size: *agrees* when every |Δ| ≤ "
            f"{NEGLIGIBLE['mm']:g} mm ({NEGLIGIBLE['%pt']:g} %pt for NSD and BIoU), else "
            "*over* or *under* (the mean Δ beyond that) or *scatters*, with mean [min, max]; "
            "tools ordered by their largest mean |Δ|."
        )
    for metric in metrics:
        unit = display_unit(metric)
        rows = summary.loc[summary["metric"] == metric]
        frame = deviation_frame(rows, spacings, NEGLIGIBLE[unit])
        section.tables.append((f"**Δ{metric}** ({unit}):", frame))
    return section


def _pair_lines(rows: pd.DataFrame, spacings: Sequence[str]) -> list[str]:
    """ "A and B: HD at all voxel sizes; MASD at (2, 2, 2) mm." per pair of implementations."""
    lines = []
    for (a, b), pair in rows.groupby(["tool_a", "tool_b"], sort=False):
        where = "; ".join(
            f"{metric} at {spacings_text(list(group['spacing']), spacings)}"
            for metric, group in pair.groupby("metric", sort=False)
        )
        lines.append(f"{tool_label(a)} and {tool_label(b)}: {where}.")
    return lines


def identical_groups(pairs: pd.DataFrame) -> str:
    """ "Google DeepMind = pymia; MedPy = SimpleITK = mikan-rs": the implementations of one
    metric and voxel size whose scores are identical, joined into groups where every pair of
    a group is identical (else the group's pairs are listed one by one)."""
    same = {frozenset(pair) for pair in zip(pairs["tool_a"], pairs["tool_b"], strict=True)}
    groups: list[set[str]] = []
    for pair in same:
        touching = [group for group in groups if group & pair]
        groups = [group for group in groups if not group & pair] + [set(pair).union(*touching)]
    order = ordered_tools(set().union(*same))
    parts = []
    for group in sorted(groups, key=lambda g: min(order.index(t) for t in g)):
        members = ordered_tools(group)
        complete = all(frozenset(p) in same for p in combinations(members, 2))
        chains = [members] if complete else [ordered_tools(p) for p in same if p <= group]
        parts += [" = ".join(tool_label(t) for t in chain) for chain in chains]
    return "; ".join(parts)


def identical_lines(identical: pd.DataFrame, spacings: Sequence[str]) -> list[str]:
    """One line per metric: the groups of implementations with identical scores, per voxel
    size (voxel sizes with the same groups together)."""
    lines = []
    for metric, rows in identical.groupby("metric", sort=False):
        by_groups: dict[str, list[str]] = {}
        for spacing in [s for s in spacings if s in set(rows["spacing"])]:
            text = identical_groups(rows.loc[rows["spacing"] == spacing])
            by_groups.setdefault(text, []).append(spacing)
        where = "; ".join(
            f"at {spacings_text(at, spacings)}: {text}" for text, at in by_groups.items()
        )
        lines.append(f"Identical scores of {metric} {where}.")
    return lines


def significance_counts(tested: pd.DataFrame, spacings: Sequence[str]) -> pd.DataFrame:
    """Metric × voxel size: "k of n" tested pairs of tools (the reference aside) that are not
    significantly different."""
    tools = tested.loc[(tested["tool_a"] != REFERENCE) & (tested["tool_b"] != REFERENCE)]
    rows = []
    for metric in [m for m in TESTED_KEYS if m in set(tools["metric"])]:
        of = tools.loc[tools["metric"] == metric]
        row = {"Metric": metric}
        for spacing in [s for s in spacings if s in set(of["spacing"])]:
            at = of.loc[of["spacing"] == spacing, "significant"].astype(bool)
            row[spacing_title(spacing)] = f"{int((~at).sum())} of {len(at)}"
        rows.append(row)
    return pd.DataFrame(rows).fillna("–")


def indistinguishable_section(
    wilcoxon: pd.DataFrame, spacings: Sequence[str], unavailable: Sequence[str] = ()
) -> Section:
    """Pairs with identical scores, and pairs the corrected test cannot tell apart.

    "Not significant" is only listed when the test could have found a difference: with n
    pairs the exact test cannot go below p = 2 / 2^n, and after the Bonferroni factor that
    floor may already exceed the significance level.
    """
    section = Section("Indistinguishable pairs")
    if wilcoxon.empty:
        section.lines.append("No tests were run.")
        return section
    factor = int(wilcoxon["factor"].iloc[0])
    identical = wilcoxon.loc[wilcoxon["status"] == "identical"]
    section.lines += identical_lines(identical, spacings)
    tested = wilcoxon.loc[wilcoxon["status"] == "tested"]
    floor = (
        min(1.0, smallest_attainable_p(int(tested["n_common"].max())) * factor)
        if not tested.empty
        else 1.0
    )
    if not tested.empty and floor >= ALPHA:
        section.lines.append(
            f"No test can be significant here: with at most {int(tested['n_common'].max())} "
            f"common pairs the smallest attainable p × {factor:,} is {floor:.3g} ≥ {ALPHA}, "
            "so 'not significant' would only mean too few pairs; run a larger study."
        )
    else:
        same = tested.loc[~tested["significant"].astype(bool)]
        with_reference = (same["tool_a"] == REFERENCE) | (same["tool_b"] == REFERENCE)
        section.lines += [
            f"Not significantly different (p × {factor:,} ≥ {ALPHA}) — {line}"
            for line in _pair_lines(same.loc[with_reference], spacings)
        ]
        counts = significance_counts(tested, spacings)
        if same.empty:
            section.lines.append("Every tested pair differs significantly.")
        elif not counts.empty:
            caption = (
                f"Pairs of tools (the reference aside) not significantly different (p × "
                f"{factor:,} ≥ {ALPHA}) of those tested, per metric and voxel size; which "
                "pairs: Fig. A4."
            )
            section.tables.append((caption, counts))
    untestable = int((wilcoxon["status"] == "untestable").sum())
    missing = f"; not installed here: {tool_list(unavailable)}" if unavailable else ""
    section.lines.append(
        f"{untestable} of {len(wilcoxon)} comparisons had no common finite "
        f"scores (a tool lacks the metric, or its scores failed or are not finite{missing})."
    )
    return section


def failures_section(scores: pd.DataFrame) -> Section:
    """Tools that were not installed, and how many scores were errors or non-finite."""
    section = Section("Missing and non-finite scores")
    status_counts = scores.groupby(["tool", "status"]).size().unstack(fill_value=0)
    unavailable = unavailable_tools(scores)
    for tool in ordered_tools(status_counts.index):
        counts = status_counts.loc[tool]
        total = int(counts.sum())
        if tool in unavailable:
            message = unavailable[tool].split(" (")[0]
            section.lines.append(f"{tool_label(tool)}: not available ({message}).")
            continue
        issues = {k: int(counts.get(k, 0)) for k in ("error", "nan", "inf", "unavailable")}
        if any(issues.values()):
            text = ", ".join(f"{n} {k}" for k, n in issues.items() if n)
            section.lines.append(f"{tool_label(tool)}: {text} of {total} scores.")
    if not section.lines:
        section.lines.append("Every score of every tool is finite.")
    return section


def timing_section(timing: pd.DataFrame | None) -> Section:
    """Median HD time per case and tool, fastest first."""
    section = Section("HD execution time")
    if timing is None or timing.empty:
        section.lines.append("No timing records.")
        return section
    per_case = time_per_case(timing)
    medians = median_times(per_case)
    boxes = per_case.groupby(["tool", "category"]).size()
    section.lines.append(
        f"Timed on {timed_grids(timing)}, {timing['oar'].nunique()} mask pairs of "
        f"{timing['case'].nunique()} cases, {timing['repeat'].nunique()} repeat(s) per "
        f"pair (their median counts); each tool's box per size category holds {boxes.min()} to "
        f"{boxes.max()} pairs."
    )
    section.lines.append(
        "Median per case, fastest first: "
        + "; ".join(f"{tool_label(t)} {milliseconds(s)}" for t, s in medians.items())
        + "."
    )
    return section


# --------------------------------------------------------------------------------------------
# The tools since the paper
# --------------------------------------------------------------------------------------------


def metric_agreement(
    delta: pd.DataFrame, metric: str, spacings: Sequence[str], error: str = ""
) -> str:
    """One metric of one tool against the reference: "HD agrees on all 24 pairs", or per
    voxel size the mean ± SD of the finite Δ and how many pairs agree (|Δ| within
    `statistics.NEGLIGIBLE`), then the Δ that could not be formed (non-finite; failed, with
    the tool's message `error`)."""
    unit = display_unit(metric)
    rows = delta.loc[delta["metric"] == metric]
    scaled = rows["delta"] * display_scale(metric)
    agree = (rows["kind"] == "finite") & (scaled.abs() <= NEGLIGIBLE[unit])
    if agree.all():
        return f"{metric} agrees on all {len(rows)} pairs"
    parts = []
    for spacing in [s for s in spacings if s in set(rows["spacing"])]:
        at = rows["spacing"] == spacing
        finite = scaled.loc[at & (rows["kind"] == "finite")]
        if finite.empty:
            parts.append(f"{spacing_title(spacing)} no finite Δ")
            continue
        sd = f"{finite.std():.2f}" if len(finite) > 1 else "–"
        parts.append(
            f"{spacing_title(spacing)} {signed(finite.mean())} ± {sd} "
            f"({int((agree & at).sum())}/{int(at.sum())} agree)"
        )
    text = f"{metric} ({unit}): " + ", ".join(parts)
    failed = int((rows["kind"] == "failed").sum())
    nonfinite = int((rows["kind"] == "nonfinite").sum())
    if nonfinite:
        text += f"; {nonfinite} Δ not finite"
    if failed:
        text += f"; {failed} of {len(rows)} failed" + (f" ({error})" if error else "")
    return text


def later_tools_section(inputs: AnalysisInputs, spacings: Sequence[str]) -> Section:
    """Each tool added since the paper (`statistics.tool_group` "later"): per metric it
    offers, where it agrees with the reference and where not; its Table A3 row; its HD time.
    The paper's claims and tables leave these tools out; this is where they are reported."""
    section = Section("Tools since the paper")
    later = [t for t in ordered_tools(inputs.scores["tool"]) if tool_group(t) == "later"]
    if not later:
        section.lines.append("No tool added since the paper was scored in this run.")
        return section
    section.lines.append(
        f"Scored here beside the paper's tools, and left out of every check of the paper's "
        f"claims: {tool_list(later)}. Per metric the tool offers: Δ = tool − reference "
        "(mean ± SD per voxel size) and how many pairs agree, |Δ| ≤ "
        f"{NEGLIGIBLE['mm']:g} mm ({NEGLIGIBLE['%pt']:g} %pt for NSD, BIoU, DSC)."
    )
    missing = unavailable_tools(inputs.scores)
    medians = pd.Series(dtype=float)
    if inputs.timing is not None and not inputs.timing.empty:
        medians = median_times(time_per_case(inputs.timing))
    delta = deltas(inputs.scores, later)
    for tool in later:
        label = f"**{tool_label(tool)}**"
        if tool in missing:
            section.lines.append(f"{label}: not available here ({shorten(missing[tool])}).")
            continue
        mine = delta.loc[delta["tool"] == tool]
        versions = "/".join(sorted(set(map(str, mine["tool_version"]))))
        metrics = [m for m in METRIC_KEYS if m in set(mine["metric"])]
        errors = advice.error_messages(inputs.scores, tool)
        section.lines += [
            f"{label} {versions} against the reference: "
            + " · ".join(metric_agreement(mine, m, spacings, errors.get(m, "")) for m in metrics)
            + ".",
            f"{label} edge cases (Table A3): {edge_row(inputs.edge_cases, tool)}.",
            f"{label} HD time: {timing_of(medians, tool)}.",
        ]
    return section


def grid_section(rows: pd.DataFrame | None) -> Section | None:
    """Scores on cropped against scan-sized grids (study/scoring/grid_check.py): who is
    invariant, and each tool and metric that changed, with the largest |d| and an example."""
    if rows is None:
        return None
    section = Section("Scores on cropped and scan-sized grids")
    if rows.empty:
        section.lines.append("No grid-check records.")
        return section
    differences = grid_check.grid_differences(rows)
    changed = grid_check.changed_scores(differences)
    pairs = differences.drop_duplicates(["spacing", "oar"]).groupby("spacing").size()
    checked = ", ".join(spacing_title(s) for s in pairs.index)
    compared = grid_check.compared_tools(differences)
    unchanged_tools = [
        t for t in ordered_tools(differences["tool"]) if t not in set(changed["tool"])
    ]
    same = [t for t in unchanged_tools if t in compared]
    unchanged = differences.loc[~differences["changed"], "difference"].abs()
    largest = unchanged.max() if unchanged.notna().any() else 0.0
    section.lines.append(
        f"The same pairs scored on cropped grids and on scan-sized grids ({pairs.max()} pairs at "
        f"{checked}, one of them with observer B empty). The same "
        f"(|d| ≤ {grid_check.SAME_TOLERANCE:g}) on every pair and metric: {tool_list(same)}; "
        f"the largest |d| among the scores that stayed the same is {largest:.2g}."
    )
    vacuous = [t for t in unchanged_tools if t not in compared]
    if vacuous:
        section.lines.append(
            f"Not compared (no score finite on both grids: every call failed or gave inf or "
            f"nan, alike on both): {tool_list(vacuous)}."
        )
    for row in changed.itertuples():
        largest = (
            ""
            if np.isnan(row.max_abs_difference)
            else f", largest |d| {row.max_abs_difference:.4g}"
        )
        section.lines.append(
            f"**{tool_label(row.tool)} {row.metric} depends on the grid**: changed on "
            f"{row.changed} of {row.compared} pairs{largest}; e.g. {row.example}."
        )
    return section


# --------------------------------------------------------------------------------------------
# Comparison with the paper
# --------------------------------------------------------------------------------------------


def evidence(inputs: AnalysisInputs, summary: pd.DataFrame, spacings) -> claims.Evidence:
    """What the paper's claims are checked on: this run's Δ summaries (per voxel size, per
    OAR category, and of the reference's meshing variants), tests, median HD times per case
    and edge-case records."""
    tools = inputs.settings.present_tools(inputs.scores["tool"])
    by_category = summarize_deltas(
        deltas(inputs.scores, tools or None), ["metric", "category", "tool"]
    )
    variants = [v for v in REFERENCE_MESHING_VARIANTS if v in set(inputs.scores["tool"])]
    meshing = (
        summarize_deltas(deltas(inputs.scores, variants), ["metric", "spacing", "tool"])
        if variants
        else None
    )
    timing, timed_on = None, ""
    if inputs.timing is not None and not inputs.timing.empty:
        timing = time_per_case(inputs.timing).groupby("tool")["seconds"].median()
        timed_on = timed_grids(inputs.timing)
    return claims.Evidence(
        by_spacing=summary,
        spacings=spacings,
        by_category=by_category,
        wilcoxon=inputs.wilcoxon,
        timing=timing,
        timed_on=timed_on,
        edge_cases=inputs.edge_cases,
        meshing=meshing,
    )


def paper_section(inputs: AnalysisInputs, summary: pd.DataFrame, spacings) -> Section:
    """The paper's findings checked against these data (`claims`), and why the numbers may
    differ."""
    return Section(
        "Compared with the paper",
        [
            *claims.compare_with_paper(evidence(inputs, summary, spacings)),
            claims.why_numbers_differ(inputs.scores),
        ],
    )


def _edge_output(output: str, warned: bool) -> str:
    return (EDGE_SYMBOLS.get(output, "a number") if output else "–") + ("W" if warned else "")


def edge_section(edge_cases: pd.DataFrame | None) -> Section | None:
    """Table A3 against the paper's, cell by cell: how many match, and each differing cell
    with its cause (`edge_comparison`), grouped by tool and cause."""
    if edge_cases is None:
        return None
    section = Section("Edge cases against the paper (Table A3)")
    every = edge_comparison.compare(edge_cases, paper.table_a3())
    cells = every.loc[every["recorded"]]
    if cells.empty:
        section.lines.append("No edge-case record of a tool in the paper's Table A3.")
        return section
    warned = int((cells["match"] & (cells["warned"] != cells["paper_warned"])).sum())
    section.lines.append(
        f"Ours has the paper's output in {int(cells['match'].sum())} of the {len(cells)} cells "
        f"of the paper's {len(every)} that we recorded ({edge_comparison.tools_text(every)}); "
        f"of the matching cells, {warned} differ in the warning mark (W). The paper's table "
        "has no HD95 column and no Google DeepMind ASSD, so those of ours are not compared."
    )
    differing = cells.loc[~cells["match"]]
    for (tool, why), group in differing.groupby(["tool", "cause"], sort=False):
        listed = ", ".join(
            f"{r.metric} {r.case} {_edge_output(r.output, r.warned)} "
            f"(paper {_edge_output(r.paper_output, r.paper_warned)})"
            for r in group.itertuples()
        )
        section.lines.append(f"{tool_label(tool)}, {why}: {listed}.")
    return section


# --------------------------------------------------------------------------------------------
# Assembly and rendering
# --------------------------------------------------------------------------------------------


SUMMARY_LINES = 10
"""The summary that opens the findings has at most this many lines."""


def measured_problems(recommended: pd.DataFrame) -> str:
    """ "Ignores the voxel size (measured): MISeval HD; depends on the field of view: ..."
    from the reasons of the recommendations ("" when none was measured)."""
    parts = []
    recommended = verdict_text.of_stratum(recommended)
    for words in ("ignores the voxel size", "depends on the field of view"):
        flagged = recommended.loc[
            recommended["reasons"].fillna("").str.contains(words, regex=False)
        ]
        pairs = dict.fromkeys(
            (tool, row.metric)
            for row in flagged.itertuples()
            for tool in [row.tool, *verdict_text.twins_of(row)]
            # A reason of the whole row, or this tool's own ("MISeval only: ...").
            if f"only: {words}" not in row.reasons
            or f"{tool_label(tool)} only: {words}" in row.reasons
        )
        if pairs:
            listed = ", ".join(f"{tool_label(t)} {m}" for t, m in pairs)
            parts.append(f"{words}: {listed}")
    return ("Measured: " + "; ".join(parts) + ".") if parts else ""


def summary_section(
    inputs: AnalysisInputs, recommended: pd.DataFrame, compared: Section
) -> Section:
    """At most `SUMMARY_LINES` lines: what was scored, per metric the tools to use (the
    recommendations, `advice`), the measured problems, and the verdicts on the paper's claims."""
    pairs = measured(inputs.scores)[["dataset", "case", "oar", "spacing"]]
    tools = verdict_text.recommended_tools(recommended)
    verdicts = pd.Series(
        [claims.verdict_of(line) for line in compared.lines if "— " in line], dtype=str
    ).value_counts()
    lines = [
        f"{len(pairs.drop_duplicates(['dataset', 'case', 'oar']))} mask pairs at "
        f"{pairs['spacing'].nunique()} voxel sizes, {len(tools)} tools against the mesh "
        "reference. The tools to use per metric and grid (find yours by its spacing), by the "
        "rule of the recommendations, which give each verdict's reason and numbers:",
        *verdict_text.summary_lines(recommended),
        measured_problems(recommended),
        "The paper's claims: "
        + ", ".join(f"{verdict} {n}" for verdict, n in verdicts.items())
        + " (details at the end)."
        if not verdicts.empty
        else "",
    ]
    # One line per metric (at most seven) and three more: never more than SUMMARY_LINES, which
    # the findings test measures rather than this function cutting lines off unseen.
    return Section("Summary", [line for line in lines if line])


def build_findings(
    inputs: AnalysisInputs, recommended: pd.DataFrame | None = None
) -> list[Section]:
    """All sections, in reading order: the summary first, then the details; `recommended`,
    the run's verdict table (`verdicts.verdict_table`; computed from the inputs if None)."""
    if recommended is None:
        recommended = verdicts.verdict_table(inputs.scores, inputs.grid_check, inputs.edge_cases)
    check_scores(inputs.scores)
    spacings = ordered_spacings(measured(inputs.scores)["spacing"], inputs.settings.grid_labels)
    tools = inputs.settings.present_tools(inputs.scores["tool"])
    summary = summarize_deltas(deltas(inputs.scores, tools or None), ["metric", "spacing", "tool"])
    compared = paper_section(inputs, summary, spacings)
    sections = [
        summary_section(inputs, recommended, compared),
        setup_section(inputs, spacings),
        deviation_section(summary, spacings),
        indistinguishable_section(
            inputs.wilcoxon, spacings, list(unavailable_tools(inputs.scores))
        ),
        failures_section(inputs.scores),
        timing_section(inputs.timing),
        grid_section(inputs.grid_check),
        later_tools_section(inputs, spacings),
        edge_section(inputs.edge_cases),
        compared,
    ]
    return [section for section in sections if section is not None]


def make_findings(
    scores_path,
    wilcoxon_csv,
    timing_paths,
    settings: AnalysisSettings,
    md_path,
    html_path,
    grid_check_paths=(),
    edge_case_paths=(),
    environment_paths=(),
    verdicts_path=None,
) -> list[Section]:
    """Findings from the workflow's files and the verdict table (`verdicts_path`, rule
    verdict_table's; computed here only when not given); writes the Markdown and HTML
    renderings.

    `environment_paths`, the scores table and the edge-case files of every environment, add
    the section on the versions since the paper's (study.analysis.environments)."""
    wilcoxon = read_wilcoxon(wilcoxon_csv)
    inputs = read_inputs(
        scores_path, timing_paths, grid_check_paths, edge_case_paths, wilcoxon, settings
    )
    recommended = read_verdicts(verdicts_path) if verdicts_path else None
    sections = build_findings(inputs, recommended)
    for environment in settings.other_environments if environment_paths else []:
        comparison = environments.compare_files(environment_paths, environment)
        sections.append(Section(*environments.findings_section(comparison)))
    Path(md_path).parent.mkdir(parents=True, exist_ok=True)
    Path(md_path).write_text(render_markdown(sections), encoding="utf-8")
    Path(html_path).write_text(render_html(sections), encoding="utf-8")
    return sections
