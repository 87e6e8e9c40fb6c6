"""The generated summary: what the data say, in sentences, and how that compares with the paper.

Every sentence is computed from the Δ summaries, the Wilcoxon table and the timings; nothing
here is written by hand except the paper's claims being checked (docs/study.md, "What the paper
found").
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from study import grid_check
from study import statistics as st
from study.records import parse_spacing_label
from study.tables import configured_spacings, read_scores

NEGLIGIBLE: dict[str, float] = {"mm": 0.01, "%pt": 0.1}
"""|Δ| at or below this (in display units) counts as agreeing with the reference."""

PAPER_VERSIONS: dict[str, str] = {
    "anima": "4.2", "deepmind": "0.1", "medpy": "0.4.0", "metricsreloaded": "0.1.0",
    "miseval": "1.2.2", "monai": "1.3.0", "plastimatch": "1.9.4", "pymia": "0.3.2",
    "segmetrics": "1.1.6", "simpleitk": "2.3.1",
}
"""Tool versions the paper used (Feb 2024), to flag where ours differ."""

PAPER_FASTEST: tuple[str, ...] = ("deepmind", "monai")
PAPER_SLOWEST: tuple[str, ...] = ("miseval", "medpy", "metricsreloaded")
"""The paper's HD timing (Fig. A5, every mask on its CT's grid): fastest and slowest tools."""

PAPER_PAIRS = 1561
"""Mask pairs in the paper's study."""

BOUNDARY_WEIGHTED: tuple[str, ...] = ("deepmind", "pymia")
"""Study tools that weight distances by boundary-element size (pymia adopts DeepMind's code);
the paper's other study tools use the point-based definition."""

DEGRADES = 1.1
DEGRADE_MARGIN_MM = NEGLIGIBLE["mm"]
"""A tool degrades on the anisotropic grid when its |mean Δ| there exceeds DEGRADES times its
|mean Δ| on the finest isotropic grid plus DEGRADE_MARGIN_MM: at least 10 % worse, and by more
than a negligible amount (so 0.001 -> 0.005 mm is not a degradation)."""


@dataclass
class Section:
    """A titled list of sentences (Markdown inline syntax allowed: **bold**)."""

    title: str
    lines: list[str] = field(default_factory=list)


@dataclass
class AnalysisInputs:
    """Everything the findings are computed from."""

    scores: pd.DataFrame
    wilcoxon: pd.DataFrame
    config: Mapping
    timing: pd.DataFrame | None = None
    grid_check: pd.DataFrame | None = None


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

def is_anisotropic(label: str) -> bool:
    return len(set(parse_spacing_label(label))) > 1


def signed(value: float) -> str:
    return f"{value:+.2f}" if np.isfinite(value) else "n/a"


def _label_list(tools: Sequence[str]) -> str:
    return ", ".join(st.tool_label(t) for t in st.ordered_tools(tools)) or "none"


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------

def setup_section(inputs: AnalysisInputs, spacings: Sequence[str]) -> Section:
    """What was compared: data, configuration, tools and versions, Bonferroni factor."""
    scores, config = st.measured(inputs.scores), inputs.config
    pairs = scores[["dataset", "case", "oar"]].drop_duplicates()
    metrics = config.get("metrics", {})
    factor = int(inputs.wilcoxon["factor"].iloc[0]) if not inputs.wilcoxon.empty else None
    return Section("Set-up", [
        f"Dataset **{', '.join(sorted(pairs['dataset'].unique()))}**: {len(pairs)} mask pairs "
        f"({pairs['case'].nunique()} case(s), {pairs['oar'].nunique()} OARs) at "
        f"{len(spacings)} voxel sizes: {', '.join(st.spacing_title(s) for s in spacings)}.",
        f"HDp with p = {metrics.get('percentile', 95)}; NSD and BIoU with tau = "
        f"{metrics.get('tau_mm', 2.0)} mm. Δ = tool − reference; NSD and BIoU in percentage "
        "points.",
        f"Versions: {st.tool_versions(scores)}.",
        f"Wilcoxon p-values are multiplied by the Bonferroni factor {factor:,}."
        if factor else "No Wilcoxon tests were run.",
    ])


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
    """"all voxel sizes" or the listed ones."""
    if len(every) > 1 and list(spacings) == list(every):
        return "all voxel sizes"
    return ", ".join(st.spacing_title(s) for s in spacings)


