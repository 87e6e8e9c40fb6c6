"""The paper's claims that the findings check, each as a function of one body of evidence.

A check reads an `Evidence` (Δ summaries per voxel size and per OAR category, the Wilcoxon
table, the median HD times, the edge-case records, the meshing variants' Δ) and returns one
sentence ending in "— agrees.", "— agrees in direction.", "— agrees in part." or
"— differs.", or None when the evidence cannot test the claim. The same checks run on this
run's data (`findings`) and on the paper's own tables (`paper_evidence`), where each must
say "agrees": that is what makes a check a check of the claim. The paper's numbers come
from `study.analysis.paper` only.

Where a claim has a size (an extreme, a range), the sentence gives ours and the paper's, and
the verdict is "agrees" only when the size agrees too (`by_size`); when only the sign does, it
says "agrees in direction".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from adapters import PAPER_TOOLS
from study.analysis import edge_comparison, paper
from study.analysis.delta import measured
from study.analysis.labels import (
    format_number,
    of_the_paper,
    ordered_tools,
    paper_rows,
    tool_label,
    tool_list,
)
from study.analysis.significance import ALPHA
from study.oars import category_phrase
from study.records import REFERENCE, is_anisotropic, spacing_title
from vocabulary import TESTED_KEYS


@dataclass
class Evidence:
    """What the checks read; the paper's version comes from `paper_evidence`.

    by_spacing / by_category / meshing: `statistics.summarize_deltas` frames (display units)
    by metric, spacing (or category) and tool; meshing holds the reference's meshing variants.
    timing: per tool, the median HD time per case (or, for the paper, the rank of it).
    edge_cases: tool, version, metric, case, output, warned, message (Table A3's records).
    """

    by_spacing: pd.DataFrame
    spacings: Sequence[str]
    by_category: pd.DataFrame | None = None
    wilcoxon: pd.DataFrame | None = None
    timing: pd.Series | None = None
    timed_on: str = ""
    edge_cases: pd.DataFrame | None = None
    meshing: pd.DataFrame | None = None


Check = Callable[[Evidence], "str | None"]

BOUNDARY_WEIGHTED: tuple[str, ...] = ("deepmind", "pymia")
"""The paper's tools that weight distances by boundary-element size (pymia adopts DeepMind's
code); its other tools use the point-based definition."""

BY_SIZE = 2.0
"""A size of ours agrees with the paper's when it has the same sign and lies within this
factor of it (our extreme −60 mm agrees with −115 mm; −5.12 mm agrees in direction only)."""

UNIT_GRID = "1x1x1"
"""The isotropic grid of unit size, on which the paper finds MISeval and Metrics Reloaded's
BIoU valid."""


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def by_size(ours: float, theirs: float) -> str:
    """ "agrees" when same sign and within a factor BY_SIZE, "agrees in direction" when only
    the sign agrees, else "differs" (0 has no sign: it agrees only with 0)."""
    if not (np.isfinite(ours) and np.isfinite(theirs)):
        return "differs"
    if np.sign(ours) != np.sign(theirs):
        return "differs"
    if theirs == 0 or 1 / BY_SIZE <= ours / theirs <= BY_SIZE:
        return "agrees"
    return "agrees in direction"


def weakest(verdicts: Sequence[str]) -> str:
    """The verdict of several parts: the weakest of them ("differs" < "agrees in direction"
    < "agrees")."""
    order = ["differs", "agrees in part", "agrees in direction", "agrees"]
    return min(verdicts, key=order.index) if verdicts else "differs"


def _rows(frame: pd.DataFrame, tool: str, metric: str) -> pd.DataFrame:
    return frame.loc[(frame["tool"] == tool) & (frame["metric"] == metric)]


def _tools_with(frame: pd.DataFrame, metric: str, tools: Sequence[str] | None = None) -> list:
    """Tools with a finite mean Δ for `metric` (restricted to `tools` when given)."""
    rows = frame.loc[(frame["metric"] == metric) & frame["mean"].notna()]
    present = [t for t in ordered_tools(rows["tool"]) if tools is None or t in tools]
    return present


def _point_based(frame: pd.DataFrame, metric: str) -> list[str]:
    point_based = [t for t in PAPER_TOOLS if t not in BOUNDARY_WEIGHTED]
    return _tools_with(frame, metric, point_based)


def _cell(frame: pd.DataFrame, tool: str, metric: str, key: str, value: str) -> pd.Series | None:
    rows = _rows(frame, tool, metric)
    rows = rows.loc[rows[key] == value]
    return None if rows.empty or not np.isfinite(rows["mean"].iloc[0]) else rows.iloc[0]


def _v(value: float) -> str:
    """A signed Δ at the paper's precision: "+0.34", "−115", "+34.8"."""
    return ("+" if value > 0 else "") + format_number(value)


