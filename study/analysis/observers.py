"""The data the findings stand on: how far apart the dataset's two observers are.

Per OAR category, the distribution over mask pairs (every case, OAR and voxel size) of the
observers' DSC, 2 |A ∩ B| / (|A| + |B|) counted on the masks the tools were given, and of the
reference's HD and HD95 between them. Nothing here runs a tool or the reference: the
distances come from the scores table, the DSC from the mask files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from study.analysis.labels import format_number
from study.analysis.read import PAIR_COLUMNS, read_mask, read_pairs, read_scores
from study.analysis.rendering import Table, write_table
from study.oars import ordered_categories
from study.records import REFERENCE

AGREEMENT_METRICS: tuple[str, ...] = ("DSC", "HD", "HD95")
"""What the data report shows: overlap, and the reference's largest and 95 % distances."""

SUMMARY_COLUMNS: tuple[str, ...] = ("n", "min", "p10", "median", "p90", "max")
"""Summary of each distribution: count of finite values, extremes, 10th/50th/90th percentiles."""

KEYS: tuple[str, ...] = PAIR_COLUMNS


def dice(a: np.ndarray, b: np.ndarray) -> float:
    """2 |A ∩ B| / (|A| + |B|); NaN when both masks are empty."""
    total = int(a.sum()) + int(b.sum())
    return 2.0 * int(np.logical_and(a, b).sum()) / total if total else float("nan")


def pair_dice(pairs_files: Sequence[str | Path]) -> pd.DataFrame:
    """DSC of every pair listed in the voxelization's pairs.csv files (paths relative to each
    file): columns case, oar, category, spacing, metric, value."""
    rows = []
    for pairs_file in map(Path, pairs_files):
        table = read_pairs(pairs_file)
        for row in table.itertuples(index=False):
            a, b = (read_mask(pairs_file.parent, p) for p in (row.path_a, row.path_b))
            if a is None and b is None:
                value = float("nan")
            elif a is None or b is None:
                value = 0.0
            else:
                value = dice(a, b)
            rows.append({**{k: getattr(row, k) for k in KEYS}, "metric": "DSC", "value": value})
    return pd.DataFrame(rows, columns=[*KEYS, "metric", "value"])


def reference_distances(scores: pd.DataFrame) -> pd.DataFrame:
    """The reference's HD and HD95 of every pair it scored, in the same columns."""
    chosen = scores[(scores.tool == REFERENCE) & scores.metric.isin(AGREEMENT_METRICS)]
    return chosen[[*KEYS, "metric", "value"]].astype({"spacing": str, "value": float})


def summarize(values: pd.Series) -> dict[str, float]:
    """SUMMARY_COLUMNS of the finite values."""
    finite = values[np.isfinite(values)].to_numpy()
    if not len(finite):
        return {"n": 0, **{column: float("nan") for column in SUMMARY_COLUMNS[1:]}}
    p10, median, p90 = np.percentile(finite, [10, 50, 90])
    return {
        "n": len(finite),
        "min": finite.min(),
        "p10": p10,
        "median": median,
        "p90": p90,
        "max": finite.max(),
    }


def agreement_table(agreement: pd.DataFrame) -> Table:
    """One row per (category, metric): the SUMMARY_COLUMNS over every case, OAR and voxel
    size of that category."""
    rows = []
    for category in ordered_categories(agreement.category.unique()):
        for metric in AGREEMENT_METRICS:
            values = agreement[(agreement.category == category) & (agreement.metric == metric)]
            if len(values):
                rows.append({"category": category, "metric": metric, **summarize(values.value)})
    numeric = pd.DataFrame(rows, columns=["category", "metric", *SUMMARY_COLUMNS])
    display = numeric.copy()
    for column in SUMMARY_COLUMNS[1:]:
        display[column] = numeric[column].map(format_number)
    display["metric"] = numeric.metric.map(lambda m: m if m == "DSC" else f"{m} (mm)")
    pairs = agreement.drop_duplicates(["case", "oar"]).shape[0]
    spacings = ", ".join(sorted(agreement.spacing.unique()))
    notes = [
        f"{pairs} mask pairs, each at every voxel size ({spacings}); n counts the finite values "
        "(a pair with an empty mask has HD = inf and is left out).",
        "DSC counted on the voxelized masks; HD and HD95 by the reference (weighted HDp).",
    ]
    return Table(
        "table_observers",
        "Observer agreement: how far apart the dataset's two observers are, per size category",
        numeric,
        display,
        notes,
    )


def observer_agreement(scores: pd.DataFrame, pairs_files: Sequence[str | Path]) -> pd.DataFrame:
    """DSC of every pair and the reference's HD and HD95, one row per (pair, voxel size,
    metric)."""
    return pd.concat([pair_dice(pairs_files), reference_distances(scores)], ignore_index=True)


def make_observer_table(
    scores_path, pairs_files: Sequence[str | Path], outputs: Mapping[str, str]
) -> Table:
    """Entry point of the rule: the table from the scores table and the pairs files."""
    table = agreement_table(observer_agreement(read_scores(scores_path), pairs_files))
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table


def as_text(table: Table) -> str:
    """The table for a terminal."""
    shown = table.display.to_string(index=False)
    return f"{table.title}\n\n{shown}\n\n" + "\n".join(table.notes) + "\n"