def tool_deviation(stats: pd.DataFrame, tolerance: float, spacings: Sequence[str]) -> str:
    """"over-estimates at (2, 2, 2) mm by +10.2 [+1.29, +18.7]; agrees at (1, 1, 1) mm"."""
    groups: dict[str, list[str]] = {}
    for spacing, row in stats.iterrows():
        groups.setdefault(spacing_verdict(row, tolerance), []).append(spacing)
    parts = []
    for verdict, members in groups.items():
        if verdict in ("over-estimates", "under-estimates", "scatters around the reference"):
            numbers = ", ".join(
                f"{signed(stats.loc[s, 'mean'])} [{signed(stats.loc[s, 'min'])}, "
                f"{signed(stats.loc[s, 'max'])}] at {st.spacing_title(s)}" for s in members)
            parts.append(f"{verdict} (mean [min, max]: {numbers})")
        else:
            parts.append(f"{verdict} at {spacings_text(members, spacings)}")
    excluded = int((stats["n"] - stats["n_finite"]).sum())
    return "; ".join(parts) + (f"; {excluded} Δ not finite or failed" if excluded else "")


def deviation_section(summary: pd.DataFrame, spacings: Sequence[str]) -> Section:
    """Per metric, every tool's direction and size of Δ, largest mean |Δ| first."""
    section = Section("Over- and under-estimation")
    for metric in [m for m in st.TESTED_METRICS if m in set(summary["metric"])]:
        unit = st.display_unit(metric)
        rows = summary.loc[summary["metric"] == metric]
        ranked = rows.groupby("tool")["mean"].apply(lambda m: m.abs().max()).dropna() \
            .sort_values(ascending=False)
        tools = []
        for tool in ranked.index:
            stats = rows.loc[rows["tool"] == tool].set_index("spacing")
            stats = stats.reindex([s for s in spacings if s in stats.index])
            tools.append(f"{st.tool_label(tool)} "
                         f"{tool_deviation(stats, NEGLIGIBLE[unit], spacings)}")
        if tools:
            section.lines.append(f"**Δ{metric}** ({unit}, |Δ| ≤ {NEGLIGIBLE[unit]} counts as "
                                 "agreement): " + " · ".join(tools) + ".")
    return section


def _pair_lines(rows: pd.DataFrame, spacings: Sequence[str]) -> list[str]:
    """"A and B: HD at all voxel sizes; MASD at (2, 2, 2) mm." per pair of implementations."""
    lines = []
    for (a, b), pair in rows.groupby(["tool_a", "tool_b"], sort=False):
        where = "; ".join(f"{metric} at {spacings_text(list(group['spacing']), spacings)}"
                          for metric, group in pair.groupby("metric", sort=False))
        lines.append(f"{st.tool_label(a)} and {st.tool_label(b)}: {where}.")
    return lines


def indistinguishable_section(wilcoxon: pd.DataFrame, spacings: Sequence[str]) -> Section:
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
    section.lines += [f"Identical scores — {line}" for line in _pair_lines(identical, spacings)]
    tested = wilcoxon.loc[wilcoxon["status"] == "tested"]
    floor = min(1.0, st.smallest_attainable_p(int(tested["n_common"].max())) * factor) \
        if not tested.empty else 1.0
    if not tested.empty and floor >= st.ALPHA:
        section.lines.append(
            f"No test can be significant here: with at most {int(tested['n_common'].max())} "
            f"common pairs the smallest attainable p × {factor:,} is {floor:.3g} ≥ {st.ALPHA}, "
            "so 'not significant' would only mean too few pairs; run a larger study.")
    else:
        same = tested.loc[~tested["significant"].astype(bool)]
        section.lines += [f"Not significantly different (p × {factor:,} ≥ {st.ALPHA}) — {line}"
                          for line in _pair_lines(same, spacings)]
        if same.empty and not tested.empty:
            section.lines.append("Every tested pair differs significantly.")
    untestable = int((wilcoxon["status"] == "untestable").sum())
    section.lines.append(f"{untestable} of {len(wilcoxon)} comparisons had no common finite "
                         "scores (a tool lacks the metric, failed, or is not installed).")
    return section