def _mm(value: float, unit: str = "mm") -> str:
    return f"{_v(value)} {unit}"


def _sentence(claim: str, here: str, verdict: str) -> str:
    return f"Paper: {claim} Here: {here} — {verdict}."


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _largest_mean(frame: pd.DataFrame, metric: str) -> dict[str, tuple[float, str]]:
    """Per tool of the paper, its largest |mean Δ| over the voxel sizes and the voxel size it
    occurs at (each grid's mean on its own, never pooled)."""
    rows = frame.loc[
        (frame["metric"] == metric) & frame["mean"].notna() & frame["tool"].isin(PAPER_TOOLS)
    ]
    rows = rows.assign(a=rows["mean"].abs())
    best = rows.loc[rows.groupby("tool")["a"].idxmax()]
    return {r.tool: (float(r.a), str(r.spacing)) for r in best.itertuples()}


def check_miseval_hd(e: Evidence) -> str | None:
    """MISeval has the largest |mean ΔHD| of the paper's tools (it ignores the voxel size)."""
    ours, theirs = _largest_mean(e.by_spacing, "HD"), _largest_mean(paper.table_a1(), "HD")
    if "miseval" not in ours or len(ours) < 2:
        return None
    leader = max(ours, key=lambda t: ours[t][0])
    other = max((t for t in ours if t != "miseval"), key=lambda t: ours[t][0])
    paper_other = max((t for t in theirs if t != "miseval"), key=lambda t: theirs[t][0])

    def at(table: dict, tool: str) -> str:
        size, spacing = table[tool]
        return f"{size:.2f} mm ({tool_label(tool)}, at {spacing_title(spacing)})"

    return _sentence(
        f"HD agrees across tools except MISeval (voxel size ignored; largest |mean ΔHD| "
        f"{theirs['miseval'][0]:.2f} mm, the paper's other tools' at most "
        f"{at(theirs, paper_other)}, Table A1).",
        f"of the paper's tools, the largest |mean ΔHD| on one grid is {at(ours, leader)}; "
        f"MISeval's {at(ours, 'miseval')}, the paper's other tools' at most {at(ours, other)}",
        "agrees" if leader == "miseval" else "differs",
    )


def _same_summary(frame: pd.DataFrame, a: str, b: str, metric: str, spacing: str) -> bool | None:
    """Whether two tools' Δ summaries (min, max, mean, SD) print the same at the paper's
    precision; None when either lacks them."""
    cells = [_cell(frame, tool, metric, "spacing", spacing) for tool in (a, b)]
    if any(c is None for c in cells):
        return None
    return all(
        format_number(cells[0][k]) == format_number(cells[1][k]) for k in paper.DELTA_COLUMNS
    )


def equal_pair_check(a: str, b: str, equal: Sequence[str], unequal: Sequence[str] = ()) -> Check:
    """Two tools give the same Δ for the metrics `equal` and not for `unequal`: same printed
    min, max, mean and SD at every voxel size where both have them (Table A1's criterion)."""

    def check(e: Evidence) -> str | None:
        found = {
            m: [_same_summary(e.by_spacing, a, b, m, s) for s in e.spacings]
            for m in (*equal, *unequal)
        }
        found = {m: [x for x in v if x is not None] for m, v in found.items()}
        if not any(found[m] for m in equal):
            return None
        parts, good = [], True
        for metric in equal:
            if found[metric]:
                parts.append(f"{metric} the same at {sum(found[metric])} of {len(found[metric])}")
                good &= all(found[metric])
        for metric in unequal:
            if found[metric]:
                differ = len(found[metric]) - sum(found[metric])
                parts.append(f"{metric} different at {differ} of {len(found[metric])}")
                good &= differ > 0
        claim = f"{tool_label(a)} = {tool_label(b)} for {', '.join(equal)}" + (
            f", not for {', '.join(unequal)}" if unequal else ""
        )
        return _sentence(
            f"{claim} (Table A1).",
            f"Δ summaries {'; '.join(parts)} voxel sizes",
            "agrees" if good else "differs",
        )

    check.__name__ = f"check_{a}_equals_{b}"
    return check


