"""The paper's claims that the findings check, each as a function of this run's data.

Everything written by hand about the paper lives here: the tool versions and number of pairs
it used, its fastest and slowest tools, which tools weight by boundary-element size, and one
check per headline finding (`PAPER_CHECKS`, docs/study.md "What the paper found"). A check
reads the Δ summary, the Wilcoxon table and the timings and returns one sentence ending in
"agrees" or "differs" (or "agrees in part"), or None when the data cannot test the claim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from study.analysis import statistics as st
from study.records import is_anisotropic, parse_spacing_label, spacing_title

PAPER_VERSIONS: dict[str, str] = {
    "anima": "4.2",
    "deepmind": "0.1",
    "medpy": "0.4.0",
    "metricsreloaded": "0.1.0",
    "miseval": "1.2.2",
    "monai": "1.3.0",
    "plastimatch": "1.9.4",
    "pymia": "0.3.2",
    "segmetrics": "1.1.6",
    "simpleitk": "2.3.1",
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
DEGRADE_MARGIN_MM = st.NEGLIGIBLE["mm"]
"""A tool degrades on the anisotropic grid when its |mean Δ| there exceeds DEGRADES times its
|mean Δ| on the finest isotropic grid plus DEGRADE_MARGIN_MM: at least 10 % worse, and by more
than a negligible amount (so 0.001 -> 0.005 mm is not a degradation)."""


Check = Callable[[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, Sequence[str]], str | None]


def _mean(summary: pd.DataFrame, tool: str, metric: str, spacing: str | None = None) -> float:
    rows = summary.loc[(summary["tool"] == tool) & (summary["metric"] == metric)]
    if spacing is not None:
        rows = rows.loc[rows["spacing"] == spacing]
    return float(rows["mean"].mean()) if rows["mean"].notna().any() else np.nan


def _pair_rows(wilcoxon: pd.DataFrame, a: str, b: str, metrics: Sequence[str]) -> pd.DataFrame:
    pair = {a, b}
    mask = [({x, y} == pair) for x, y in zip(wilcoxon["tool_a"], wilcoxon["tool_b"], strict=True)]
    rows = wilcoxon.loc[mask]
    return rows.loc[rows["metric"].isin(metrics) & (rows["status"] != "untestable")]


def check_miseval_hd(summary, wilcoxon, timing, spacings) -> str | None:
    tools = set(summary["tool"])
    if "miseval" not in tools:
        return None
    worst = {
        t: np.nanmax(np.abs([_mean(summary, t, "HD", s) for s in spacings]))
        for t in tools
        if summary.loc[(summary["tool"] == t) & (summary["metric"] == "HD"), "mean"].notna().any()
    }
    leader = max(worst, key=worst.get)
    others = max((v for t, v in worst.items() if t != "miseval"), default=np.nan)
    agrees = leader == "miseval"
    return (
        f"Paper: HD agrees across tools except MISeval (voxel size ignored). Here: largest "
        f"|mean ΔHD| is {st.tool_label(leader)} ({worst[leader]:.2f} mm); the largest of "
        f"the other tools is {others:.2f} mm — {'agrees' if agrees else 'differs'}."
    )


def _equal_pair_check(a: str, b: str, metrics: Sequence[str]):
    def check(summary, wilcoxon, timing, spacings) -> str | None:
        rows = _pair_rows(wilcoxon, a, b, metrics)
        if rows.empty:
            return None
        same = rows["status"].eq("identical") | ~rows["significant"]
        verdict = "agrees" if same.all() else "differs"
        return (
            f"Paper: {st.tool_label(a)} = {st.tool_label(b)} for {', '.join(metrics)}. "
            f"Here: indistinguishable in {int(same.sum())} of {len(rows)} tests "
            f"({int(rows['status'].eq('identical').sum())} identical) — {verdict}."
        )

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
        parts.append(f"{st.tool_label(tool)} mean {st.signed(mean)} mm, min {st.signed(low)} mm")
    return (
        "Paper: Plastimatch and seg-metrics underestimate HD95 with large outliers "
        f"(Plastimatch down to −115 mm). Here: {'; '.join(parts)} — "
        f"{'agrees' if agrees else 'differs'}."
    )


def degrades(anisotropic: float, isotropic: float) -> bool:
    """|mean Δ| on the anisotropic grid > DEGRADES × |mean Δ| isotropic + DEGRADE_MARGIN_MM."""
    return anisotropic > DEGRADES * isotropic + DEGRADE_MARGIN_MM


def _grid_errors(
    summary: pd.DataFrame, aniso: Sequence[str], iso: str
) -> dict[str, tuple[float, float]]:
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
    point_based = [
        t for t in st.ordered_tools(errors) if t in STUDY_TOOLS and t not in BOUNDARY_WEIGHTED
    ]
    if "deepmind" not in errors or not point_based:
        return None
    worse = [t for t in point_based if degrades(*errors[t])]
    deepmind_worse = degrades(*errors["deepmind"])
    agrees = 2 * len(worse) > len(point_based) and not deepmind_worse
    return (
        f"Paper: point-based tools degrade on the anisotropic grid while DeepMind does not. "
        f"Here, |mean Δ| (HD95, MASD, ASSD) on {', '.join(map(spacing_title, aniso))} "
        f"against {spacing_title(finest)} (degrading: more than {DEGRADES:g}× the "
        f"isotropic value + {DEGRADE_MARGIN_MM:g} mm): Google DeepMind "
        f"{errors['deepmind'][0]:.2f} vs {errors['deepmind'][1]:.2f} mm "
        f"({'degrades' if deepmind_worse else 'does not degrade'}); {len(worse)} of "
        f"{len(point_based)} point-based tools degrade ({st.tool_list(worse)}) — "
        f"{'agrees' if agrees else 'differs'}."
    )


def check_reference_significance(summary, wilcoxon, timing, spacings) -> str | None:
    versus = wilcoxon.loc[
        ((wilcoxon["tool_a"] == st.REFERENCE) | (wilcoxon["tool_b"] == st.REFERENCE))
        & (wilcoxon["status"] != "untestable")
    ]
    if versus.empty:
        return None
    same = versus.loc[~versus["significant"]]
    names = [
        f"{st.tool_label(r.tool_a if r.tool_b == st.REFERENCE else r.tool_b)} "
        f"{r.metric} at {spacing_title(r.spacing)}"
        for r in same.itertuples()
    ]
    if len(names) > 8:  # the full list is in the Wilcoxon table
        names = [*names[:8], f"and {len(names) - 8} more"]
    expected = {("medpy", "MASD"), ("monai", "MASD")}
    observed = {
        (r.tool_a if r.tool_b == st.REFERENCE else r.tool_b, r.metric) for r in same.itertuples()
    }
    agrees = observed == expected and all(is_anisotropic(s) for s in same["spacing"])
    return (
        "Paper: every tool differs significantly from the reference except MedPy and MONAI "
        f"for MASD on the anisotropic grid. Here: {len(versus) - len(same)} of "
        f"{len(versus)} tests against the reference are significant; not significant: "
        f"{', '.join(names) or 'none'} — {'agrees' if agrees else 'differs'}."
    )


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
    fastest = ranked[: len(PAPER_FASTEST)]
    slowest = ranked[len(ranked) - len(slow_timed) :]
    matches = [set(fastest) == set(PAPER_FASTEST), set(slowest) == set(slow_timed)]
    verdict = "agrees" if all(matches) else ("agrees in part" if any(matches) else "differs")
    return (
        f"Paper (masks on their CTs' grids): {st.tool_list(PAPER_FASTEST)} fastest, "
        f"{st.tool_list(PAPER_SLOWEST)} slowest. Here, on {st.timed_grids(timing)}: "
        f"fastest {st.tool_list(fastest)}, slowest {st.tool_list(slowest)} (of the paper's "
        f"slowest, {st.tool_list(slow_timed)} were timed) — {verdict}."
    )


PAPER_CHECKS: tuple[Check, ...] = (
    check_miseval_hd,
    _equal_pair_check("metricsreloaded", "monai", ("HD", "HD95")),
    _equal_pair_check("deepmind", "pymia", ("HD", "HD95", "NSD")),
    check_hd95_underestimation,
    check_anisotropy,
    check_reference_significance,
    check_fastest,
)


def compare_with_paper(
    summary: pd.DataFrame,
    wilcoxon: pd.DataFrame,
    timing: pd.DataFrame | None,
    spacings: Sequence[str],
) -> list[str]:
    """One sentence per claim these data can test, in PAPER_CHECKS order."""
    found = (check(summary, wilcoxon, timing, spacings) for check in PAPER_CHECKS)
    return [sentence for sentence in found if sentence]


def why_numbers_differ(scores: pd.DataFrame) -> str:
    """How this run differs from the paper's: pairs, shapes, tool versions, reference."""
    scores = st.measured(scores)
    pairs = len(scores[["dataset", "case", "oar"]].drop_duplicates())
    versions = scores.groupby("tool")["tool_version"].first()
    changed = [
        f"{st.tool_label(t)} {PAPER_VERSIONS[t]} → {versions[t]}"
        for t in st.ordered_tools(versions.index)
        if t in PAPER_VERSIONS and str(versions[t]) != PAPER_VERSIONS[t]
    ]
    return (
        f"Why numbers differ: {pairs} mask pairs here against {PAPER_PAIRS:,} in the paper "
        "(fewer pairs give the Wilcoxon test less power and the min | max ranges fewer "
        "extremes); the shapes are synthetic, not HaN-Seg's clinical delineations; tool "
        f"versions changed ({'; '.join(changed) or 'none'}); and our reference is our own "
        "implementation of the paper's Algorithm 1."
    )