def failures_section(scores: pd.DataFrame) -> Section:
    """Tools that were not installed, and how many scores were errors or non-finite."""
    section = Section("Missing and non-finite scores")
    status_counts = scores.groupby(["tool", "status"]).size().unstack(fill_value=0)
    for tool in st.ordered_tools(status_counts.index):
        counts = status_counts.loc[tool]
        total = int(counts.sum())
        if counts.get("unavailable", 0) == total:
            message = str(scores.loc[scores["tool"] == tool, "message"].iloc[0])
            section.lines.append(f"{st.tool_label(tool)}: not available "
                                 f"({message.split(' (')[0]}).")
            continue
        issues = {k: int(counts.get(k, 0)) for k in ("error", "nan", "inf", "unavailable")}
        if any(issues.values()):
            text = ", ".join(f"{n} {k}" for k, n in issues.items() if n)
            section.lines.append(f"{st.tool_label(tool)}: {text} of {total} scores.")
    if not section.lines:
        section.lines.append("Every score of every tool is finite.")
    return section


def timing_section(timing: pd.DataFrame | None) -> Section:
    """Median HD time per case and tool, fastest first."""
    section = Section("HD execution time")
    if timing is None or timing.empty:
        section.lines.append("No timing records.")
        return section
    medians = st.time_per_case(timing).groupby("tool")["seconds"].median().sort_values()
    section.lines.append(f"Timed on {st.timed_grids(timing)}, {timing['case'].nunique()} "
                         f"case(s), {timing['oar'].nunique()} OARs.")
    section.lines.append("Median per case, fastest first: " + "; ".join(
        f"{st.tool_label(t)} {s * 1000:.3g} ms" for t, s in medians.items()) + ".")
    return section


def grid_section(rows: pd.DataFrame | None) -> Section | None:
    """Scores on cropped against scan-sized grids (study/grid_check.py): who is invariant, and
    each tool and metric that changed, with the largest |d| and an example."""
    if rows is None:
        return None
    section = Section("Scores on cropped and scan-sized grids")
    if rows.empty:
        section.lines.append("No grid-check records.")
        return section
    differences = grid_check.grid_differences(rows)
    changed = grid_check.changed_scores(differences)
    pairs = differences.drop_duplicates(["spacing", "oar"]).groupby("spacing").size()
    checked = ", ".join(st.spacing_title(s) for s in pairs.index)
    same = [t for t in st.ordered_tools(differences["tool"]) if t not in set(changed["tool"])]
    unchanged = differences.loc[~differences["changed"], "difference"].abs()
    largest = unchanged.max() if unchanged.notna().any() else 0.0
    section.lines.append(
        f"The same pairs scored on cropped grids and on scan-sized grids ({pairs.max()} pairs at "
        f"{checked}, one of them with observer B empty). The same "
        f"(|d| ≤ {grid_check.SAME_TOLERANCE:g}) on every pair and metric: {_label_list(same)}; "
        f"the largest |d| among the scores that stayed the same is {largest:.2g}.")
    for row in changed.itertuples():
        largest = ("" if np.isnan(row.max_abs_difference)
                   else f", largest |d| {row.max_abs_difference:.4g}")
        section.lines.append(
            f"**{st.tool_label(row.tool)} {row.metric} depends on the grid**: changed on "
            f"{row.changed} of {row.compared} pairs{largest}; e.g. {row.example}.")
    return section


# --------------------------------------------------------------------------------------------
# Comparison with the paper
# --------------------------------------------------------------------------------------------

Check = Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, Sequence[str]], str | None]


def _mean(summary: pd.DataFrame, tool: str, metric: str, spacing: str | None = None) -> float:
    rows = summary.loc[(summary["tool"] == tool) & (summary["metric"] == metric)]
    if spacing is not None:
        rows = rows.loc[rows["spacing"] == spacing]
    return float(rows["mean"].mean()) if rows["mean"].notna().any() else np.nan


def _pair_rows(wilcoxon: pd.DataFrame, a: str, b: str, metrics: Sequence[str]) -> pd.DataFrame:
    pair = {a, b}
    mask = [({x, y} == pair) for x, y in zip(wilcoxon["tool_a"], wilcoxon["tool_b"],
                                             strict=True)]
    rows = wilcoxon.loc[mask]
    return rows.loc[rows["metric"].isin(metrics) & (rows["status"] != "untestable")]