HD95_UNDERESTIMATORS: tuple[str, ...] = ("plastimatch", "segmetrics", "medpy")
"""Tools the Discussion names as over-optimistic for HD95 (negative Δ)."""

HD95_WORST_CATEGORIES: tuple[str, ...] = ("large", "tubular")
"""Where the Discussion places their outliers ("particularly for large and tubular OARs")."""


def _extreme(frame: pd.DataFrame, tool: str, metric: str, key: str) -> tuple[float, str]:
    """The most negative Δ of a tool and the group (voxel size or category) it occurs in."""
    rows = _rows(frame, tool, metric).dropna(subset=["min"])
    if rows.empty:
        return np.nan, ""
    row = rows.loc[rows["min"].idxmin()]
    return float(row["min"]), str(row[key])


def check_hd95_underestimation(e: Evidence) -> str | None:
    """Each named tool's mean ΔHD95 is negative; its most negative Δ is within BY_SIZE of the
    paper's (Table A1) and, where the categories are known, in a large or tubular OAR."""
    tools = [t for t in HD95_UNDERESTIMATORS if _cell_any(e.by_spacing, t, "HD95")]
    if not tools:
        return None
    parts, verdicts = [], []
    for tool in tools:
        means = _rows(e.by_spacing, tool, "HD95").dropna(subset=["mean"])
        theirs_means = _rows(paper.table_a1(), tool, "HD95").dropna(subset=["mean"])
        low, low_at = _extreme(e.by_spacing, tool, "HD95", "spacing")
        theirs_low, _ = _extreme(paper.table_a1(), tool, "HD95", "spacing")
        _, theirs_where = _extreme(paper.table_a2(), tool, "HD95", "category")
        size = by_size(low, theirs_low)
        negative = bool((means["mean"] < 0).all())
        verdicts.append(size if negative else "differs")
        where = ""
        if e.by_category is not None:
            _, ours_where = _extreme(e.by_category, tool, "HD95", "category")
            where = f" on {category_phrase(ours_where)}"
            if ours_where not in HD95_WORST_CATEGORIES and negative:
                verdicts[-1] = weakest([verdicts[-1], "agrees in direction"])
        parts.append(
            f"{tool_label(tool)} mean per grid {_per_grid(means)} (paper "
            f"{_per_grid(theirs_means)}), extreme {_mm(low)} at {spacing_title(low_at)}{where} "
            f"(paper {_mm(theirs_low)} on {category_phrase(theirs_where)})"
        )
    return _sentence(
        f"{tool_list(HD95_UNDERESTIMATORS)} underestimate HD95, with their largest "
        "outliers in large and tubular OARs (Tables A1, A2).",
        "; ".join(parts),
        weakest(verdicts),
    )


def _per_grid(rows: pd.DataFrame) -> str:
    """ "−0.31 at (1, 1, 1) mm, −0.36 at (2, 2, 2) mm": a mean Δ per grid, never pooled."""
    return ", ".join(f"{_v(r.mean)} at {spacing_title(r.spacing)}" for r in rows.itertuples())


def _cell_any(frame: pd.DataFrame, tool: str, metric: str) -> bool:
    return bool(_rows(frame, tool, metric)["mean"].notna().any())


