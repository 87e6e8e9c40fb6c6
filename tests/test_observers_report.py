"""The data report: observers' DSC from the mask files, the reference's HD and HD95 from the
scores table, summarised per category; checked on masks with known overlap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maskio import write_mask
from study.__main__ import main
from study.analysis.observers import (
    agreement_table,
    dice,
    make_observer_table,
    observer_agreement,
    pair_dice,
)
from study.records import REFERENCE


def cube(lo: int, hi: int) -> np.ndarray:
    mask = np.zeros((10, 10, 10), bool)
    mask[lo:hi, 2:6, 2:6] = True
    return mask


@pytest.fixture
def study(tmp_path):
    """Two pairs at one voxel size: A = 4 slabs, B shifted by 1 (DSC 3/4) or by 2 (DSC 1/2)."""
    folder = tmp_path / "masks/1x1x1/case_01"
    folder.mkdir(parents=True)
    rows = []
    for oar, category, shift in (("Parotid_L", "large", 1), ("Cochlea_L", "small", 2)):
        for observer, lo in (("A", 2), ("B", 2 + shift)):
            write_mask(folder / f"{oar}__{observer}.nii.gz", cube(lo, lo + 4), (1, 1, 1))
        rows.append(
            {
                "case": "case_01",
                "oar": oar,
                "category": category,
                "spacing": "1x1x1",
                "path_a": f"{oar}__A.nii.gz",
                "path_b": f"{oar}__B.nii.gz",
            }
        )
    pairs = folder / "pairs.csv"
    pd.DataFrame(rows).to_csv(pairs, index=False)
    scores = pd.DataFrame(
        [
            {"case": "case_01", "oar": oar, "category": category, "spacing": "1x1x1"}
            | {"tool": tool, "metric": metric, "value": value, "status": "ok"}
            for oar, category, hd in (("Parotid_L", "large", 1.0), ("Cochlea_L", "small", 2.0))
            for tool in (REFERENCE, "monai")
            for metric, value in (("HD", hd), ("HD95", hd / 2), ("MASD", 0.3))
        ]
    )
    return scores, pairs


def test_dice_counts_the_overlap():
    assert dice(cube(2, 6), cube(3, 7)) == pytest.approx(0.75)
    assert dice(cube(2, 6), np.zeros((10, 10, 10), bool)) == 0
    assert np.isnan(dice(np.zeros(3, bool), np.zeros(3, bool)))


def test_agreement_takes_dice_from_masks_and_distances_from_the_reference(study):
    scores, pairs = study
    agreement = observer_agreement(scores, [pairs])
    values = agreement.set_index(["oar", "metric"]).value
    assert values[("Parotid_L", "DSC")] == pytest.approx(0.75)
    assert values[("Cochlea_L", "DSC")] == pytest.approx(0.5)
    assert values[("Cochlea_L", "HD95")] == 1.0  # the reference's, not monai's
    assert set(agreement.metric) == {"DSC", "HD", "HD95"}  # MASD is not shown
    table = agreement_table(agreement)
    assert list(table.numeric.category.unique()) == ["small", "large"]  # the study's order
    row = table.numeric.set_index(["category", "metric"]).loc[("large", "HD")]
    assert row["n"] == 1 and row["median"] == 1.0 and row["max"] == 1.0


def test_an_observer_who_drew_nothing_has_dice_zero(study):
    _, pairs = study
    table = pd.read_csv(pairs)
    table.loc[0, "path_b"] = ""
    table.to_csv(pairs, index=False)
    assert pair_dice([pairs]).value.tolist()[0] == 0.0


def test_the_rule_writes_every_rendering(study, tmp_path):
    scores, pairs = study
    scores.assign(
        dataset="synthetic", tool_version="1", environment="study", message="", seconds=0.1
    ).to_parquet(tmp_path / "scores.parquet")
    outputs = {fmt: str(tmp_path / f"t.{fmt}") for fmt in ("csv", "md", "tex", "html")}
    make_observer_table(tmp_path / "scores.parquet", [pairs], outputs)
    assert "DSC" in (tmp_path / "t.md").read_text()
    assert len(pd.read_csv(outputs["csv"])) == 6


def test_the_command_prints_the_report_and_names_a_missing_file(study, tmp_path, capsys):
    scores, pairs = study
    path = tmp_path / "scores.parquet"
    scores.assign(
        dataset="synthetic", tool_version="1", environment="study", message="", seconds=0.1
    ).to_parquet(path)
    assert main(["observers", "--scores", str(path), "--pairs", str(pairs)]) == 0
    printed = capsys.readouterr().out
    assert "HD95 (mm)" in printed and "large" in printed
    with pytest.raises(SystemExit) as stop:
        main(["observers", "--scores", str(path), "--pairs", str(tmp_path / "nope.csv")])
    assert stop.value.code == 2
    assert "nope.csv: pairs file not found" in capsys.readouterr().err
