"""study.analysis.published's pieces on small tables, for the fast set; the page of a whole LIDC
run is test_workflow_lidc's (slow)."""

from __future__ import annotations

import pandas as pd

from study.analysis.published import comparison_lines, occurred, section, without_title


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
