"""Statistics of the study: differences to the reference, their summaries, and paired tests.

Δ = m_tool − m_reference, matched on (dataset, case, oar, spacing, metric). Positive Δ is an
over-estimate: pessimistic for the distance metrics (mm), optimistic for NSD, BIoU and DSC,
which are reported in percentage points (Δ × 100).

Significance follows the paper: a paired Wilcoxon signed-rank test between every pair of
implementations (the configured tools and the reference), per metric and voxel size, with the
p-value multiplied by the number of comparisons (Bonferroni) and capped at 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from study.records import GRID_NAMES, REFERENCE, REFERENCE_LABELS, REFERENCE_VARIANTS, SCORE_COLUMNS
from vocabulary import BY_KEY, TESTED_KEYS

REFERENCE_MESHING_VARIANTS: tuple[str, ...] = tuple(
    name for name in REFERENCE_VARIANTS if name != REFERENCE
)
"""Reference variants compared against `REFERENCE` in Table A4."""

ALPHA = 0.05
"""Significance level applied to Bonferroni-corrected p-values."""

MATCH_KEYS: tuple[str, ...] = ("dataset", "case", "oar", "spacing", "metric")
"""Columns that identify one mask pair and metric; Δ and paired tests match on these."""

DELTA_KINDS: tuple[str, ...] = ("finite", "nonfinite", "failed", "no_reference")
"""finite: both scores finite; nonfinite: NaN or inf on either side (Δ undefined or infinite);
failed: the tool has status error/unavailable; no_reference: the reference row is missing or
failed, so Δ cannot be formed."""

NEGLIGIBLE: dict[str, float] = {"mm": 0.01, "%pt": 0.1}
"""|Δ| at or below this (in display units) counts as agreeing with the reference."""


# --------------------------------------------------------------------------------------------
# Tool names and order
# --------------------------------------------------------------------------------------------


def tool_label(tool: str) -> str:
    """Display label of a tool key: the adapter's label, a reference label, or the key itself."""
    if tool in REFERENCE_LABELS:
        return REFERENCE_LABELS[tool]
    from adapters import REGISTRY

    adapter = REGISTRY.get(tool)
    return adapter.label if adapter is not None else tool


TOOL_GROUPS: dict[str, str] = {
    "paper": "In the paper",
    "later": "Since the paper",
    "cross-check": "Cross-check",
    "other": "Other",
    "reference": "Reference",
}
"""Groups of implementations, in the order tables and figures show them, with their titles.

paper: the eleven tools of the paper; later: the tools the study added since
(`Adapter.in_paper` False); cross-check: scored like a tool, reported as a check of the
reference (MeshMetrics); other: a tool the registry does not know (no adapter: a scores table
from elsewhere); reference: the reference and its meshing variants."""


def tool_group(tool: str) -> str:
    """Group key (`TOOL_GROUPS`) of a tool key, read off the adapter registry."""
    if tool in REFERENCE_LABELS:
        return "reference"
    from adapters import REGISTRY

    adapter = REGISTRY.get(tool)
    if adapter is None:
        return "other"
    if adapter.role == "cross-check":
        return "cross-check"
    return "paper" if adapter.in_paper else "later"


def group_title(tool: str) -> str:
    """Display title of a tool's group: "In the paper", "Since the paper", ..."""
    return TOOL_GROUPS[tool_group(tool)]


def of_the_paper(tool: str) -> bool:
    """True for the paper's eleven tools and the reference: what its claims are checked on."""
    return tool_group(tool) in ("paper", "reference")


def paper_rows(frame: pd.DataFrame | None, *columns: str) -> pd.DataFrame | None:
    """The rows of `frame` whose every tool column (`columns`) names one of the paper's tools
    or the reference (`of_the_paper`)."""
    if frame is None or frame.empty:
        return frame
    keep = pd.Series(True, index=frame.index)
    for column in columns:
        keep &= frame[column].map(of_the_paper).astype(bool)
    return frame.loc[keep]


def ordered_tools(tools: Iterable[str]) -> list[str]:
    """Tools in the one order used by every table and figure.

    By group (`TOOL_GROUPS`): the paper's tools, the tools since the paper and the cross-checks
    each in the registry's order, then tools the registry does not know alphabetically, then
    the reference and its variants.
    """
    from adapters import REGISTRY

    unique = list(dict.fromkeys(tools))
    group_rank = {group: i for i, group in enumerate(TOOL_GROUPS)}
    registry_rank = {tool: i for i, tool in enumerate(REGISTRY)}
    reference_rank = {name: i for i, name in enumerate(REFERENCE_LABELS)}

    def sort_key(tool: str) -> tuple[int, int, str]:
        within = reference_rank.get(tool, registry_rank.get(tool, len(registry_rank)))
        return (group_rank[tool_group(tool)], within, tool)

    return sorted(unique, key=sort_key)


