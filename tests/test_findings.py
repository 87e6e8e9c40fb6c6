"""The generated findings state what the planted data contain."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import (
    LATER_ERROR,
    LATER_TOOL,
    SPACINGS,
    TOOLS,
    edge_case_documents,
    make_scores,
    make_settings,
    make_timing,
    register_later_tool,
    with_later_tool,
)

from study.analysis import claims, findings, tables, verdicts
from study.analysis.delta import deltas, summarize_deltas
from study.analysis.labels import tool_label
from study.analysis.read import AnalysisInputs
from study.analysis.significance import bonferroni_factor_of, implementations, wilcoxon_table


@pytest.fixture(scope="module")
def sections() -> dict[str, findings.Section]:
    scores, settings = make_scores(), make_settings()
    wilcoxon = wilcoxon_table(
        scores, implementations(TOOLS), list(SPACINGS), bonferroni_factor_of(settings)
    )
    built = findings.build_findings(AnalysisInputs(scores, wilcoxon, settings, make_timing()))
    return {section.title.split(" (")[0]: section for section in built}


def text_of(section: findings.Section) -> str:
    return "\n".join(section.lines)


def test_setup_states_pairs_and_bonferroni_factor(sections):
    text = text_of(sections["Set-up"])
    assert "24 OARs in 3 cases" in text and "Bonferroni factor 378" in text


def test_directions_and_sizes_of_planted_offsets(sections):
    section = sections["Over- and under-estimation"]
    tables = {caption.split("**")[1]: frame.set_index("Tool") for caption, frame in section.tables}
    hd, nsd = tables["ΔHD"], tables["ΔNSD"]
    assert (hd.loc["MONAI", "(1, 1, 1) mm"]) == "over +0.50 [+0.50, +0.50]"
    assert set(hd.loc["Google DeepMind"].iloc[:3]) == {"agrees"}  # at all voxel sizes
    # MISeval ignores the voxel size: exact at 1 mm, over-estimates elsewhere.
    assert hd.loc["MISeval", "(1, 1, 1) mm"] == "agrees"
    assert hd.loc["MISeval", "(2, 2, 2) mm"].startswith("over +10.20 [")
    assert hd.loc["MISeval", "Not finite or failed"] == 2
    assert nsd.loc["MONAI", "(2, 2, 2) mm"] == "over +1.00 [+1.00, +1.00]"
    # Ranked by the largest mean |Δ|: MISeval (about +10 mm) before MedPy (+2 mm).
    assert list(hd.index).index("MISeval") < list(hd.index).index("MedPy")


def test_the_summary_comes_first_and_is_short(sections):
    assert list(sections)[0] == "Summary"
    lines = sections["Summary"].lines
    assert len(lines) <= findings.SUMMARY_LINES
    hd95 = next(line for line in lines if line.startswith("**HD95**"))
    # A verdict per voxel size, each found by its spacing.
    assert hd95.startswith("**HD95** — (1, 1, 1) mm: use Google DeepMind, Metrics Reloaded")
    assert "MedPy" not in hd95  # +2 mm at every voxel size: never among the tools to use
    assert "· (2, 2, 2) mm: use" in hd95 and "· (0.5, 0.5, 2) mm: use" in hd95
    assert "isotropic" not in " ".join(lines)  # no verdict pooled over voxel sizes
    assert lines[-1].startswith("The paper's claims: ")


def test_indistinguishable_pairs_are_listed(sections):
    text = text_of(sections["Indistinguishable pairs"])
    # One line per metric: groups of implementations with identical scores per voxel size.
    assert (
        "Identical scores of HD at (1, 1, 1) mm: Google DeepMind = MISeval = Reference; "
        "Metrics Reloaded = MONAI; at (2, 2, 2) mm, (0.5, 0.5, 2) mm: Google DeepMind = "
        "Reference; Metrics Reloaded = MONAI."
    ) in text  # MISeval is exact at 1 mm only
    assert (
        "Identical scores of HD95 at all voxel sizes: Google DeepMind = Reference; "
        "Metrics Reloaded = MONAI."
    ) in text
    assert "MedPy and Reference" not in text  # +2 mm on every pair is significant
    # Untestable comparisons name the tools not installed here, and only those.
    assert "not finite; not installed here: Anima)." in text


def test_untestable_comparisons_name_no_missing_tool_when_all_are_installed():
    scores, settings = make_scores(), make_settings()
    wilcoxon = wilcoxon_table(
        scores, implementations(TOOLS), list(SPACINGS), bonferroni_factor_of(settings)
    )
    text = " ".join(findings.indistinguishable_section(wilcoxon, list(SPACINGS)).lines)
    assert "comparisons had no common finite scores" in text
    assert "not installed" not in text


def test_failures_and_timing(sections):
    failures = text_of(sections["Missing and non-finite scores"])
    assert "Anima: not available (program 'animaSegPerfAnalyzer' not found)" in failures
    assert "MISeval: 2 error of 144 scores" in failures
    timing = text_of(sections["HD execution time"])
    assert timing.index("Google DeepMind") < timing.index("MONAI") < timing.index("MedPy")
    assert "Timed on scan-sized grids of 301 × 301 × 281 voxels" in timing


def test_paper_comparison_checks_the_data(sections):
    text = text_of(sections["Compared with the paper"])
    assert "the largest |mean ΔHD| on one grid is 10.20 mm (MISeval, at (2, 2, 2) mm)" in text
    assert "the paper's other tools' at most 2.00 mm (MedPy, at (2, 2, 2) mm) — agrees" in text
    # The fixture plants Metrics Reloaded = MONAI on every metric, MASD included.
    assert "Metrics Reloaded = MONAI for HD, HD95, ASSD, NSD, not for MASD (Table A1)" in text
    assert "HD the same at 3 of 3; HD95 the same at 3 of 3" in text
    assert "MASD different at 0 of 3 voxel sizes — differs." in text
    assert (
        "by median HD time per case on scan-sized grids of 301 × 301 × 281 voxels: fastest "
        "Google DeepMind, MONAI, slowest MedPy (of the paper's slowest, MedPy were timed) "
        "— agrees"
    ) in text
    assert "24 mask pairs here against 1,561" in text


def test_identical_groups_join_only_pairs_that_are_all_identical():
    pairs = pd.DataFrame(
        {"tool_a": ["deepmind", "medpy", "monai"], "tool_b": ["medpy", "monai", "deepmind"]}
    )
    assert findings.identical_groups(pairs) == "Google DeepMind = MedPy = MONAI"
    chain = findings.identical_groups(pairs.iloc[:2])  # deepmind = medpy, medpy = monai only
    assert sorted(chain.split("; ")) == ["Google DeepMind = MedPy", "MedPy = MONAI"]


def test_small_samples_are_flagged():
    scores = make_scores()
    keep = scores["case"].eq("case_01") & scores["oar"].isin(["Cochlea_L", "Glottis"])
    wilcoxon = wilcoxon_table(scores.loc[keep], ["monai", "reference"], ["1x1x1"], 1188)
    section = findings.indistinguishable_section(wilcoxon, ["1x1x1"])
    assert "No test can be significant here" in text_of(section)
    assert "Not significantly different" not in text_of(section)


def test_renderings(sections):
    markdown = findings.render_markdown(list(sections.values()))
    assert markdown.startswith("# Findings") and "## Compared with the paper" in markdown
    page = findings.render_html(list(sections.values()))
    assert "<b>ΔHD</b>" in page and "**" not in page


def test_rejects_a_table_without_scores_columns():
    with pytest.raises(ValueError, match="lacks columns"):
        findings.build_findings(
            AnalysisInputs(pd.DataFrame({"x": [1]}), pd.DataFrame(), make_settings())
        )


def test_non_significant_pairs_are_listed_when_the_test_has_power():
    row = {
        "spacing": "1x1x1",
        "metric": "HD",
        "tool_a": "medpy",
        "tool_b": "monai",
        "n_common": 30,
        "statistic": 200.0,
        "p_value": 0.01,
        "p_corrected": 1.0,
        "factor": 100,
        "significant": False,
        "status": "tested",
    }
    with_reference = {**row, "tool_b": "reference"}
    section = findings.indistinguishable_section(pd.DataFrame([row, with_reference]), ["1x1x1"])
    # Pairs with the reference are named; pairs of tools are counted (which: Fig. A4).
    medpy = tool_label("medpy")
    expected = f"Not significantly different (p × 100 ≥ 0.05) — {medpy} and Reference: HD at"
    assert expected in text_of(section)
    caption, counts = section.tables[0]
    assert "which pairs: Fig. A4" in caption
    assert counts.to_dict("records") == [{"Metric": "HD", "(1, 1, 1) mm": "1 of 1"}]


def timing_evidence(timing: pd.DataFrame) -> claims.Evidence:
    """The evidence the findings build from timing records (and nothing else)."""
    inputs = AnalysisInputs(make_scores(), pd.DataFrame(), make_settings(), timing)
    evidence = findings.evidence(inputs, pd.DataFrame(columns=["tool", "metric"]), SPACINGS)
    return evidence


def test_fastest_check_follows_the_timing():
    """The ranking is computed from the records: making MedPy the fastest changes the verdict."""
    timing = make_timing()
    timing.loc[timing["tool"] == "medpy", "seconds"] = 0.001
    sentence = claims.check_fastest(timing_evidence(timing))
    assert sentence.endswith(
        "fastest Google DeepMind, MedPy, slowest MONAI (of the paper's "
        "slowest, MedPy were timed) — differs."
    )


def test_fastest_check_names_cropped_grids_with_their_size_range():
    timing = make_timing()
    timing["grid"] = "union_bbox"
    timing["shape"] = np.where(timing["oar"] == timing["oar"].iloc[0], "10x12x9", "40x50x30")
    sentence = claims.check_fastest(timing_evidence(timing))
    assert "on cropped grids of 10 × 12 × 9 to 40 × 50 × 30 voxels" in sentence


# --------------------------------------------------------------------------------------------
# The tools since the paper
# --------------------------------------------------------------------------------------------


def later_inputs(
    scores: pd.DataFrame, timing: pd.DataFrame, *, later: bool = True
) -> AnalysisInputs:
    """The findings' inputs of a study of the fixture's tools and the later tool (`later`:
    configured, so it counts in the Bonferroni factor), or of the fixture's tools alone."""
    tools = (*TOOLS, LATER_TOOL) if later else tuple(TOOLS)
    settings = replace(make_settings(), tools=tools)
    names = implementations(settings.tools)
    factor = bonferroni_factor_of(settings)
    wilcoxon = wilcoxon_table(scores, names, list(SPACINGS), factor)
    edge_cases = tables.table_a3(edge_case_documents(later=True)).numeric
    return AnalysisInputs(scores, wilcoxon, settings, timing, None, edge_cases)