def check_anisotropy(e: Evidence) -> str | None:
    """On each anisotropic grid, DeepMind beats every point-based tool in accuracy (|mean Δ|)
    and precision (SD) for HD95, and in precision for MASD and ASSD (Discussion: "outperforms
    in both accuracy and precision all other tools for the anisotropic grid")."""
    aniso = [s for s in e.spacings if is_anisotropic(s)]
    if not aniso or not _cell_any(e.by_spacing, "deepmind", "HD95"):
        return None
    wins, lost = 0, []
    tests = [("HD95", "mean"), ("HD95", "sd"), ("MASD", "sd"), ("ASSD", "sd")]
    for spacing in aniso:
        for metric, stat in tests:
            mine = _cell(e.by_spacing, "deepmind", metric, "spacing", spacing)
            if mine is None:
                continue
            for tool in _point_based(e.by_spacing, metric):
                other = _cell(e.by_spacing, tool, metric, "spacing", spacing)
                if other is None or not np.isfinite(other[stat]):
                    continue
                if abs(mine[stat]) < abs(other[stat]):
                    wins += 1
                else:
                    what = "|mean|" if stat == "mean" else "SD"
                    lost.append(f"{tool_label(tool)} {metric} {what}")
    total = wins + len(lost)
    if total == 0:
        return None
    spacing = aniso[0]
    mine = _cell(e.by_spacing, "deepmind", "HD95", "spacing", spacing)
    theirs = _cell(paper.table_a1(), "deepmind", "HD95", "spacing", "0.5x0.5x2")
    rivals = [
        (t, _cell(e.by_spacing, t, "HD95", "spacing", spacing))
        for t in _point_based(e.by_spacing, "HD95")
    ]
    rivals = [(t, r) for t, r in rivals if r is not None]
    worst = max(rivals, key=lambda tr: tr[1]["sd"], default=None)
    worst_text = (
        f"; the least precise point-based tool, {tool_label(worst[0])}, "
        f"{_v(worst[1]['mean'])} ± {worst[1]['sd']:.2f} mm (max {_v(worst[1]['max'])})"
        if worst
        else ""
    )
    verdict = "agrees" if not lost else ("agrees in part" if 2 * wins > total else "differs")
    return _sentence(
        "point-based tools do worse than DeepMind on the anisotropic grid: for HD95 DeepMind "
        f"is the most accurate and precise ({_v(theirs['mean'])} ± {theirs['sd']:.2f} mm "
        "at (0.5, 0.5, 2) mm, Table A1), and the most precise for MASD and ASSD.",
        f"on {', '.join(map(spacing_title, aniso))} DeepMind's ΔHD95 is "
        f"{_v(mine['mean'])} ± {mine['sd']:.2f} mm{worst_text}; DeepMind wins {wins} of "
        f"{total} comparisons (HD95 |mean| and SD, MASD and ASSD SD)"
        + (f", not against {', '.join(lost[:6])}" if lost else ""),
        verdict,
    )


def _range(frame: pd.DataFrame, tool: str, metric: str, spacing: str) -> float:
    cell = _cell(frame, tool, metric, "spacing", spacing)
    return np.nan if cell is None else float(cell["max"] - cell["min"])


def check_consistency(e: Evidence) -> str | None:
    """DeepMind's MASD and ASSD Δ span a narrower range (max − min) than every point-based
    tool's at every voxel size, and the ratio of Metrics Reloaded's ASSD range to DeepMind's is
    largest on the anisotropic grid (Discussion: DeepMind "is more consistent"; "particularly
    for ASSD, these discrepancies are even more pronounced for the anisotropic grid")."""
    if not _cell_any(e.by_spacing, "deepmind", "MASD"):
        return None
    narrower, wider = 0, []
    for metric in ("MASD", "ASSD"):
        for spacing in e.spacings:
            mine = _range(e.by_spacing, "deepmind", metric, spacing)
            for tool in _point_based(e.by_spacing, metric):
                other = _range(e.by_spacing, tool, metric, spacing)
                if np.isnan(mine) or np.isnan(other):
                    continue
                if mine < other:
                    narrower += 1
                else:
                    wider.append(f"{tool_label(tool)} {metric} at {spacing_title(spacing)}")
    total = narrower + len(wider)
    if total == 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = {
            s: np.float64(_range(e.by_spacing, "metricsreloaded", "ASSD", s))
            / _range(e.by_spacing, "deepmind", "ASSD", s)
            for s in e.spacings
        }
    ratios = {s: r for s, r in ratios.items() if np.isfinite(r)}
    ratio_text, steepest = "", True
    if ratios and any(is_anisotropic(s) for s in ratios):
        top = max(ratios, key=ratios.get)
        steepest = is_anisotropic(top)
        ratio_text = "; Metrics Reloaded's ASSD range is " + ", ".join(
            f"{r:.1f}× DeepMind's at {spacing_title(s)}" for s, r in ratios.items()
        )
    verdict = "agrees" if not wider and steepest else "agrees in part" if narrower else "differs"
    return _sentence(
        "DeepMind is more consistent than the point-based tools for MASD and ASSD (narrower "
        "min | max), most of all for ASSD on the anisotropic grid (Table A1).",
        f"DeepMind's range is the narrower in {narrower} of {total} comparisons"
        + (f" (not against {', '.join(wider[:6])})" if wider else "")
        + ratio_text,
        verdict,
    )


