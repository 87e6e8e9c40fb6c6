"""Which scores depend on the grid: a few pairs scored on their cropped and on the scan-sized grid.

Both grids share the voxel size and the lattice (origins are whole multiples of the spacing,
`study.dataset.voxelize.pair_grid`), and the cropped grid holds every foreground voxel with a
margin: the scan-sized grid only adds background around it. Every metric is a function of the two
foreground point sets in mm, so an implementation of the definitions gives the same value on
both; a difference d = m_scan - m_cropped measures how much a tool's result depends on the
image around the masks (its size, where its border lies). For each voxel size one pair is also
scored with observer B empty (edge case O2), where a tool may fall back on a value taken from
the image rather than from the masks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from study.oars import first_of_each_category
from study.records import SCORE_COLUMNS, spacing_title
from study.scoring.record_files import read_record_files

GRIDS: tuple[str, ...] = ("cropped", "scan")
"""The two grids compared: each pair's box plus field_of_view.margin_mm, and the scan's."""

SAME_TOLERANCE = 1e-3
"""|d| at or below this (mm, or a fraction for NSD and BIoU) is the same score. Masks at other
coordinates are rounded differently: the reference's closest-element search runs in float32
(about 1e-5 mm at a few hundred mm), which moved its MASD by up to 1.9e-4 mm between the
grids in the default study. A tenth of the findings' "negligible" 0.01 mm is far above that
and far below anything a reader of two-decimal tables could see."""

EMPTY_SUFFIX = " (B empty)"
"""Added to the OAR name of the pair whose observer B is replaced by an empty mask."""

GRID_CHECK_COLUMNS: tuple[str, ...] = (*SCORE_COLUMNS, "grid")
"""Columns of results/grid_check/<tool>.parquet: score rows and the grid they were scored on."""


def check_oars(manifest: pd.DataFrame, per_category: int) -> list[str]:
    """The first `per_category` OARs of each category of a case's mesh manifest, in order."""
    return first_of_each_category(manifest["oar"], manifest["category"], per_category)


def prepare_masks(
    case_manifest: str | Path,
    spacings: Sequence[Sequence[float]],
    out_dirs: Mapping[str, Sequence[str | Path]],
    *,
    per_category: int,
    margin_mm: float,
    scan_mm: Sequence[float],
) -> list[Path]:
    """Masks of the checked pairs on both grids: out_dirs[grid][i] gets the masks and
    pairs.csv of spacings[i]; returns the pairs.csv paths.

    Each pairs table ends with its first pair again, observer B replaced by an empty mask.
    """
    from study.dataset.meshes import read_manifest
    from study.dataset.voxelize import voxelize_case

    oars = check_oars(read_manifest(case_manifest), per_category)
    written = []
    for grid in GRIDS:
        grid_args = {"scan_mm": scan_mm} if grid == "scan" else {"margin_mm": margin_mm}
        for pairs_csv in voxelize_case(
            case_manifest, spacings, out_dirs[grid], oars=oars, **grid_args
        ):
            _add_empty_b_pair(pairs_csv)
            written.append(pairs_csv)
    return written


def _add_empty_b_pair(pairs_csv: Path) -> None:
    """Append the first pair with observer B empty (on the same grid) to a pairs table."""
    from maskio import read_mask, write_mask

    pairs = pd.read_csv(pairs_csv)
    first = pairs.iloc[0].copy()
    mask, spacing, origin = read_mask(pairs_csv.parent / first["path_a"])
    empty_name = f"{first['oar']}__B_empty.nii.gz"
    write_mask(pairs_csv.parent / empty_name, np.zeros_like(mask), spacing, origin)
    first["oar"] = f"{first['oar']}{EMPTY_SUFFIX}"
    first["path_b"], first["volume_b_mm3"] = empty_name, 0.0
    pd.concat([pairs, first.to_frame().T], ignore_index=True).to_csv(pairs_csv, index=False)


def grid_differences(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (tool, spacing, oar, metric) scored on both grids: the values, d and
    whether the score changed. Two equal non-finite values (inf, nan) are the same score; a
    failed call on either grid is compared by status."""
    keys = ["tool", "spacing", "oar", "category", "metric"]
    sides = {grid: rows.loc[rows["grid"] == grid, [*keys, "value", "status"]] for grid in GRIDS}
    both = sides["cropped"].merge(sides["scan"], on=keys, suffixes=("_cropped", "_scan"))
    cropped, scan = both["value_cropped"].astype(float), both["value_scan"].astype(float)
    with np.errstate(invalid="ignore"):
        both["difference"] = scan - cropped
    same_value = np.isclose(scan, cropped, rtol=0, atol=SAME_TOLERANCE, equal_nan=True) | (
        (scan == cropped) & np.isinf(scan)
    )
    same_status = both["status_cropped"] == both["status_scan"]
    both["changed"] = ~(same_status & same_value)
    return both.rename(columns={"value_cropped": "cropped", "value_scan": "scan"})


def compared_tools(differences: pd.DataFrame) -> set[str]:
    """The tools with at least one score that was finite on both grids: for the others (every
    call failed or gave inf / nan) "the same on both grids" would say nothing."""
    finite = (
        (differences["status_cropped"] == "ok")
        & (differences["status_scan"] == "ok")
        & np.isfinite(differences["cropped"].astype(float))
        & np.isfinite(differences["scan"].astype(float))
    )
    return set(differences.loc[finite, "tool"])


def changed_scores(differences: pd.DataFrame) -> pd.DataFrame:
    """Per tool and metric whose score changed on some pair: pairs changed of pairs compared,
    the largest |d| among finite differences, and one example (pair, spacing, both values)."""
    rows = []
    for (tool, metric), group in differences.groupby(["tool", "metric"], sort=False):
        changed = group.loc[group["changed"]]
        if changed.empty:
            continue
        magnitude = changed["difference"].abs().fillna(np.inf)
        example = changed.loc[magnitude.idxmax()]
        rows.append(
            {
                "tool": tool,
                "metric": metric,
                "changed": len(changed),
                "compared": len(group),
                "max_abs_difference": float(magnitude.replace(np.inf, np.nan).max()),
                "example": f"{example['oar']} at {spacing_title(example['spacing'])}: "
                f"{_value(example['cropped'], example['status_cropped'])} "
                f"(cropped) vs {_value(example['scan'], example['status_scan'])} "
                "(scan-sized)",
            }
        )
    return pd.DataFrame(
        rows, columns=["tool", "metric", "changed", "compared", "max_abs_difference", "example"]
    )


def _value(value: float, status: str) -> str:
    return "error" if status == "error" else f"{float(value):.4g}"


def read_grid_check(paths: Sequence[str | Path]) -> pd.DataFrame:
    """All grid-check records in one table; a missing file is an error naming it."""
    frames = read_record_files(paths, "grid-check records")
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=list(GRID_CHECK_COLUMNS))
    )


def score_on_grids(
    tool: str, pairs_by_grid: dict[str, Sequence[str | Path]], **score_args
) -> pd.DataFrame:
    """Rows of `GRID_CHECK_COLUMNS`: `tool` on every pairs table of each grid
    (`study.scoring.score.score_pairs` with score_args)."""
    from study.scoring.score import read_pairs, score_pairs

    frames = [
        score_pairs(tool, read_pairs(paths), **score_args).assign(grid=grid)
        for grid, paths in pairs_by_grid.items()
    ]
    return pd.concat(frames, ignore_index=True)[list(GRID_CHECK_COLUMNS)]
