"""Which scores depend on the grid: masks on both grids, the comparison, the reference's
invariance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from adapters import CallSettings
from maskio import read_mask
from study.analysis import findings
from study.dataset.meshes import read_manifest
from study.dataset.synthetic import write_case
from study.scoring.grid_check import (
    EMPTY_SUFFIX,
    GRID_CHECK_COLUMNS,
    GRIDS,
    SAME_TOLERANCE,
    changed_scores,
    check_oars,
    grid_differences,
    prepare_masks,
    score_on_grids,
)
from study.scoring.record_files import read_record_files
from study.scoring.score import read_pairs

OARS = ["Cochlea_L", "Cochlea_R", "Glottis", "A_Carotid_L"]
SPACINGS = [(2.0, 2.0, 2.0), (1.0, 1.0, 2.0)]


@pytest.fixture(scope="module")
def checked_masks(tmp_path_factory):
    root = tmp_path_factory.mktemp("grid_check")
    manifest = write_case(root / "data", 1, 7, OARS)
    out_dirs = {grid: [root / grid / str(n) for n in range(len(SPACINGS))] for grid in GRIDS}
    written = prepare_masks(
        manifest, SPACINGS, out_dirs, per_category=1, margin_mm=5.0, scan_mm=(200.0, 200.0, 200.0)
    )
    assert written == [folder / "pairs.csv" for grid in GRIDS for folder in out_dirs[grid]]
    return {grid: [folder / "pairs.csv" for folder in out_dirs[grid]] for grid in GRIDS}


def test_check_oars_takes_the_first_of_each_category(tmp_path):
    manifest = read_manifest(write_case(tmp_path, 1, 7, OARS))
    assert check_oars(manifest, 1) == ["Cochlea_L", "Glottis", "A_Carotid_L"]
    assert check_oars(manifest, 2) == ["Cochlea_L", "Cochlea_R", "Glottis", "A_Carotid_L"]


def test_masks_of_both_grids_hold_the_same_voxels(checked_masks):
    """Per voxel size: the same pairs (and the B-empty one) on each grid, with the same number
    of foreground voxels; the scan grid is the larger."""
    for cropped_csv, scan_csv in zip(checked_masks["cropped"], checked_masks["scan"], strict=True):
        cropped, scan = read_pairs([cropped_csv]), read_pairs([scan_csv])
        assert (
            list(cropped["oar"])
            == list(scan["oar"])
            == ["Cochlea_L", "Glottis", "A_Carotid_L", f"Cochlea_L{EMPTY_SUFFIX}"]
        )
        for crop_row, scan_row in zip(cropped.itertuples(), scan.itertuples(), strict=True):
            for column in ("path_a", "path_b"):
                small, _, _ = read_mask(getattr(crop_row, column))
                large, _, _ = read_mask(getattr(scan_row, column))
                assert small.sum() == large.sum() and small.size < large.size
        assert read_mask(cropped["path_b"].iloc[-1])[0].sum() == 0


def test_the_reference_gives_the_same_scores_on_both_grids(checked_masks):
    """The reference crops to the masks itself: moving them into a scan-sized grid changes
    no score, at every voxel size, on every pair, the empty one included."""
    rows = score_on_grids(
        "reference",
        checked_masks,
        dataset="t",
        settings=CallSettings(percentile=95, tau=2.0, timeout=600),
    )
    assert tuple(rows.columns) == GRID_CHECK_COLUMNS
    differences = grid_differences(rows)
    assert len(differences) == 2 * 4 * 7  # voxel sizes x pairs x metrics, each on both grids
    assert not differences["changed"].any(), differences[differences["changed"]]
    assert changed_scores(differences).empty
    # Not merely within the tolerance: only float32 rounding at other coordinates remains.
    assert differences["difference"].abs().max() < SAME_TOLERANCE / 2


def planted(values: dict[str, tuple]) -> pd.DataFrame:
    """Score rows of one tool: metric -> (cropped value, scan value)."""
    rows = []
    for metric, pair in values.items():
        for grid, value in zip(GRIDS, pair, strict=True):
            status = (
                "error"
                if value is None
                else ("ok" if math.isfinite(value) else ("nan" if math.isnan(value) else "inf"))
            )
            rows.append(
                {
                    "tool": "miseval",
                    "spacing": "1x1x1",
                    "oar": "Cochlea_L",
                    "category": "small",
                    "metric": metric,
                    "grid": grid,
                    "value": np.nan if value is None else value,
                    "status": status,
                }
            )
    return pd.DataFrame(rows)


def test_differences_count_changes_not_rounding():
    rows = planted(
        {
            "HD": (3.0, 3.0 + 1e-4),
            "HD95": (math.inf, math.inf),
            "NSD": (math.nan, math.nan),
            "MASD": (1.0, 1.5),
            "ASSD": (2.0, None),
            "BIoU": (math.inf, 40.0),
        }
    )
    changed = grid_differences(rows).set_index("metric")["changed"]
    assert not changed[["HD", "HD95", "NSD"]].any() and changed[["MASD", "ASSD", "BIoU"]].all()
    summary = changed_scores(grid_differences(rows)).set_index("metric")
    assert summary.loc["MASD", "max_abs_difference"] == 0.5
    assert (
        summary.loc["ASSD", "example"] == "Cochlea_L at (1, 1, 1) mm: 2 (cropped) vs error "
        "(scan-sized)"
    )
    assert math.isnan(summary.loc["BIoU", "max_abs_difference"])


def test_findings_name_the_tools_whose_scores_depend_on_the_grid():
    rows = pd.concat(
        [
            planted({"HD": (3.0, 3.0)}).assign(tool="deepmind"),
            planted({"HD": (140.0, 512.5), "DSC": (0.5, 0.5)}),
        ]
    )
    section = findings.grid_section(rows)
    text = " ".join(section.lines)
    assert (
        "The same (|d| ≤ 0.001) on every pair and metric: Google DeepMind; the largest |d| "
        "among the scores that stayed the same is 0."
    ) in text
    assert (
        "**MISeval HD depends on the grid**: changed on 1 of 1 pairs, largest |d| 372.5; "
        "e.g. Cochlea_L at (1, 1, 1) mm: 140 (cropped) vs 512.5 (scan-sized)."
    ) in text
    assert findings.grid_section(None) is None


def test_record_files_are_read_in_order_and_a_missing_one_is_named(tmp_path):
    paths = [tmp_path / "first.parquet", tmp_path / "second.parquet"]
    for number, path in enumerate(paths):
        pd.DataFrame({"value": [number]}).to_parquet(path)
    frames = read_record_files(paths, "timing records")
    assert [frame.value.tolist() for frame in frames] == [[0], [1]]
    with pytest.raises(FileNotFoundError, match="absent.parquet: timing records not found"):
        read_record_files([paths[0], tmp_path / "absent.parquet"], "timing records")