NSD_CALCULATIONS: dict[str, tuple[str, ...]] = {
    "weighted (DeepMind, pymia)": ("deepmind", "pymia"),
    "point-based (Metrics Reloaded, MONAI)": ("metricsreloaded", "monai"),
}
"""The paper's two NSD calculations and the tools that use each."""


def _signed_extreme(frame: pd.DataFrame, tools: Sequence[str], metric: str) -> float:
    """The Δ of largest magnitude among the tools' min and max (NaN when none)."""
    rows = frame.loc[frame["tool"].isin(list(tools)) & (frame["metric"] == metric)]
    values = np.concatenate([rows["min"].to_numpy(float), rows["max"].to_numpy(float)])
    values = values[np.isfinite(values)]
    return float(values[np.argmax(np.abs(values))]) if values.size else np.nan


def check_nsd_outliers(e: Evidence) -> str | None:
    """Each NSD calculation's most extreme Δ is within BY_SIZE of the paper's (Table A2: the
    point-based one down to −16.1 %pt, the weighted one up to +34.8 %pt)."""
    parts, verdicts = [], []
    for name, tools in NSD_CALCULATIONS.items():
        ours = _signed_extreme(e.by_spacing, tools, "NSD")
        if np.isnan(ours):
            continue
        theirs = _signed_extreme(paper.table_a2(), tools, "NSD")
        verdicts.append(by_size(ours, theirs))
        parts.append(f"{name} {_mm(ours, '%pt')} (paper {_mm(theirs, '%pt')})")
    if not parts:
        return None
    low = float(paper.table_a2().query("metric == 'NSD'")["min"].min())
    high = float(paper.table_a2().query("metric == 'NSD'")["max"].max())
    return _sentence(
        f"NSD has outliers from {_v(low)} to {_v(high)} %pt for both of its "
        "calculations, even DeepMind's (Table A2).",
        "the most extreme ΔNSD of each calculation: " + "; ".join(parts),
        weakest(verdicts),
    )


def check_biou(e: Evidence) -> str | None:
    """Only Metrics Reloaded among the paper's tools offers BIoU; its ΔBIoU scatters least (SD)
    on the unit grid, the only one where it is valid; and there its min and max are within
    BY_SIZE of the paper's (−15.5 and +35.5 %pt, Table A1)."""
    offered = _tools_with(e.by_spacing, "BIoU", PAPER_TOOLS)
    unit = _cell(e.by_spacing, "metricsreloaded", "BIoU", "spacing", UNIT_GRID)
    if unit is None:
        return None
    theirs = _cell(paper.table_a1(), "metricsreloaded", "BIoU", "spacing", UNIT_GRID)
    sds = {
        s: float(c["sd"])
        for s in e.spacings
        if (c := _cell(e.by_spacing, "metricsreloaded", "BIoU", "spacing", s)) is not None
    }
    least = min(sds, key=sds.get)
    verdicts = [
        "agrees" if offered == ["metricsreloaded"] else "differs",
        "agrees" if least == UNIT_GRID else "differs",
        by_size(unit["min"], theirs["min"]),
        by_size(unit["max"], theirs["max"]),
    ]
    return _sentence(
        "only Metrics Reloaded offers BIoU, valid only on the unit grid, where it still "
        f"deviates from {_v(theirs['min'])} to {_v(theirs['max'])} %pt "
        "(Table A1).",
        f"the paper's tools with BIoU: {tool_list(offered)}; ΔBIoU SD by voxel size "
        + ", ".join(f"{sd:.2f} at {spacing_title(s)}" for s, sd in sds.items())
        + f"; on {spacing_title(UNIT_GRID)} from {_v(unit['min'])} to "
        f"{_v(unit['max'])} %pt",
        weakest(verdicts),
    )


