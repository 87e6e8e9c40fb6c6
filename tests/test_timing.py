"""HD timing rows from pairs.csv rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import SimpleITK as sitk

from adapters import REGISTRY
from adapters.base import PythonAdapter
from maskio import InputError
from study.__main__ import main
from study.records import TIMING_COLUMNS
from study.scoring.timing import time_hd


def write_pair(folder, spacing=(2.0, 1.0, 1.0)):
    a = np.zeros((12, 12, 12), dtype=np.uint8)
    a[3:8, 3:8, 3:8] = 1
    b = np.roll(a, 1, axis=0)
    paths = []
    for name, mask in (("a", a), ("b", b)):
        image = sitk.GetImageFromArray(mask)
        image.SetSpacing(tuple(reversed(spacing)))
        path = folder / f"Cochlea_L__{name}.nii.gz"
        sitk.WriteImage(image, str(path))
        paths.append(path.name)
    return {
        "case": "case_01",
        "oar": "Cochlea_L",
        "category": "small",
        "spacing": "2x1x1",
        "path_a": paths[0],
        "path_b": paths[1],
        "volume_a_mm3": 250.0,
        "volume_b_mm3": 250.0,
    }


def test_time_hd_rows(tmp_path):
    pair = write_pair(tmp_path)
    table = time_hd(
        REGISTRY["simpleitk"], [pair], repeats=3, base=tmp_path, dataset="tiny", grid="scan"
    )
    assert tuple(table.columns) == TIMING_COLUMNS
    # What was timed: the grid it was told, the shape it read (write_pair's 12^3 masks).
    assert set(table["grid"]) == {"scan"} and set(table["shape"]) == {"12x12x12"}
    assert list(table["repeat"]) == [0, 1, 2]
    assert (table["status"] == "ok").all() and (table["seconds"] > 0).all()
    assert set(table["dataset"]) == {"tiny"} and set(table["tool"]) == {"simpleitk"}
    # Every row carries the pair it timed and the tool's own version.
    assert set(table["case"]) == {"case_01"} and set(table["oar"]) == {"Cochlea_L"}
    assert set(table["category"]) == {"small"} and set(table["spacing"]) == {"2x1x1"}
    assert set(table["tool_version"]) == {REGISTRY["simpleitk"].version()}


class Crashing(PythonAdapter):
    name = "crashing"
    label = "Crashing"
    metrics = ("HD", "DSC")
    module = "numpy"
    distribution = "numpy"

    def _compute(self, *args):
        raise MemoryError("out of memory")


def test_tool_failure_becomes_error_rows(tmp_path):
    table = time_hd(Crashing(), [write_pair(tmp_path)], repeats=2, base=tmp_path)
    assert list(table["status"]) == ["error", "error"]
    assert table["message"].str.contains("MemoryError").all()


def test_bad_pairs_fail_early(tmp_path):
    with pytest.raises(ValueError, match="lacks the fields"):
        time_hd(REGISTRY["simpleitk"], [{"case": "x"}], repeats=1)
    with pytest.raises(ValueError, match="repeats"):
        time_hd(REGISTRY["simpleitk"], [], repeats=0)
    pair = write_pair(tmp_path) | {"path_b": "missing.nii.gz"}
    with pytest.raises(InputError, match="file not found"):
        time_hd(REGISTRY["simpleitk"], [pair], repeats=1, base=tmp_path)


def test_timing_command(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame([write_pair(tmp_path)]).to_csv(pairs, index=False)
    out = tmp_path / "timing"
    assert (
        main(
            [
                "timing",
                "--pairs",
                str(pairs),
                "--repeats",
                "2",
                "--tools",
                "simpleitk",
                "miseval",
                "--grid",
                "union_bbox",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    for tool in ("simpleitk", "miseval"):
        table = pd.read_parquet(out / f"{tool}.parquet")
        assert len(table) == 2 and tuple(table.columns) == TIMING_COLUMNS
        assert (table["status"] == "ok").all() and set(table["tool"]) == {tool}
        assert set(table["grid"]) == {"union_bbox"} and set(table["shape"]) == {"12x12x12"}


def test_timed_pairs_are_the_first_of_each_category_per_case():
    from study.scoring.timing import timed_pairs

    rows = [
        ("c1", "Cochlea_L", "small"),
        ("c1", "Cochlea_R", "small"),
        ("c1", "Parotid_L", "large"),
        ("c2", "Cochlea_R", "small"),
    ]
    pairs = pd.DataFrame(rows, columns=["case", "oar", "category"])
    assert list(timed_pairs(pairs, 1)["oar"]) == ["Cochlea_L", "Parotid_L", "Cochlea_R"]
    assert timed_pairs(pairs, None).equals(pairs)


def test_warm_up_masks_keep_every_voxel_of_the_pair():
    from study.scoring.timing import cropped_to_masks

    a = np.zeros((50, 60, 70), bool)
    b = np.zeros_like(a)
    a[10:20, 0:5, 30:40], b[15:25, 3:8, 69] = True, True
    small_a, small_b = cropped_to_masks(a, b)
    assert small_a.shape == (17, 9, 41)  # the box of a | b plus one voxel, clipped at the edge
    assert small_a.sum() == a.sum() and small_b.sum() == b.sum()
