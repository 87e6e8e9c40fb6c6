"""Significance, as in the paper: a paired Wilcoxon signed-rank test between every pair of
implementations (the configured tools and the reference), per metric and voxel size, with the
p-value multiplied by the number of comparisons (Bonferroni) and capped at 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from study.analysis.labels import ordered_tools
from study.analysis.read import check_scores
from study.analysis.settings import AnalysisSettings
from study.records import REFERENCE
from vocabulary import TESTED_KEYS

ALPHA = 0.05
"""Significance level applied to Bonferroni-corrected p-values."""


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


def bonferroni_factor_of(settings: AnalysisSettings) -> int:
    """Bonferroni factor of a study: its voxel sizes × the tested metrics × C(its tools and
    the reference, 2) (the native grid, when scored, is not one of the paper's voxel sizes)."""
    return bonferroni_factor(
        settings.n_voxel_sizes, len(TESTED_KEYS), len(implementations(settings.tools))
    )


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


EMPTY = pd.Series(dtype=float)


def finite_by_tool(scores: pd.DataFrame, spacing: str, metric: str) -> dict[str, pd.Series]:
    """Per tool, its finite scores on one grid and metric, indexed by mask pair."""
    keys = ["dataset", "case", "oar"]
    subset = scores.loc[(scores["spacing"] == spacing) & (scores["metric"] == metric)]
    finite = subset.loc[np.isfinite(subset["value"].astype(float)) & (subset["status"] == "ok")]
    return {
        tool: rows.set_index(keys)["value"].astype(float)
        for tool, rows in finite.groupby("tool", observed=True)
    }


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
            # Each tool's finite scores on the grid once, by pair (a filter of the whole
            # table per pair of tools took 2.6 min on 1,578 pairs x 4 grids x 20 tools).
            by_tool = finite_by_tool(scores, spacing, metric)
            for tool_a, tool_b in combinations(ordered, 2):
                pair = pd.concat(
                    [
                        by_tool.get(tool_a, EMPTY).rename("a"),
                        by_tool.get(tool_b, EMPTY).rename("b"),
                    ],
                    axis=1,
                    join="inner",
                )
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