def check_miseval_hd(summary, wilcoxon, timing, spacings) -> str | None:
    tools = set(summary["tool"])
    if "miseval" not in tools:
        return None
    worst = {t: np.nanmax(np.abs([_mean(summary, t, "HD", s) for s in spacings]))
             for t in tools if summary.loc[(summary["tool"] == t) & (summary["metric"] == "HD"),
                                           "mean"].notna().any()}
    leader = max(worst, key=worst.get)
    others = max((v for t, v in worst.items() if t != "miseval"), default=np.nan)
    agrees = leader == "miseval"
    return (f"Paper: HD agrees across tools except MISeval (voxel size ignored). Here: largest "
            f"|mean ΔHD| is {st.tool_label(leader)} ({worst[leader]:.2f} mm); the largest of "
            f"the other tools is {others:.2f} mm — {'agrees' if agrees else 'differs'}.")


def _equal_pair_check(a: str, b: str, metrics: Sequence[str]):
    def check(summary, wilcoxon, timing, spacings) -> str | None:
        rows = _pair_rows(wilcoxon, a, b, metrics)
        if rows.empty:
            return None
        same = rows["status"].eq("identical") | ~rows["significant"]
        verdict = "agrees" if same.all() else "differs"
        return (f"Paper: {st.tool_label(a)} = {st.tool_label(b)} for {', '.join(metrics)}. "
                f"Here: indistinguishable in {int(same.sum())} of {len(rows)} tests "
                f"({int(rows['status'].eq('identical').sum())} identical) — {verdict}.")
    return check


def check_hd95_underestimation(summary, wilcoxon, timing, spacings) -> str | None:
    found = [t for t in ("plastimatch", "segmetrics") if t in set(summary["tool"])]
    if not found:
        return None
    parts, agrees = [], True
    for tool in found:
        rows = summary.loc[(summary["tool"] == tool) & (summary["metric"] == "HD95")]
        mean, low = float(rows["mean"].mean()), float(rows["min"].min())
        agrees &= bool(mean < 0)
        parts.append(f"{st.tool_label(tool)} mean {signed(mean)} mm, min {signed(low)} mm")
    return ("Paper: Plastimatch and seg-metrics underestimate HD95 with large outliers "
            f"(Plastimatch down to −115 mm). Here: {'; '.join(parts)} — "
            f"{'agrees' if agrees else 'differs'}.")


def degrades(anisotropic: float, isotropic: float) -> bool:
    """|mean Δ| on the anisotropic grid > DEGRADES × |mean Δ| isotropic + DEGRADE_MARGIN_MM."""
    return anisotropic > DEGRADES * isotropic + DEGRADE_MARGIN_MM


def _grid_errors(summary: pd.DataFrame, aniso: Sequence[str],
                 iso: str) -> dict[str, tuple[float, float]]:
    """Per tool, (anisotropic, isotropic) |mean Δ| in mm averaged over HD95, MASD and ASSD;
    tools without a finite value on both grids are left out."""
    distance = summary.loc[summary["metric"].isin(["HD95", "MASD", "ASSD"])]
    errors = {}
    for tool, rows in distance.groupby("tool"):
        a = rows.loc[rows["spacing"].isin(aniso), "mean"].abs().mean()
        i = rows.loc[rows["spacing"] == iso, "mean"].abs().mean()
        if np.isfinite(a) and np.isfinite(i):
            errors[tool] = (float(a), float(i))
    return errors