def check_reference_significance(e: Evidence) -> str | None:
    """The tests against the reference that are not significant are exactly the paper's
    (Fig. A4 as its text states it)."""
    if e.wilcoxon is None or e.wilcoxon.empty:
        return None
    w = e.wilcoxon
    versus = w.loc[
        ((w["tool_a"] == REFERENCE) | (w["tool_b"] == REFERENCE)) & (w["status"] != "untestable")
    ]
    if versus.empty:
        return None
    same = versus.loc[~versus["significant"].astype(bool)]
    observed = {
        (r.tool_a if r.tool_b == REFERENCE else r.tool_b, r.metric, r.spacing)
        for r in same.itertuples()
    }
    claimed = paper.not_significant()  # stated whole, compared on this run's voxel sizes
    expected = {t for t in claimed if t[2] in set(versus["spacing"])}
    names = [f"{tool_label(t)} {m} at {spacing_title(s)}" for t, m, s in sorted(observed)]
    if len(names) > 8:  # the full list is in the Wilcoxon table
        names = [*names[:8], f"and {len(names) - 8} more"]
    return _sentence(
        "every tool differs significantly from the reference except "
        + ", ".join(f"{tool_label(t)} {m} at {spacing_title(s)}" for t, m, s in sorted(claimed))
        + " (Fig. A4).",
        f"{len(versus) - len(same)} of {len(versus)} tests against the reference are "
        f"significant; not significant: {', '.join(names) or 'none'}",
        "agrees" if observed == expected else "differs",
    )


def check_fastest(e: Evidence) -> str | None:
    """The two fastest tools by median HD time, and as many slowest as the paper names among
    the timed tools, each compared as a set with Fig. A5's ranking."""
    if e.timing is None or e.timing.empty:
        return None
    ranks = paper.timing_ranks().drop(REFERENCE, errors="ignore")
    fastest_paper = list(ranks.loc[ranks <= ranks.nsmallest(2).max()].index)
    slowest_paper = list(ranks.loc[ranks == ranks.max()].index)
    ranked = list(e.timing.drop(REFERENCE, errors="ignore").sort_values(kind="stable").index)
    slow_timed = [t for t in slowest_paper if t in ranked]
    if len(ranked) < len(fastest_paper) + len(slow_timed) or len(ranked) < 2:
        return None
    fastest = ranked[: len(fastest_paper)]
    slowest = ranked[len(ranked) - len(slow_timed) :]
    matches = [set(fastest) == set(fastest_paper), set(slowest) == set(slow_timed)]
    verdict = "agrees" if all(matches) else ("agrees in part" if any(matches) else "differs")
    return _sentence(
        f"{tool_list(fastest_paper)} fastest, {tool_list(slowest_paper)} slowest "
        "(Fig. A5, masks on their CTs' grids).",
        f"by median HD time per case on {e.timed_on}: fastest {tool_list(fastest)}, slowest "
        f"{tool_list(slowest)} (of the paper's slowest, {tool_list(slow_timed)} were "
        "timed)",
        verdict,
    )


def check_edge_cases(e: Evidence) -> str | None:
    """Table A3 cell by cell: every cell of the paper's that we recorded has the paper's
    output class (`edge_comparison`)."""
    if e.edge_cases is None or e.edge_cases.empty:
        return None
    every = edge_comparison.compare(e.edge_cases, paper.table_a3())
    cells = every.loc[every["recorded"]]
    if cells.empty:
        return None
    matched = int(cells["match"].sum())
    verdict = (
        "agrees"
        if matched == len(cells)
        else "agrees in part"
        if 2 * matched > len(cells)
        else "differs"
    )
    return _sentence(
        f"Table A3's {len(paper.table_a3())} cells (edge cases of 11 tools).",
        f"ours has the paper's output in {matched} of the {len(cells)} cells we recorded "
        f"({edge_comparison.tools_text(every)}); each difference and its cause is listed under "
        "'Edge cases against the paper'",
        verdict,
    )