def group_spans(tools: Sequence[str]) -> list[tuple[str, int, int]]:
    """(group, first, stop) of each run of one group in an ordered tool list (`ordered_tools`),
    so a table or figure can draw a divider at `first` of every group but the first."""
    spans: list[tuple[str, int, int]] = []
    for i, tool in enumerate(tools):
        group = tool_group(tool)
        if spans and spans[-1][0] == group:
            spans[-1] = (group, spans[-1][1], i + 1)
        else:
            spans.append((group, i, i + 1))
    return spans


def shows_groups(tools: Iterable[str]) -> bool:
    """Whether a table or figure of these tools marks their groups: when the tools compared
    with the reference (the reference itself aside) come from more than one group. A study of
    the paper's tools alone looks like the paper's."""
    return len({tool_group(t) for t in tools} - {"reference"}) > 1


def ordered_spacings(spacings: Iterable[str], configured: Sequence[str] | None = None) -> list:
    """Voxel-size labels in configuration order when known, else in order of appearance."""
    unique = list(dict.fromkeys(spacings))
    if not configured:
        return unique
    rank = {label: i for i, label in enumerate(configured)}
    return sorted(unique, key=lambda s: (rank.get(s, len(rank)), s))


def display_scale(metric: str) -> float:
    """Factor from a metric's unit to its display unit: 100 (percentage points) for relative
    metrics, 1 (mm) for distance metrics."""
    return BY_KEY[metric].delta_scale


def display_unit(metric: str) -> str:
    """Unit of Δ in tables and figures: "%pt" for relative metrics, "mm" otherwise."""
    return BY_KEY[metric].delta_unit


def tool_versions(frame: pd.DataFrame) -> str:
    """ "Google DeepMind 0.1; MONAI 1.6.1" from the tool and tool_version columns of `frame`,
    in tool order; several versions of one tool are joined by "/"."""
    versions = frame.groupby("tool")["tool_version"].agg(
        lambda v: "/".join(sorted(set(map(str, v))))
    )
    return "; ".join(f"{tool_label(t)} {versions[t]}" for t in ordered_tools(versions.index))


def tool_list(tools: Iterable[str]) -> str:
    """ "Google DeepMind, MONAI": the tools' labels in tool order ("none" for no tool)."""
    return ", ".join(tool_label(t) for t in ordered_tools(tools)) or "none"


def signed(value: float) -> str:
    """A Δ as the findings print it: "+0.12" ("+0.00", never "-0.00", for a value that rounds
    to zero), or "n/a" when not finite."""
    return f"{round(value, 2) + 0.0:+.2f}" if np.isfinite(value) else "n/a"


# --------------------------------------------------------------------------------------------
# Configuration and Bonferroni factor
# --------------------------------------------------------------------------------------------


def implementations(tools: Sequence[str]) -> list[str]:
    """Implementations compared pairwise: the configured tools plus the reference."""
    if REFERENCE in tools:
        raise ValueError(f"config 'tools' must not list {REFERENCE!r}; it is always included")
    return ordered_tools([*tools, REFERENCE])


def bonferroni_factor(n_voxel_sizes: int, n_metrics: int, n_implementations: int) -> int:
    """Number of comparisons: n_voxel_sizes × n_metrics × C(n_implementations, 2).

    3 × 6 × C(12, 2) = 1,188 for the paper's configuration.
    """
    for name, value in (
        ("n_voxel_sizes", n_voxel_sizes),
        ("n_metrics", n_metrics),
        ("n_implementations", n_implementations),
    ):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    return n_voxel_sizes * n_metrics * math.comb(n_implementations, 2)


def bonferroni_factor_from_config(config: Mapping) -> int:
    """Bonferroni factor of a study configuration (keys "voxel_sizes" and "tools")."""
    for key in ("voxel_sizes", "tools"):
        if key not in config:
            raise KeyError(f"config has no {key!r}; needed for the Bonferroni factor")
    return bonferroni_factor(
        len(config["voxel_sizes"]), len(TESTED_KEYS), len(implementations(config["tools"]))
    )


# --------------------------------------------------------------------------------------------
# Differences to the reference
# --------------------------------------------------------------------------------------------


def check_scores(scores: pd.DataFrame, source: str = "scores table") -> None:
    """Fail early when a scores table lacks columns of `SCORE_COLUMNS` the analysis needs."""
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns and c != "seconds"]
    if missing:
        raise ValueError(f"{source} lacks columns {missing}; expected {list(SCORE_COLUMNS)}")