def check_anisotropy(summary, wilcoxon, timing, spacings) -> str | None:
    """Agrees when DeepMind does not degrade (`degrades`) and more than half of the point-based
    study tools (all but `BOUNDARY_WEIGHTED`) do, comparing the anisotropic grid(s) with the
    finest isotropic one."""
    from adapters import STUDY_TOOLS

    aniso = [s for s in spacings if is_anisotropic(s)]
    iso = [s for s in spacings if not is_anisotropic(s)]
    if not aniso or not iso:
        return None
    finest = min(iso, key=lambda s: parse_spacing_label(s)[0])
    errors = _grid_errors(summary, aniso, finest)
    point_based = [t for t in st.ordered_tools(errors)
                   if t in STUDY_TOOLS and t not in BOUNDARY_WEIGHTED]
    if "deepmind" not in errors or not point_based:
        return None
    worse = [t for t in point_based if degrades(*errors[t])]
    deepmind_worse = degrades(*errors["deepmind"])
    agrees = 2 * len(worse) > len(point_based) and not deepmind_worse
    return (f"Paper: point-based tools degrade on the anisotropic grid while DeepMind does not. "
            f"Here, |mean Δ| (HD95, MASD, ASSD) on {', '.join(map(st.spacing_title, aniso))} "
            f"against {st.spacing_title(finest)} (degrading: more than {DEGRADES:g}× the "
            f"isotropic value + {DEGRADE_MARGIN_MM:g} mm): Google DeepMind "
            f"{errors['deepmind'][0]:.2f} vs {errors['deepmind'][1]:.2f} mm "
            f"({'degrades' if deepmind_worse else 'does not degrade'}); {len(worse)} of "
            f"{len(point_based)} point-based tools degrade ({_label_list(worse)}) — "
            f"{'agrees' if agrees else 'differs'}.")


def check_reference_significance(summary, wilcoxon, timing, spacings) -> str | None:
    versus = wilcoxon.loc[((wilcoxon["tool_a"] == st.REFERENCE)
                           | (wilcoxon["tool_b"] == st.REFERENCE))
                          & (wilcoxon["status"] != "untestable")]
    if versus.empty:
        return None
    same = versus.loc[~versus["significant"]]
    names = [f"{st.tool_label(r.tool_a if r.tool_b == st.REFERENCE else r.tool_b)} "
             f"{r.metric} at {st.spacing_title(r.spacing)}" for r in same.itertuples()]
    if len(names) > 8:  # the full list is in the Wilcoxon table
        names = [*names[:8], f"and {len(names) - 8} more"]
    expected = {("medpy", "MASD"), ("monai", "MASD")}
    observed = {(r.tool_a if r.tool_b == st.REFERENCE else r.tool_b, r.metric)
                for r in same.itertuples()}
    agrees = observed == expected and all(is_anisotropic(s) for s in same["spacing"])
    return ("Paper: every tool differs significantly from the reference except MedPy and MONAI "
            f"for MASD on the anisotropic grid. Here: {len(versus) - len(same)} of "
            f"{len(versus)} tests against the reference are significant; not significant: "
            f"{', '.join(names) or 'none'} — {'agrees' if agrees else 'differs'}.")


def check_fastest(summary, wilcoxon, timing, spacings) -> str | None:
    """The fastest len(PAPER_FASTEST) tools by median HD time per case, and as many slowest as
    there are of the paper's slowest among the timed tools, each compared as a set."""
    if timing is None or timing.empty:
        return None
    per_case = st.time_per_case(timing.loc[timing["tool"] != st.REFERENCE])
    ranked = list(per_case.groupby("tool")["seconds"].median().sort_values().index)
    slow_timed = [tool for tool in PAPER_SLOWEST if tool in ranked]
    if len(ranked) < len(PAPER_FASTEST) + len(slow_timed) or len(ranked) < 2:
        return None
    fastest = ranked[:len(PAPER_FASTEST)]
    slowest = ranked[len(ranked) - len(slow_timed):]
    matches = [set(fastest) == set(PAPER_FASTEST), set(slowest) == set(slow_timed)]
    verdict = "agrees" if all(matches) else ("agrees in part" if any(matches) else "differs")
    return (f"Paper (masks on their CTs' grids): {_label_list(PAPER_FASTEST)} fastest, "
            f"{_label_list(PAPER_SLOWEST)} slowest. Here, on {st.timed_grids(timing)}: "
            f"fastest {_label_list(fastest)}, slowest {_label_list(slowest)} (of the paper's "
            f"slowest, {_label_list(slow_timed)} were timed) — {verdict}.")


PAPER_CHECKS: tuple[Check, ...] = (
    check_miseval_hd,
    _equal_pair_check("metricsreloaded", "monai", ("HD", "HD95")),
    _equal_pair_check("deepmind", "pymia", ("HD", "HD95", "NSD")),
    check_hd95_underestimation,
    check_anisotropy,
    check_reference_significance,
    check_fastest,
)


