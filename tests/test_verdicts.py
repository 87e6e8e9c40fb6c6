"""The verdict rule (study.analysis.verdicts), rule by rule, on planted scores: each test plants
what one rule decides and fails when that rule is dropped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import make_scores

from study.analysis import verdict_text, verdicts
from study.records import SCORE_COLUMNS


def planted(deltas: dict[str, list[float]], reference: list[float], **columns) -> pd.DataFrame:
    """One grid (1 mm), one metric (HD95): the reference's values and, per tool, its Δ on
    each pair (None: the tool raised an error there)."""
    rows = []
    for k, ref in enumerate(reference):
        base = {
            "dataset": "planted",
            "case": "case_01",
            "oar": f"pair_{k}",
            "category": columns.get("category", "small"),
            "spacing": columns.get("spacing", "1x1x1"),
            "tool_version": "1",
            "environment": "study",
            "metric": "HD95",
            "message": "",
            "seconds": 0.1,
        }
        status = "ok" if np.isfinite(ref) else ("inf" if ref > 0 else "nan")
        rows.append({**base, "tool": "reference", "value": ref, "status": status})
        for tool, values in deltas.items():
            delta = values[k]
            if delta is None:
                rows.append({**base, "tool": tool, "value": np.nan, "status": "error"})
                rows[-1]["message"] = "ValueError: 2D only"
                continue
            value = ref + delta if np.isfinite(ref) else delta
            status = "ok" if np.isfinite(value) else "inf"
            rows.append({**base, "tool": tool, "value": value, "status": status})
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


def overall(scores: pd.DataFrame, **kwargs) -> pd.DataFrame:
    table = verdict_text.of_stratum(verdicts.verdict_table(scores, **kwargs))
    return table.set_index("tool")


N = 40
READERS = [10.0] * N
"""Readers 10 mm apart on every pair: the tolerance stays the absolute ±0.5 mm."""


def test_pairs_the_reference_leaves_undefined_are_judged_apart():
    """Two empty-mask pairs (reference inf) decide nothing: the tool within on every defined
    pair is used, and its answer there is a caution; counted against it, 95 % within would
    fall below 90 % with 4 of 40 pairs undefined."""
    reference = READERS[:36] + [np.inf] * 4
    scores = planted(
        {"monai": [0.0] * 36 + [7.0] * 4, "medpy": [0.0] * 36 + [np.inf] * 4}, reference
    )
    table = overall(scores)
    for tool in ("monai", "medpy"):
        assert table.loc[tool, "verdict"] == "use", tool
        assert table.loc[tool, "n"] == 36 and table.loc[tool, "n_undefined"] == 4
    assert table.loc["monai", "cautions"].startswith(
        "on the 4 pairs the reference leaves undefined (an empty mask on this grid): gives a "
        "number (e.g. 7)"
    )
    assert "gives inf, as the reference" in table.loc["medpy", "cautions"]


def test_a_tool_that_fails_on_every_pair_is_not_measured_and_never_compared():
    scores = planted({"torchmetrics": [None] * N, "monai": [2.0] * N}, READERS)
    table = overall(scores)
    assert table.loc["torchmetrics", "verdict"] == "not measured"
    assert table.loc["torchmetrics", "reason"] == "fails on every pair: ValueError: 2D only"
    # No tool passes; the closest is MONAI, and a tool not measured is never among them.
    assert table.loc["monai", "verdict"] == "closest"
    assert "not measured: torchmetrics" in verdict_text.grid_verdict(table.reset_index())


def test_the_closest_is_the_one_a_reader_can_correct_best():
    """Where none passes, the narrowest 95 % interval comes first, not the largest share
    within: A has 85 % within and a tail to -8 mm, B 80 % within and Δ in [-0.8, +0.9]."""
    rng = np.random.default_rng(1)
    wide = [0.0] * 34 + list(-np.linspace(2, 8, 6))
    narrow = [0.1] * 32 + list(rng.choice([-0.8, 0.9], 8))
    scatter = list(rng.choice([-5.0, 5.0], N))
    scores = planted({"segauge": wide, "grandchallenge": narrow, "medpy": scatter}, READERS)
    table = overall(scores)
    closest = table.loc[table["verdict"] == "closest"].sort_values("rank")
    assert list(closest.index) == ["grandchallenge", "segauge"]
    assert table.loc["segauge", "within"] > table.loc["grandchallenge", "within"]
    assert closest["reason"].iloc[0].startswith("narrowest interval: Δ in [-0.80, +0.90] mm")


def test_identical_scores_share_a_verdict_unless_a_printed_reason_parts_them():
    scores = planted({"monai": [0.1] * N, "medpy": [0.1] * N}, READERS)
    table = overall(scores)
    assert "monai" not in table.index and table.loc["medpy", "identical"] == "monai"
    # The field of view parts them: MedPy's scores changed on the grid check.
    checked = [
        {"tool": "medpy", "spacing": "1x1x1", "oar": "pair_0", "category": "small",
         "metric": "HD95", "grid": grid, "value": value, "status": "ok"}
        for grid, value in (("cropped", 10.1), ("scan", 12.0))
    ]  # fmt: skip
    table = overall(scores, grid_checked=pd.DataFrame(checked))
    assert table.loc["monai", "verdict"] == "use"
    assert table.loc["medpy", "verdict"] == "avoid"
    assert table.loc["medpy", "reason"] == (
        "depends on the field of view: changed on 1 of 1 grid-check pairs (e.g. pair_0 at "
        "(1, 1, 1) mm: 10.1 (cropped) vs 12 (scan-sized)) (identical scores to MONAI on this "
        "grid)"
    )


def test_a_tool_in_voxels_is_right_on_a_1_mm_grid_by_coincidence_and_says_so():
    scores = make_scores()
    rows = scores.loc[(scores["tool"] == "reference") & (scores["metric"] == "HD")]
    sides = rows["spacing"].map(lambda s: float(s.split("x")[0]))
    voxels = rows.assign(tool="skimage", tool_version="1", value=rows["value"] / sides)
    table = verdict_text.of_stratum(verdicts.verdict_table(pd.concat([scores, voxels])))
    row = table.loc[(table["metric"] == "HD") & (table["spacing"] == "1x1x1")]
    row = row.loc[row["tool"] == "skimage"].iloc[0]
    assert row["verdict"] == "avoid"
    assert row["reason"].startswith(
        "ignores the voxel size: right on this grid only because its voxels are 1 mm, wrong on "
        "any other"
    )
    # Its twin on this grid (the reference's own values: Google DeepMind's) is used, and the
    # row that avoids it names that twin.
    assert "(identical scores to Google DeepMind" in row["reason"]


def test_a_use_states_its_pairs_outside_and_a_worst_case_far_beyond():
    scores = planted({"medpy": [0.0] * 37 + [3.0, 0.6, 0.6]}, READERS)
    table = overall(scores)
    assert table.loc["medpy", "verdict"] == "use"
    assert table.loc["medpy", "reason"] == (
        "92% of 40 pairs within ±0.5 mm, 3 outside; worst +3.00 mm, 6 × the tolerance, on a "
        "pair of small OARs"
    )


def test_the_tolerance_shrinks_to_a_quarter_of_the_readers_disagreement():
    """Readers 0.4 mm apart (median MASD-like): the tolerance is 0.1 mm, not 0.5 mm, so a tool
    off by 0.3 mm, within ±0.5 mm on every pair, is not used."""
    scores = planted({"monai": [0.3] * N, "segauge": [0.05] * N}, [0.4] * N)
    table = overall(scores)
    assert table.loc["monai", "tolerance"] == pytest.approx(verdicts.READERS_SHARE * 0.4)
    assert table.loc["monai", "tolerance_basis"] == "readers"
    assert table.loc["monai", "verdict"] == "avoid" and table.loc["segauge", "verdict"] == "use"
    assert table.loc["segauge", "readers_median"] == pytest.approx(0.4)


def test_strata_are_judged_on_their_own_pairs():
    """Per size category, and on the native grid per slice thickness from the manifest."""
    small = planted({"monai": [0.0] * 20}, [10.0] * 20, spacing="native")
    large = planted({"monai": [2.0] * 20}, [30.0] * 20, spacing="native", category="large")
    large["oar"] = large["oar"] + "_large"
    scores = pd.concat([small, large], ignore_index=True)
    pairs = scores.drop_duplicates("oar")[["case", "oar"]]
    manifest = pairs.assign(
        spacing_mm=["0.7x0.7x1.25" if "large" in oar else "0.7x0.7x2.5" for oar in pairs["oar"]]
    )
    table = verdicts.verdict_table(scores, manifest=manifest)
    by = table.set_index(["stratum", "tool"])["verdict"]
    assert by["small OARs", "monai"] == "use" and by["large OARs", "monai"] == "closest"
    assert by["slices 2.5 mm", "monai"] == "use" and by["slices 1.25 mm", "monai"] == "closest"
    assert verdicts.stratum_order(table["stratum"]) == [
        verdicts.ALL, "small OARs", "large OARs", "slices 1.25 mm", "slices 2.5 mm"
    ]  # fmt: skip
    strata = verdict_text.strata_table(table)
    assert list(strata["Stratum"]) == [
        "small OARs",
        "large OARs",
        "slices 1.25 mm",
        "slices 2.5 mm",
    ]


def test_bad_inputs_give_a_stated_verdict_never_a_crash():
    # The reference undefined on every pair of the grid.
    table = overall(planted({"monai": [np.inf] * 4}, [np.inf] * 4))
    assert table.loc["monai", "verdict"] == "no verdict"
    assert table.loc["monai", "reason"].startswith("0 pairs the reference defines")
    # Fewer pairs than a verdict needs.
    table = overall(planted({"monai": [0.0] * 2}, [10.0] * 2))
    assert table.loc["monai", "verdict"] == "no verdict"
    # A tool that errs on every pair of a grid with another that is fine.
    table = overall(planted({"monai": [None] * N, "medpy": [0.0] * N}, READERS))
    assert table.loc["monai", "verdict"] == "not measured"
    assert table.loc["medpy", "verdict"] == "use"
    # No scores of a tested metric at all: an empty table with the columns.
    empty = verdicts.verdict_table(make_scores().iloc[:0])
    assert list(empty.columns) == list(verdicts.VERDICT_COLUMNS) and empty.empty


def grid_rows(tool: str, oar: str, cropped: float, scan: float) -> list[dict]:
    return [
        {"tool": tool, "spacing": "1x1x1", "oar": oar, "category": "small",
         "metric": "HD95", "grid": grid, "value": value,
         "status": "ok" if np.isfinite(value) else "inf"}
        for grid, value in (("cropped", cropped), ("scan", scan))
    ]  # fmt: skip


def test_a_field_of_view_change_decides_only_beyond_the_tolerance_on_a_defined_pair():
    scores = planted({"monai": [0.1] * N, "medpy": [0.1] * N}, READERS)
    small = grid_rows("medpy", "pair_0", 10.1, 10.3)  # 0.2 mm: within ±0.5 mm
    empty = grid_rows("monai", "pair_1 (B empty)", 27.4, 153.5)  # the reference: inf there
    checked = pd.DataFrame(
        small + empty + grid_rows("reference", "pair_1 (B empty)", np.inf, np.inf)
    )
    table = overall(scores, grid_checked=checked)
    assert set(table["verdict"]) == {"use"}
    cautions = " ".join(table["cautions"])
    assert "MedPy only: changes with the field of view only where no verdict rests" in cautions
    assert "pair_1 (B empty) at (1, 1, 1) mm: 27.4 (cropped) vs 153.5" in cautions
