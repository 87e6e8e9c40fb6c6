"""The generated findings state what the planted data contain."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import SPACINGS, TOOLS, make_config, make_scores, make_timing

from study.analysis import claims, findings
from study.analysis import statistics as st


@pytest.fixture(scope="module")
def sections() -> dict[str, findings.Section]:
    scores, config = make_scores(), make_config()
    wilcoxon = st.wilcoxon_table(
        scores, st.implementations(TOOLS), list(SPACINGS), st.bonferroni_factor_from_config(config)
    )
    built = findings.build_findings(
        findings.AnalysisInputs(scores, wilcoxon, config, make_timing())
    )
    return {section.title.split(" (")[0]: section for section in built}


def text_of(section: findings.Section) -> str:
    return "\n".join(section.lines)


def test_setup_states_pairs_and_bonferroni_factor(sections):
    text = text_of(sections["Set-up"])
    assert "24 mask pairs" in text and "Bonferroni factor 378" in text


def test_directions_and_sizes_of_planted_offsets(sections):
    lines = {line.split("**")[1]: line for line in sections["Over- and under-estimation"].lines}
    assert "MONAI over-estimates (mean [min, max]: +0.50 [+0.50, +0.50]" in lines["ΔHD"]
    assert "Google DeepMind agrees at all voxel sizes" in lines["ΔHD"]
    # MISeval ignores the voxel size: exact at 1 mm, over-estimates elsewhere.
    assert "MISeval agrees at (1, 1, 1) mm; over-estimates" in lines["ΔHD"]
    assert "MONAI over-estimates (mean [min, max]: +1.00" in lines["ΔNSD"]
    # Ranked by the largest mean |Δ|: MISeval (about +10 mm) before MedPy (+2 mm).
    assert lines["ΔHD"].index("MISeval") < lines["ΔHD"].index("MedPy")


def test_indistinguishable_pairs_are_listed(sections):
    text = text_of(sections["Indistinguishable pairs"])
    assert "Identical scores — Metrics Reloaded and MONAI: HD at all voxel sizes" in text
    assert "Identical scores — Google DeepMind and Reference" in text
    assert "MedPy and Reference" not in text  # +2 mm on every pair is significant


def test_failures_and_timing(sections):
    failures = text_of(sections["Missing and non-finite scores"])
    assert "Anima: not available (program 'animaSegPerfAnalyzer' not found)" in failures
    assert "MISeval: 2 error of 144 scores" in failures
    timing = text_of(sections["HD execution time"])
    assert timing.index("Google DeepMind") < timing.index("MONAI") < timing.index("MedPy")
    assert "Timed on scan-sized grids of 301 × 301 × 281 voxels" in timing


def test_paper_comparison_checks_the_data(sections):
    text = text_of(sections["Compared with the paper"])
    assert "largest |mean ΔHD| is MISeval" in text and "— agrees" in text
    assert "Metrics Reloaded = MONAI for HD, HD95. Here: indistinguishable in 6 of 6" in text
    assert (
        "Here, on scan-sized grids of 301 × 301 × 281 voxels: fastest Google DeepMind, "
        "MONAI, slowest MedPy (of the paper's slowest, MedPy were timed) — agrees"
    ) in text
    assert "24 mask pairs here against 1,561" in text


def test_small_samples_are_flagged():
    scores = make_scores()
    keep = scores["case"].eq("case_01") & scores["oar"].isin(["Cochlea_L", "Glottis"])
    wilcoxon = st.wilcoxon_table(scores.loc[keep], ["monai", "reference"], ["1x1x1"], 1188)
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
            findings.AnalysisInputs(pd.DataFrame({"x": [1]}), pd.DataFrame(), make_config())
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
    section = findings.indistinguishable_section(pd.DataFrame([row]), ["1x1x1"])
    medpy, monai = st.tool_label("medpy"), st.tool_label("monai")
    expected = f"Not significantly different (p × 100 ≥ 0.05) — {medpy} and {monai}: HD at"
    assert expected in text_of(section)


def anisotropy_summary(errors: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """Summary rows with mean Δ = −anisotropic on (0.5, 0.5, 2) mm and +isotropic on 1 mm,
    per tool, for HD95, MASD and ASSD (a 2 mm grid with large Δ that must not be used)."""
    rows = []
    for tool, (aniso, iso) in errors.items():
        for metric in ("HD95", "MASD", "ASSD"):
            rows += [
                {"tool": tool, "metric": metric, "spacing": "2x2x2", "mean": 50.0},
                {"tool": tool, "metric": metric, "spacing": "1x1x1", "mean": iso},
                {"tool": tool, "metric": metric, "spacing": "0.5x0.5x2", "mean": -aniso},
            ]
    return pd.DataFrame(rows)


def anisotropy_text(errors: dict[str, tuple[float, float]]) -> str:
    return claims.check_anisotropy(
        anisotropy_summary(errors), None, None, ["2x2x2", "1x1x1", "0.5x0.5x2"]
    )


@pytest.mark.parametrize(
    "others, deepmind, verdict",
    [
        (1.5, 0.9, "agrees"),  # the others degrade, DeepMind does not
        (0.83, 0.80, "differs"),  # nobody degrades, even though DeepMind's ratio is lower
        (1.5, 1.4, "differs"),  # everybody degrades
    ],
)
def test_anisotropy_claim_needs_both_halves(others, deepmind, verdict):
    text = anisotropy_text(
        {"deepmind": (deepmind, 1.0), "medpy": (others, 1.0), "monai": (others, 1.0)}
    )
    assert text.endswith(f"— {verdict}.")


def test_anisotropy_degradation_needs_a_margin_beyond_the_ratio():
    # 0.001 -> 0.005 mm is 5x but only 0.004 mm worse: below the 0.01 mm margin.
    assert not claims.degrades(0.005, 0.001)
    assert claims.degrades(0.2, 0.1) and not claims.degrades(0.115, 0.1)
    assert claims.degrades(0.02, 0.0) and not claims.degrades(0.0, 0.0)
    text = anisotropy_text(
        {"deepmind": (0.0, 0.0), "medpy": (0.005, 0.001), "monai": (0.005, 0.001)}
    )
    assert "0 of 2 point-based tools degrade (none) — differs." in text


def test_anisotropy_counts_point_based_tools_only_and_needs_a_majority():
    # pymia shares DeepMind's boundary weighting: its degradation is not a point-based one.
    text = anisotropy_text(
        {
            "deepmind": (0.1, 0.1),
            "pymia": (3.0, 0.1),
            "medpy": (1.5, 1.0),
            "monai": (0.9, 1.0),
            "simpleitk": (0.9, 1.0),
        }
    )
    assert f"1 of 3 point-based tools degrade ({st.tool_label('medpy')}) — differs." in text
    text = anisotropy_text(
        {
            "deepmind": (0.1, 0.1),
            "pymia": (0.1, 0.1),
            "medpy": (1.5, 1.0),
            "monai": (1.5, 1.0),
            "simpleitk": (0.9, 1.0),
        }
    )
    assert "2 of 3 point-based tools degrade" in text and text.endswith("— agrees.")
    # Compared with the finest isotropic grid (1 mm), not the first one listed (2 mm).
    assert "against (1, 1, 1) mm" in text and "Google DeepMind 0.10 vs 0.10 mm" in text


def test_fastest_check_follows_the_timing():
    """The ranking is computed from the records: making MedPy the fastest changes the verdict."""
    timing = make_timing()
    timing.loc[timing["tool"] == "medpy", "seconds"] = 0.001
    sentence = claims.check_fastest(None, None, timing, None)
    assert sentence.endswith(
        "fastest Google DeepMind, MedPy, slowest MONAI (of the paper's "
        "slowest, MedPy were timed) — differs."
    )


def test_fastest_check_names_cropped_grids_with_their_size_range():
    timing = make_timing()
    timing["grid"] = "union_bbox"
    timing["shape"] = np.where(timing["oar"] == timing["oar"].iloc[0], "10x12x9", "40x50x30")
    sentence = claims.check_fastest(None, None, timing, None)
    assert "on cropped grids of 10 × 12 × 9 to 40 × 50 × 30 voxels" in sentence