@pytest.fixture
def later_sections(monkeypatch) -> dict[str, findings.Section]:
    register_later_tool(monkeypatch)
    inputs = later_inputs(with_later_tool(make_scores()), make_timing(later=True))
    return {s.title.split(" (")[0]: s for s in findings.build_findings(inputs)}


def test_the_later_tools_section_reports_what_the_data_hold(later_sections):
    lines = later_sections["Tools since the paper"].lines
    assert "left out of every check of the paper's claims: Later Tool." in lines[0]
    scores, edge, timing = lines[1], lines[2], lines[3]
    assert scores.startswith("**Later Tool** latertool-2.0 against the reference: ")
    assert "HD agrees on all 72 pairs" in scores
    assert "HD95 (mm): (1, 1, 1) mm -0.25 ± 0.00 (0/24 agree)" in scores
    assert f"(0.5, 0.5, 2) mm no finite Δ; 24 of 72 failed ({LATER_ERROR})" in scores
    assert "DSC (%pt): (1, 1, 1) mm +2.00 ± 0.00 (0/24 agree)" in scores
    assert "MASD" not in scores and "NSD" not in scores  # not offered: simply absent
    assert edge == "**Later Tool** edge cases (Table A3): HD O1 ∞, O2 ∞, O3 NaN, S ✓."
    # About 20 ms: after DeepMind's 10 ms and before MONAI's 50 ms and MedPy's 1 s.
    assert "2 of 4 timed tools by speed" in timing and "to 987 ms (MedPy)" in timing


