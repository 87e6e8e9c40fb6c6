"""study.analysis.published's pieces on small tables, for the fast set; the page of a whole LIDC
run is test_workflow_lidc's (slow)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from analysis_fixtures import make_scores
from project_copy import commit_in_new_repository

from study.analysis import published, verdict_text
from study.analysis.published import (
    comparison_lines,
    not_comparable,
    occurred,
    per_tool,
    provenance,
    section,
    side_by_side,
    without_title,
)
from study.analysis.verdicts import ALL


def test_sections_and_titles_of_a_generated_page():
    page = "## Setup\nthree tools\n\n## Verdicts\nall agree\n"
    assert section(page, "Setup") == "three tools"
    assert section(page, "Verdicts") == "all agree"
    assert section(page, "Missing") == ""
    assert without_title("## Table A1\n\n| a |\n") == "| a |"


def test_occurred_counts_the_rows_that_are_not_a_finite_score():
    scores = pd.DataFrame(
        {
            "tool": ["monai", "monai", "monai", "medpy"],
            "spacing": ["1x1x1"] * 4,
            "status": ["error", "error", "ok", "nan"],
            "value": [None, None, 1.0, None],
            "message": ["ValueError: empty", "ValueError: empty", None, None],
        }
    )
    table = occurred(scores)
    assert list(table["Tool"]) == ["medpy", "monai"]
    assert list(table["Rows"]) == [1, 2]
    assert table["Example message"].iloc[1] == "ValueError: empty"
    assert occurred(scores.loc[scores["status"] == "ok"]).empty


def test_comparison_lines_name_the_contradicted_verdicts():
    table = pd.DataFrame(
        {
            "Metric": ["HD", "DSC"],
            "Voxel size": ["1 mm", "1 mm"],
            "Tool": ["MONAI", "MedPy"],
            "Synthetic": ["good (99 %)", "good (98 %)"],
            "LIDC readers": ["good (97 %)", "poor (40 %)"],
            "Same verdict": ["yes", "**no**"],
        }
    )
    first, second = comparison_lines(table)
    assert first.endswith("confirm 1 and contradict 1.")
    assert second.startswith("DSC at 1 mm, MedPy: synthetic good (98 %), LIDC poor (40 %)")


def verdict_rows(verdicts_of: dict[str, str], spacing: str = "1x1x1", **extra) -> pd.DataFrame:
    """A verdict table of one metric (HD) on one grid: tool -> verdict, 95 % within."""
    return pd.DataFrame(
        {
            "metric": "HD",
            "spacing": spacing,
            "stratum": ALL,
            "tool": list(verdicts_of),
            "identical": extra.get("identical", [""] * len(verdicts_of)),
            "verdict": list(verdicts_of.values()),
            "within": 0.95,
        }
    )


def test_a_contradiction_planted_between_two_runs_is_reported():
    synthetic = verdict_rows({"monai": "use", "medpy": "use", "torchmetrics": "avoid"})
    lidc = verdict_rows({"monai": "use", "medpy": "avoid", "torchmetrics": "not measured"})
    table = side_by_side(lidc, synthetic)
    # torchmetrics is not measured on the LIDC side: it takes part in no comparison.
    assert list(table["Tool"]) == ["MedPy", "MONAI"]
    lines = comparison_lines(table)
    assert lines[0].endswith("confirm 1 and contradict 1.")
    assert lines[1].startswith("HD at (1, 1, 1) mm, MedPy: synthetic use (95 %), LIDC avoid")
    # A tool sharing a row with its twin is compared as itself.
    shared = verdict_rows({"monai": "use"}, identical=["medpy"])
    assert set(side_by_side(lidc, shared)["Tool"]) == {"MedPy", "MONAI"}
    # Expanding a shared row is done once: a table expanded already is taken as it is.
    assert len(side_by_side(per_tool(shared), per_tool(shared))) == 2


def test_two_runs_with_other_grids_tools_or_tau_say_what_is_not_compared():
    lidc = verdict_rows({"monai": "use", "segauge": "use"}, spacing="native")
    synthetic = verdict_rows({"monai": "use", "medpy": "use"})
    assert side_by_side(lidc, synthetic).empty
    lines = not_comparable(lidc, synthetic, ("NSD", "BIoU"))
    assert "Not compared: grids only in the LIDC run (native grid)." in lines
    assert "Not compared: grids only in the synthetic run ((1, 1, 1) mm)." in lines
    assert "Not compared: tools only in the LIDC run (segauge)." in lines
    assert "Not compared: tools only in the synthetic run (medpy)." in lines
    assert lines[-1] == "Not compared: NSD, BIoU, scored with another tau in the two runs."
    nsd = verdict_rows({"monai": "use"}).assign(metric="NSD")
    assert side_by_side(nsd, nsd, skip_metrics=("NSD",)).empty


def test_the_answer_says_the_references_own_uncertainty_when_recorded(monkeypatch):
    """With the reference's brackets recorded (reference.brackets), the page's opening says
    how wide they get beside the verdicts; without, it says nothing of them."""
    monkeypatch.setattr(verdict_text, "answer_table", lambda table: pd.DataFrame({"Metric": []}))
    scores = make_scores()
    plain = "\n".join(published._answer(pd.DataFrame(), {}, "page", scores))
    assert "uncertainty" not in plain
    reference = scores["tool"] == "reference"
    scores["reference_low"] = np.where(reference, scores["value"] - 0.002, np.nan)
    scores["reference_high"] = np.where(reference, scores["value"] + 0.002, np.nan)
    opening = "\n".join(published._answer(pd.DataFrame(), {}, "page", scores))
    assert "The reference's own uncertainty (its proven brackets" in opening
    assert "MASD 0.004 mm" in opening


def test_provenance_names_the_commit_and_says_when_the_tree_has_changes(tmp_path):
    (tmp_path / "code.py").write_text("x = 1\n")
    commit_in_new_repository(tmp_path, "code.py")
    (line,) = provenance(tmp_path)
    assert line.startswith("Commit: `") and line.endswith("`.")
    (tmp_path / "code.py").write_text("x = 2\n")
    assert provenance(tmp_path)[0].endswith("+ uncommitted changes.")
