"""The paper's own numbers, transcribed once and read from here by every check and table.

Each CSV beside this module holds one table or figure of the paper (Podobnik et al., "Metrics
Revolutions") with a `source` column naming the table, block, row and column (or the sentence
of the text) each number comes from:

- `table_a1.csv`: Δ per metric, tool and voxel size (min, max, mean, SD; mm or %pt);
- `table_a2.csv`: Δ per metric, tool and OAR category, all voxel sizes pooled;
- `table_a3.csv`: edge-case output classes per tool, metric and case (O1, O2, O3, S);
- `table_a4.csv`: Δ of the reference meshed with marching cubes or surface nets;
- `table_1_versions.csv`: the tool versions the paper analysed;
- `figure_a4_not_significant.csv`: the tests against the reference the text calls not
  significant (Fig. A4 is a picture only);
- `figure_a5_ranking.csv`: the order of the tools' median HD times as the text ranks them
  (Fig. A5 is a picture only).

Voxel sizes use the scores table's labels (`1x1x1`, `0.5x0.5x2`), tools the adapters' keys.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

from study.records import EDGE_CASES, EDGE_OUTPUTS

DIRECTORY = Path(__file__).parent
"""Where the transcribed tables live."""

PAIRS = 1561
"""Mask pairs of the paper's study (captions of Tables A1 to A4)."""

BONFERRONI_FACTOR = 1188
"""The paper's Bonferroni factor (caption of Fig. A4)."""

DELTA_COLUMNS = ("min", "max", "mean", "sd")


def _read(name: str, columns: tuple[str, ...], **options) -> pd.DataFrame:
    """One transcribed table, checked for its columns (a clear error names the file)."""
    path = DIRECTORY / name
    options = {"dtype": {"spacing": str, "version": str}, **options}
    try:
        frame = pd.read_csv(path, comment="#", **options)
    except (OSError, pd.errors.ParserError) as error:
        raise ValueError(f"{path}: cannot read the paper's table: {error}") from error
    missing = [c for c in (*columns, "source") if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: lacks columns {missing}")
    return frame


def _delta_table(name: str, group: str) -> pd.DataFrame:
    frame = _read(name, ("metric", "tool", group, *DELTA_COLUMNS))
    if frame[list(DELTA_COLUMNS)].isna().any().any():
        raise ValueError(f"{DIRECTORY / name}: a min, max, mean or SD cell is empty")
    # The paper's n per cell: every pair at every voxel size (Table A2 pools three of them).
    frame["n"] = PAIRS * (3 if group == "category" else 1)
    return frame


@cache
def table_a1() -> pd.DataFrame:
    """Table A1 in the layout of `statistics.summarize_deltas` by metric, spacing and tool."""
    return _delta_table("table_a1.csv", "spacing")


@cache
def table_a2() -> pd.DataFrame:
    """Table A2 in the layout of `statistics.summarize_deltas` by metric, category and tool."""
    return _delta_table("table_a2.csv", "category")


@cache
def table_a4() -> pd.DataFrame:
    """Table A4 (tools are the reference's meshing variants) like `table_a1`."""
    return _delta_table("table_a4.csv", "spacing")


@cache
def table_a3() -> pd.DataFrame:
    """Table A3: one row per tool, metric and case with the output class and the W mark."""
    # Output classes are words ("nan", "0"), not numbers: read every cell as text.
    frame = _read(
        "table_a3.csv",
        ("tool", "metric", "case", "output", "warned"),
        dtype=str,
        keep_default_na=False,
    )
    bad = frame.loc[~frame["case"].isin(EDGE_CASES) | ~frame["output"].isin(EDGE_OUTPUTS)]
    if not bad.empty:
        raise ValueError(
            f"{DIRECTORY / 'table_a3.csv'}: bad rows {bad.index.tolist()}: case must be in "
            f"{EDGE_CASES}, output in {EDGE_OUTPUTS}"
        )
    frame["warned"] = frame["warned"].map({"true": True, "false": False})
    if frame["warned"].isna().any():
        raise ValueError(f"{DIRECTORY / 'table_a3.csv'}: warned must be true or false")
    return frame


@cache
def versions() -> dict[str, str]:
    """Tool versions the paper used (Table 1)."""
    frame = _read("table_1_versions.csv", ("tool", "version"))
    return dict(zip(frame["tool"], frame["version"].astype(str), strict=True))


@cache
def timing_ranks() -> pd.Series:
    """Rank of each tool's median HD time per case in Fig. A5 (1 = fastest; ties shared)."""
    frame = _read("figure_a5_ranking.csv", ("tool", "rank"))
    return frame.set_index("tool")["rank"].astype(float)


@cache
def not_significant() -> frozenset[tuple[str, str, str]]:
    """(tool, metric, spacing) whose test against the reference was not significant."""
    frame = _read("figure_a4_not_significant.csv", ("tool", "metric", "spacing"))
    return frozenset(zip(frame["tool"], frame["metric"], frame["spacing"], strict=True))