def test_the_later_tools_section_says_when_there_is_none(sections):
    assert sections["Tools since the paper"].lines == [
        "No tool added since the paper was scored in this run."
    ]


def test_the_later_tools_section_works_without_timing_or_edge_cases(monkeypatch):
    register_later_tool(monkeypatch)
    inputs = later_inputs(with_later_tool(make_scores()), None)
    inputs.edge_cases = None
    lines = findings.later_tools_section(inputs, list(SPACINGS)).lines
    assert lines[2].endswith("no edge-case record.")
    assert lines[3].endswith("not timed (or every timing run failed).")


def test_the_papers_claims_ignore_a_later_tool(monkeypatch):
    """A later tool with the largest ΔHD of all and the fastest HD time changes no sentence
    of the comparison with the paper; unfiltered, the same evidence would."""
    register_later_tool(monkeypatch)
    scores = with_later_tool(make_scores())
    scores.loc[(scores["tool"] == LATER_TOOL) & (scores["metric"] == "HD"), "value"] += 100
    timing = make_timing(later=True)
    timing.loc[timing["tool"] == LATER_TOOL, "seconds"] = 1e-4
    with_later = later_inputs(scores, timing)
    without = later_inputs(make_scores(), make_timing(), later=False)
    factors = {int(inputs.wilcoxon["factor"].iloc[0]) for inputs in (with_later, without)}
    assert len(factors) == 2  # the later tool tightens every test of the run

    def comparison(inputs):
        built = findings.build_findings(inputs)
        return next(s for s in built if s.title == "Compared with the paper").lines

    assert comparison(with_later) == comparison(without)
    summary = summarize_deltas(deltas(scores), ["metric", "spacing", "tool"])
    evidence = findings.evidence(with_later, summary, list(SPACINGS))
    # The check itself speaks of the paper's tools, and names them (never "the other tools").
    assert "Later Tool" not in claims.check_miseval_hd(evidence)
    assert "fastest Google DeepMind, Later Tool" in claims.check_fastest(evidence)