def is_placeholder(scores: pd.DataFrame) -> pd.Series:
    """Rows that stand for a whole tool rather than one score: an unavailable tool is recorded
    once, with empty case, spacing and metric."""
    blank = pd.Series(False, index=scores.index)
    for column in ("case", "spacing", "metric"):
        blank |= scores[column].isna() | (scores[column].astype(str) == "")
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
    finite = np.isfinite(merged["delta"].to_numpy(dtype=float))
    kind = np.where(
        failed,
        "failed",
        np.where(no_reference, "no_reference", np.where(finite, "finite", "nonfinite")),
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


# --------------------------------------------------------------------------------------------
# Paired Wilcoxon signed-rank tests
# --------------------------------------------------------------------------------------------

WILCOXON_COLUMNS: tuple[str, ...] = (
    "spacing",
    "metric",
    "tool_a",
    "tool_b",
    "n_common",
    "statistic",
    "p_value",
    "p_corrected",
    "factor",
    "significant",
    "status",
)
"""Columns of the Wilcoxon table. status: tested; identical (every paired difference is 0,
so the scores are equal and p = 1); untestable (no pair with finite scores for both)."""


def paired_values(
    scores: pd.DataFrame, tool_a: str, tool_b: str, spacing: str, metric: str
) -> pd.DataFrame:
    """Finite scores of two implementations on the same mask pairs (columns a, b)."""
    keys = ["dataset", "case", "oar"]
    subset = scores.loc[(scores["spacing"] == spacing) & (scores["metric"] == metric)]
    finite = subset.loc[np.isfinite(subset["value"].astype(float)) & (subset["status"] == "ok")]
    side_a = finite.loc[finite["tool"] == tool_a, [*keys, "value"]].rename(columns={"value": "a"})
    side_b = finite.loc[finite["tool"] == tool_b, [*keys, "value"]].rename(columns={"value": "b"})
    return side_a.merge(side_b, on=keys, how="inner")


def wilcoxon_pair(a: np.ndarray, b: np.ndarray, factor: int) -> dict:
    """Paired two-sided Wilcoxon signed-rank test of a against b, Bonferroni-corrected.

    p_corrected = min(1, p × factor). Zero differences are discarded (scipy's "wilcox" rule);
    if all differences are zero the scores are identical and p = 1.
    """
    n_common = int(len(a))
    if n_common == 0:
        return {
            "n_common": 0,
            "statistic": np.nan,
            "p_value": np.nan,
            "p_corrected": np.nan,
            "significant": False,
            "status": "untestable",
        }
    if np.all(np.asarray(a) == np.asarray(b)):
        return {
            "n_common": n_common,
            "statistic": np.nan,
            "p_value": 1.0,
            "p_corrected": 1.0,
            "significant": False,
            "status": "identical",
        }
    result = wilcoxon(a, b, zero_method="wilcox", alternative="two-sided")
    p_value = float(result.pvalue)
    p_corrected = min(1.0, p_value * factor)
    return {
        "n_common": n_common,
        "statistic": float(result.statistic),
        "p_value": p_value,
        "p_corrected": p_corrected,
        "significant": p_corrected < ALPHA,
        "status": "tested",
    }


def wilcoxon_table(
    scores: pd.DataFrame,
    implementation_names: Sequence[str],
    spacings: Sequence[str],
    factor: int,
    metrics: Sequence[str] = TESTED_KEYS,
) -> pd.DataFrame:
    """Every pair of implementations, per voxel size and metric (in table order)."""
    check_scores(scores)
    ordered = ordered_tools(implementation_names)
    rows = []
    for spacing in spacings:
        for metric in metrics:
            for tool_a, tool_b in combinations(ordered, 2):
                pair = paired_values(scores, tool_a, tool_b, spacing, metric)
                test = wilcoxon_pair(pair["a"].to_numpy(float), pair["b"].to_numpy(float), factor)
                rows.append(
                    {
                        "spacing": spacing,
                        "metric": metric,
                        "tool_a": tool_a,
                        "tool_b": tool_b,
                        "factor": factor,
                        **test,
                    }
                )
    return pd.DataFrame(rows, columns=list(WILCOXON_COLUMNS))


def smallest_attainable_p(n_pairs: int) -> float:
    """Smallest two-sided p of the exact signed-rank test on n non-zero differences: 2 / 2^n.

    With few pairs even a perfectly consistent difference cannot survive a large Bonferroni
    factor; the findings say so instead of reporting "no difference". Written as 2^(1 - n),
    which underflows to 0 past about 1,075 pairs, where 2 / 2^n would overflow first (1,024).
    """
    if n_pairs < 1:
        return 1.0
    return min(1.0, 2.0 ** (1 - n_pairs))


# --------------------------------------------------------------------------------------------
# Execution time
# --------------------------------------------------------------------------------------------


def time_per_case(timing: pd.DataFrame) -> pd.DataFrame:
    """Median over repeats of the HD time of each tool on each mask pair (status ok only)."""
    ok = timing.loc[(timing["status"] == "ok") & np.isfinite(timing["seconds"])]
    keys = ["dataset", "case", "oar", "category", "tool"]
    return ok.groupby(keys, as_index=False)["seconds"].median()


def timed_grids(timing: pd.DataFrame) -> str:
    """What the timing records timed: "scan-sized grids of 301 × 301 × 281 voxels", or with
    shapes that differ (cropped grids) the smallest and largest by voxel count."""
    grids = sorted(GRID_NAMES.get(grid, grid) or "unnamed" for grid in timing["grid"].unique())
    shapes = sorted(
        timing["shape"].unique(), key=lambda label: math.prod(int(n) for n in label.split("x"))
    )
    sizes = [label.replace("x", " × ") for label in (shapes[0], shapes[-1])]
    size = sizes[0] if len(shapes) == 1 else f"{sizes[0]} to {sizes[1]}"
    return f"{' and '.join(grids)} grids of {size} voxels"