def paper_section(inputs: AnalysisInputs, summary: pd.DataFrame, spacings) -> Section:
    """The paper's headline findings checked against these data, and why they may differ."""
    section = Section("Compared with the paper")
    for check in PAPER_CHECKS:
        sentence = check(summary, inputs.wilcoxon, inputs.timing, spacings)
        if sentence:
            section.lines.append(sentence)
    scores = st.measured(inputs.scores)
    pairs = len(scores[["dataset", "case", "oar"]].drop_duplicates())
    versions = scores.groupby("tool")["tool_version"].first()
    changed = [f"{st.tool_label(t)} {PAPER_VERSIONS[t]} → {versions[t]}"
               for t in st.ordered_tools(versions.index)
               if t in PAPER_VERSIONS and str(versions[t]) != PAPER_VERSIONS[t]]
    section.lines.append(
        f"Why numbers differ: {pairs} mask pairs here against {PAPER_PAIRS:,} in the paper "
        "(fewer pairs give the Wilcoxon test less power and the min | max ranges fewer "
        "extremes); the shapes are synthetic, not HaN-Seg's clinical delineations; tool "
        f"versions changed ({'; '.join(changed) or 'none'}); and our reference is our own "
        "implementation of the paper's Algorithm 1.")
    return section


# --------------------------------------------------------------------------------------------
# Assembly and rendering
# --------------------------------------------------------------------------------------------

def build_findings(inputs: AnalysisInputs) -> list[Section]:
    """All sections, in reading order."""
    st.check_scores(inputs.scores)
    spacings = st.ordered_spacings(st.measured(inputs.scores)["spacing"],
                                   configured_spacings(inputs.config))
    tools = [t for t in inputs.config.get("tools", []) if t in set(inputs.scores["tool"])]
    summary = st.summarize_deltas(st.deltas(inputs.scores, tools or None),
                                  ["metric", "spacing", "tool"])
    sections = [setup_section(inputs, spacings), deviation_section(summary, spacings),
                indistinguishable_section(inputs.wilcoxon, spacings),
                failures_section(inputs.scores), timing_section(inputs.timing),
                grid_section(inputs.grid_check), paper_section(inputs, summary, spacings)]
    return [section for section in sections if section is not None]


def render_markdown(sections: Sequence[Section], title: str = "Findings") -> str:
    out = [f"# {title}", ""]
    for section in sections:
        out += [f"## {section.title}", ""] + [f"- {line}" for line in section.lines] + [""]
    return "\n".join(out)


def render_html(sections: Sequence[Section], title: str = "Findings") -> str:
    """Self-contained HTML of the same sections (for the Snakemake report)."""
    def inline(text: str) -> str:
        escaped = html.escape(text)
        parts = escaped.split("**")  # **bold** -> <b>bold</b>
        return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    body = "".join(f"<h2>{html.escape(s.title)}</h2><ul>"
                   + "".join(f"<li>{inline(line)}</li>" for line in s.lines) + "</ul>"
                   for s in sections)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            "</title><style>body{font-family:sans-serif;font-size:14px;max-width:60em}"
            f"li{{margin:0.3em 0}}</style></head><body><h1>{html.escape(title)}</h1>{body}"
            "</body></html>\n")


def make_findings(scores_path, wilcoxon_csv, timing_paths, config: Mapping, md_path,
                  html_path, grid_check_paths=()) -> list[Section]:
    """Findings from the workflow's files; writes the Markdown and HTML renderings."""
    from study.figures import read_timing  # here, so findings alone need no matplotlib
    wilcoxon = pd.read_csv(wilcoxon_csv, dtype={"spacing": str})
    timing = read_timing(timing_paths) if timing_paths else None
    checked = grid_check.read_grid_check(grid_check_paths) if grid_check_paths else None
    sections = build_findings(AnalysisInputs(read_scores(scores_path), wilcoxon, config,
                                             timing, checked))
    Path(md_path).parent.mkdir(parents=True, exist_ok=True)
    Path(md_path).write_text(render_markdown(sections), encoding="utf-8")
    Path(html_path).write_text(render_html(sections), encoding="utf-8")
    return sections
