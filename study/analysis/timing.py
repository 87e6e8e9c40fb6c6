"""HD execution time: the median over repeats per mask pair, and which grids were timed."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from study.records import GRID_NAMES


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


def median_times(per_case: pd.DataFrame) -> pd.Series:
    """Each tool's median HD time per case (`time_per_case`), fastest first."""
    return per_case.groupby("tool")["seconds"].median().sort_values()