def check_evaluatesegmentation_swap(e: Evidence) -> str | None:
    """Swapping A and B changes EvaluateSegmentation's MASD (and HDp): its early-exit search
    makes them depend on the order (Table A3 S; the paper calls them non-deterministic)."""
    if e.edge_cases is None:
        return None
    rows = e.edge_cases.loc[
        (e.edge_cases["tool"] == "evaluatesegmentation")
        & (e.edge_cases["case"] == "S")
        & e.edge_cases["metric"].isin(["HD95", "MASD"])
    ]
    if rows.empty:
        return None
    outputs = dict(zip(rows["metric"], rows["output"], strict=True))
    return _sentence(
        "EvaluateSegmentation's HDp and MASD change when A and B are swapped (Table A3, S).",
        "swapped, " + ", ".join(f"{m} {o}" for m, o in outputs.items()),
        "agrees" if outputs.get("MASD") == "changed" else "differs",
    )


def sign_class(value: float) -> str:
    """ "+", "−" or "0" as the paper prints a mean: 0 when it rounds to 0.00."""
    if not np.isfinite(value) or abs(value) < 0.005:
        return "0"
    return "+" if value > 0 else "−"


def check_meshing_signs(e: Evidence) -> str | None:
    """Table A4: each meshing variant's mean Δ has the paper's sign (+, −, or 0.00) per metric
    and voxel size; the sentence lists, per variant, every cell whose sign differs."""
    if e.meshing is None or e.meshing.empty:
        return None
    theirs = paper.table_a4().set_index(["tool", "metric", "spacing"])["mean"]
    same, total, parts = 0, 0, []
    for variant in ordered_tools(e.meshing["tool"]):
        rows = e.meshing.loc[e.meshing["tool"] == variant].set_index(["metric", "spacing"])
        keys = [
            (variant, metric, spacing, rows.loc[(metric, spacing), "mean"])
            for metric in TESTED_KEYS
            for spacing in e.spacings
            if (metric, spacing) in rows.index and (variant, metric, spacing) in theirs.index
        ]
        keys = [k for k in keys if np.isfinite(k[3])]
        differ = [
            f"{metric} at {spacing_title(spacing)} {_v(mean)} "
            f"(paper {_v(theirs[v, metric, spacing])})"
            for v, metric, spacing, mean in keys
            if sign_class(mean) != sign_class(theirs[v, metric, spacing])
        ]
        same, total = same + len(keys) - len(differ), total + len(keys)
        parts.append(
            f"{tool_label(variant)} {len(keys) - len(differ)} of {len(keys)}"
            + (f" (not {', '.join(differ)})" if differ else "")
        )
    if total == 0:
        return None
    verdict = "agrees" if same == total else "agrees in part" if 2 * same > total else "differs"
    return _sentence(
        "Table A4's signs: marching cubes about 0 for the distances but +4 to +5 %pt BIoU; "
        "surface nets lower distances and higher NSD than discrete marching cubes.",
        "cells whose mean Δ has the paper's sign (0 when it prints as 0.00): " + "; ".join(parts),
        verdict,
    )


PAPER_CHECKS: tuple[Check, ...] = (
    check_miseval_hd,
    equal_pair_check("metricsreloaded", "monai", ("HD", "HD95", "ASSD", "NSD"), ("MASD",)),
    equal_pair_check("deepmind", "pymia", ("HD", "HD95", "NSD"), ("MASD",)),
    check_hd95_underestimation,
    check_anisotropy,
    check_consistency,
    check_nsd_outliers,
    check_biou,
    check_reference_significance,
    check_edge_cases,
    check_evaluatesegmentation_swap,
    check_meshing_signs,
    check_fastest,
)


def _implementations(wilcoxon: pd.DataFrame) -> int:
    return len(set(wilcoxon["tool_a"]) | set(wilcoxon["tool_b"]))