def test_the_papers_tests_keep_the_papers_bonferroni_family(monkeypatch):
    """Two of the paper's tools and the reference (3 pairs) in a run with a later tool (6
    pairs): p = 0.01 is significant in the paper's family (× 3), not in the run's (× 6)."""
    register_later_tool(monkeypatch)
    pairs = [
        ("deepmind", "reference"),
        ("monai", "reference"),
        ("deepmind", "monai"),
        ("deepmind", LATER_TOOL),
        ("monai", LATER_TOOL),
        (LATER_TOOL, "reference"),
    ]
    wilcoxon = pd.DataFrame(
        {
            "spacing": "1x1x1",
            "metric": "HD",
            "tool_a": [a for a, _ in pairs],
            "tool_b": [b for _, b in pairs],
            "p_value": 0.01,
            "p_corrected": 0.06,
            "factor": 6,
            "significant": False,
            "status": "tested",
        }
    )
    mine = claims.paper_family(wilcoxon)
    assert len(mine) == 3 and set(mine["factor"]) == {3}
    assert mine["p_corrected"].tolist() == pytest.approx([0.03] * 3)
    assert mine["significant"].all()
    paper_alone = wilcoxon.iloc[:3]
    assert claims.paper_family(paper_alone).equals(paper_alone)  # nothing to rescale


def test_measured_problems_name_each_tool_of_a_shared_row():
    """Tools with identical scores share a row: a reason of the row names them all, a reason
    of one of them ("MISeval only: ...") names it alone."""
    table = pd.DataFrame(
        {
            "tool": ["miseval"],
            "stratum": [verdicts.ALL],
            "identical": ["skimage"],
            "metric": ["HD"],
            "reasons": [
                "ignores the voxel size (measured: ...); MISeval only: depends on the field of "
                "view: changed on 1 of 5 grid-check pairs"
            ],
        }
    )
    assert findings.measured_problems(table) == (
        "Measured: ignores the voxel size: MISeval HD, scikit-image HD; depends on the field of "
        "view: MISeval HD."
    )
