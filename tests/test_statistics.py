"""Δ, summaries, Wilcoxon and Bonferroni against planted statistics and direct recomputation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import LATER_TOOL, TOOLS, make_scores, make_settings, register_later_tool
from scipy.stats import wilcoxon

from study.analysis.delta import deltas, measured, summarize_deltas, unavailable_tools
from study.analysis.labels import (
    group_spans,
    group_title,
    of_the_paper,
    ordered_tools,
    shows_groups,
    tool_group,
    tool_label,
)
from study.analysis.settings import AnalysisSettings
from study.analysis.significance import (
    bonferroni_factor,
    bonferroni_factor_of,
    implementations,
    smallest_attainable_p,
    wilcoxon_table,
)


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    return make_scores()


def test_bonferroni_factor_of_the_paper_configuration():
    paper_tools = [
        "anima",
        "deepmind",
        "evaluatesegmentation",
        "medpy",
        "metricsreloaded",
        "miseval",
        "monai",
        "plastimatch",
        "pymia",
        "segmetrics",
        "simpleitk",
    ]
    settings = AnalysisSettings(tools=tuple(paper_tools), n_voxel_sizes=3)
    assert bonferroni_factor_of(settings) == 1188


def test_bonferroni_factor_follows_the_configuration():
    # 7 implementations (6 tools + reference), 6 metrics, 3 voxel sizes.
    assert bonferroni_factor_of(make_settings()) == 3 * 6 * math.comb(7, 2)
    assert bonferroni_factor(1, 1, 2) == 1


def test_bonferroni_rejects_bad_configuration():
    with pytest.raises(ValueError, match="n_voxel_sizes"):
        bonferroni_factor_of(AnalysisSettings(tools=("monai",)))
    with pytest.raises(ValueError, match="reference"):
        implementations(["monai", "reference"])
    with pytest.raises(ValueError, match="n_implementations"):
        bonferroni_factor(3, 6, 0)


def test_delta_of_a_tool_equal_to_the_reference_is_zero(scores):
    delta = deltas(scores, ["deepmind"])
    assert (delta["kind"] == "finite").all()
    assert np.all(delta["delta"] == 0.0)


def test_constant_offset_is_recovered_in_display_units(scores):
    summary = summarize_deltas(deltas(scores, ["monai"]), ["metric", "spacing", "tool"])
    hd = summary.loc[summary["metric"] == "HD"]
    np.testing.assert_allclose(hd[["min", "max", "mean"]].to_numpy(), 0.5, atol=1e-9)
    np.testing.assert_allclose(hd["sd"], 0.0, atol=1e-9)
    nsd = summary.loc[summary["metric"] == "NSD"]
    # 0.01 in [0, 1] is 1 percentage point.
    np.testing.assert_allclose(nsd["mean"], 1.0, atol=1e-9)
    assert set(nsd["unit"]) == {"%pt"} and set(hd["unit"]) == {"mm"}


def test_nonfinite_and_failed_rows_are_counted_not_dropped(scores):
    delta = deltas(scores, ["medpy", "miseval", "anima"])
    summary = summarize_deltas(delta, ["metric", "spacing", "tool"]).set_index(
        ["metric", "spacing", "tool"]
    )
    medpy = summary.loc[("HD95", "1x1x1", "medpy")]
    assert medpy["n_nonfinite"] == 2 and medpy["n"] == 24 and medpy["n_finite"] == 22
    assert summary.loc[("HD", "2x2x2", "miseval"), "n_failed"] == 2
    assert "anima" not in set(delta["tool"])  # its one placeholder row is not a score


def test_unavailable_tool_placeholder_is_reported_not_scored(scores):
    assert set(unavailable_tools(scores)) == {"anima"}
    assert "not found" in unavailable_tools(scores)["anima"]
    assert (measured(scores)["tool"] != "anima").all()


def test_summary_matches_plain_pandas(scores):
    summary = summarize_deltas(deltas(scores, ["medpy"]), ["metric", "spacing", "tool"])
    got = summary.set_index(["metric", "spacing", "tool"]).loc[("HD95", "1x1x1", "medpy")]
    keys = ["case", "oar"]
    pick = (scores["metric"] == "HD95") & (scores["spacing"] == "1x1x1")
    tool = scores.loc[pick & (scores["tool"] == "medpy")].set_index(keys)["value"]
    ref = scores.loc[pick & (scores["tool"] == "reference")].set_index(keys)["value"]
    diff = (tool - ref).replace([np.inf, -np.inf], np.nan).dropna()
    assert got["mean"] == pytest.approx(diff.mean())
    assert got["sd"] == pytest.approx(diff.std(ddof=1))
    assert got["min"] == pytest.approx(diff.min()) and got["max"] == pytest.approx(diff.max())


def test_missing_reference_row_is_classified(scores):
    drop = scores.index[(scores["tool"] == "reference") & (scores["metric"] == "HD")][:1]
    delta = deltas(scores.drop(drop), ["monai"])
    assert (delta["kind"] == "no_reference").sum() == 1


def test_deltas_rejects_a_table_without_required_columns(scores):
    with pytest.raises(ValueError, match="lacks columns"):
        deltas(scores.drop(columns=["status"]))


def test_wilcoxon_p_value_matches_scipy_directly(scores):
    factor = bonferroni_factor_of(make_settings())
    table = wilcoxon_table(scores, implementations(TOOLS), ["1x1x1"], factor)
    row = table.loc[
        (table["metric"] == "HD") & (table["tool_a"] == "medpy") & (table["tool_b"] == "reference")
    ].iloc[0]
    pick = (scores["metric"] == "HD") & (scores["spacing"] == "1x1x1")
    medpy = scores.loc[pick & (scores["tool"] == "medpy")].set_index(["case", "oar"])["value"]
    ref = scores.loc[pick & (scores["tool"] == "reference")].set_index(["case", "oar"])["value"]
    expected = wilcoxon(medpy.sort_index(), ref.sort_index()).pvalue
    assert row["p_value"] == pytest.approx(expected)
    assert row["p_corrected"] == pytest.approx(min(1.0, expected * factor))
    assert row["status"] == "tested" and row["n_common"] == 24


def test_wilcoxon_marks_identical_and_untestable_pairs(scores):
    table = wilcoxon_table(scores, implementations(TOOLS), ["1x1x1"], 378)
    by_pair = table.set_index(["metric", "tool_a", "tool_b"])
    assert by_pair.loc[("HD", "metricsreloaded", "monai"), "status"] == "identical"
    assert by_pair.loc[("HD", "deepmind", "reference"), "status"] == "identical"
    assert by_pair.loc[("HD", "anima", "monai"), "status"] == "untestable"
    assert np.isnan(by_pair.loc[("HD", "anima", "monai"), "p_corrected"])
    # monai vs reference: 24 positive differences, exact p = 2/2^24, corrected 378x.
    assert by_pair.loc[("HD", "monai", "reference"), "significant"]
    # One row per pair, metric and voxel size: C(7, 2) x 6 metrics.
    assert len(table) == math.comb(7, 2) * 6


def test_smallest_attainable_p():
    assert smallest_attainable_p(10) == pytest.approx(2 / 1024)
    assert smallest_attainable_p(0) == 1.0
    # The paper-sized LIDC run tests 1,578 pairs of one voxel size: no overflow.
    assert smallest_attainable_p(1578) == 0.0 and smallest_attainable_p(1024) > 0


def test_tool_order_puts_unknown_tools_before_the_reference():
    order = ordered_tools(["reference", "zzz_new_tool", "monai", "anima", "reference-surface-nets"])
    assert order == ["anima", "monai", "zzz_new_tool", "reference", "reference-surface-nets"]
    assert tool_label("zzz_new_tool") == "zzz_new_tool"


def test_a_tools_group_is_read_off_the_registry(monkeypatch):
    assert tool_group("monai") == "paper"
    assert tool_group("meshmetrics") == "cross-check"
    assert tool_group("reference-marching-cubes") == "reference"
    assert tool_group("zzz_new_tool") == "other"  # no adapter: no crash, no claim
    assert tool_group(LATER_TOOL) == "other"  # not registered yet
    register_later_tool(monkeypatch)
    assert tool_group(LATER_TOOL) == "later"
    assert group_title(LATER_TOOL) == "Since the paper"
    assert not of_the_paper(LATER_TOOL) and of_the_paper("reference")


def test_groups_order_the_tools_and_mark_their_spans(monkeypatch):
    register_later_tool(monkeypatch)  # entered last in the registry, after the cross-check
    tools = ["reference", "zzz_new_tool", "meshmetrics", LATER_TOOL, "monai", "anima"]
    order = ordered_tools(tools)
    assert order == ["anima", "monai", LATER_TOOL, "meshmetrics", "zzz_new_tool", "reference"]
    assert group_spans(order) == [
        ("paper", 0, 2),
        ("later", 2, 3),
        ("cross-check", 3, 4),
        ("other", 4, 5),
        ("reference", 5, 6),
    ]
    assert shows_groups(order)
    assert not shows_groups(["anima", "monai", "reference"])  # the paper's look