def paper_family(wilcoxon: pd.DataFrame | None) -> pd.DataFrame | None:
    """The paper's tests corrected for the paper's family: a Bonferroni factor of
    n_voxel_sizes × n_metrics × C(k, 2) counts the run's k implementations, and tools added
    since would make each of the paper's comparisons stricter than the paper's were. The
    factor is scaled to the k' implementations of the paper's tools and the reference."""
    mine = paper_rows(wilcoxon, "tool_a", "tool_b")
    if mine is None or mine.empty:
        return mine
    k_all, k_paper = _implementations(wilcoxon), _implementations(mine)
    if k_all == k_paper:
        return mine
    factor = mine["factor"] * math.comb(k_paper, 2) // math.comb(k_all, 2)
    corrected = (mine["p_value"] * factor).clip(upper=1.0)
    return mine.assign(factor=factor, p_corrected=corrected, significant=corrected < ALPHA)


def paper_only(e: Evidence) -> Evidence:
    """The evidence of the paper's eleven tools and the reference alone: the paper's claims
    are of its tools ("the largest |ΔHD| is MISeval's", "DeepMind and MONAI fastest"), so a
    tool added since must neither win nor lose one of them, nor tighten their tests."""
    timing = e.timing
    if timing is not None:
        timing = timing.loc[[of_the_paper(t) for t in timing.index]]
    return replace(
        e,
        by_spacing=paper_rows(e.by_spacing, "tool"),
        by_category=paper_rows(e.by_category, "tool"),
        wilcoxon=paper_family(e.wilcoxon),
        timing=timing,
        edge_cases=paper_rows(e.edge_cases, "tool"),
    )


def compare_with_paper(evidence: Evidence) -> list[str]:
    """One sentence per claim the evidence can test, in PAPER_CHECKS order, each checked on
    the paper's tools alone (`paper_only`)."""
    mine = paper_only(evidence)
    found = (check(mine) for check in PAPER_CHECKS)
    return [sentence for sentence in found if sentence]


def verdict_of(sentence: str) -> str:
    """The verdict a check's sentence ends with."""
    return sentence.rsplit("— ", 1)[-1].rstrip(".")


# --------------------------------------------------------------------------------------------
# The paper's own evidence
# --------------------------------------------------------------------------------------------


def paper_wilcoxon() -> pd.DataFrame:
    """Fig. A4's tests against the reference as the text states them: every tool and metric
    of Table A1 at every voxel size, significant except `paper.not_significant()`."""
    rows = [
        {
            "spacing": r.spacing,
            "metric": r.metric,
            "tool_a": r.tool,
            "tool_b": REFERENCE,
            "significant": (r.tool, r.metric, r.spacing) not in paper.not_significant(),
            "status": "tested",
        }
        for r in paper.table_a1().itertuples()
    ]
    return pd.DataFrame(rows)


def paper_evidence() -> Evidence:
    """The paper's own tables as evidence: every check must say "agrees" on it."""
    a1 = paper.table_a1()
    edge = paper.table_a3().assign(version=lambda f: f["tool"].map(paper.versions()), message="")
    return Evidence(
        by_spacing=a1,
        spacings=list(dict.fromkeys(a1["spacing"])),
        by_category=paper.table_a2(),
        wilcoxon=paper_wilcoxon(),
        timing=paper.timing_ranks(),
        timed_on="the ranking of Fig. A5",
        edge_cases=edge,
        meshing=paper.table_a4(),
    )


def why_numbers_differ(scores: pd.DataFrame) -> str:
    """How this run differs from the paper's: pairs, shapes, tool versions, reference."""
    scores = measured(scores)
    pairs = len(scores[["dataset", "case", "oar"]].drop_duplicates())
    versions = scores.groupby("tool")["tool_version"].first()
    theirs = paper.versions()
    changed = [
        f"{tool_label(t)} {theirs[t]} → {versions[t]}"
        for t in ordered_tools(versions.index)
        if t in theirs and str(versions[t]) != theirs[t]
    ]
    power = (
        "fewer pairs give the Wilcoxon test less power and the min | max ranges fewer extremes"
        if pairs < paper.PAIRS
        else "more pairs give the Wilcoxon test more power and the min | max ranges more extremes"
    )
    return (
        f"Why numbers differ: {pairs:,} mask pairs here against {paper.PAIRS:,} in the paper "
        f"({power}); the shapes are not HaN-Seg's clinical delineations of head-and-neck "
        f"organs but this run's own data set (Set-up); tool versions changed "
        f"({'; '.join(changed) or 'none'}); and our reference is our own implementation of the "
        "paper's Algorithm 1."
    )
