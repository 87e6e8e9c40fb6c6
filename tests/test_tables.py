"""Tables A1-A4 and the Wilcoxon table: contents checked against plain recomputation."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import (
    LATER_TOOL,
    TOOLS,
    edge_case_documents,
    make_scores,
    make_settings,
    register_later_tool,
    with_later_tool,
)

from study.analysis import tables
from study.analysis.delta import REFERENCE_MESHING_VARIANTS
from study.analysis.labels import format_number, tool_label
from study.analysis.read import load_edge_cases
from study.analysis.rendering import write_table
from study.analysis.significance import bonferroni_factor_of, implementations, wilcoxon_table
from study.records import spacing_title


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    return make_scores()


def test_table_a1_cell_matches_plain_pandas(scores):
    table = tables.table_a1(scores, spacings=["1x1x1", "2x2x2", "0.5x0.5x2"])
    row = table.numeric.set_index(["metric", "spacing", "tool"]).loc[("MASD", "2x2x2", "medpy")]
    pick = (scores["metric"] == "MASD") & (scores["spacing"] == "2x2x2")
    keyed = scores.loc[pick].pivot_table(index=["case", "oar"], columns="tool", values="value")
    diff = keyed["medpy"] - keyed["reference"]
    assert row["mean"] == pytest.approx(diff.mean())
    assert row["sd"] == pytest.approx(diff.std())
    # The display cell shows the same numbers.
    by_row = table.display.set_index(["Δ metric", "Tool"])
    shown = by_row.loc[("ΔMASD (mm)", tool_label("medpy"))]
    assert shown["(2, 2, 2) mm: mean ± SD"] == (
        f"{format_number(diff.mean())} ± {format_number(diff.std())}"
    )


def test_table_a1_says_the_references_own_uncertainty_when_recorded(scores):
    assert not any("uncertainty" in note for note in tables.table_a1(scores).notes)
    bracketed = scores.copy()
    reference = bracketed["tool"] == "reference"
    width = np.where(bracketed["metric"] == "NSD", 0.0004, 0.003)  # NSD a fraction: 0.04 %pt
    bracketed["reference_low"] = np.where(reference, bracketed["value"] - width / 2, np.nan)
    bracketed["reference_high"] = np.where(reference, bracketed["value"] + width / 2, np.nan)
    widest = bracketed.loc[reference & (bracketed["metric"] == "MASD"), "case"].index[0]
    bracketed.loc[widest, "reference_high"] += 0.005  # one pair's MASD bracket 0.008 mm wide
    grid = bracketed.loc[widest, "spacing"]
    (note,) = [n for n in tables.table_a1(bracketed).notes if "uncertainty" in n]
    assert f"MASD 0.008 mm (at {spacing_title(grid)})" in note
    assert "NSD 0.04 %pt (at (1, 1, 1) mm)" in note  # equal widths: the first voxel size
    assert "HD 0.003 mm (at (1, 1, 1) mm)" in note


def test_table_a1_shows_excluded_counts_and_percentage_points(scores):
    table = tables.table_a1(scores)
    display = table.display.set_index(["Δ metric", "Tool"])
    medpy, miseval, monai = (tool_label(t) for t in ("medpy", "miseval", "monai"))
    assert display.loc[("ΔHD95 (mm)", medpy), "(1, 1, 1) mm: excluded"] == "2 non-finite"
    assert display.loc[("ΔHD (mm)", miseval), "(2, 2, 2) mm: excluded"] == "2 failed"
    assert display.loc[("ΔNSD (%pt)", monai), "(1, 1, 1) mm: excluded"] == "0"  # not blank
    assert display.loc[("ΔNSD (%pt)", monai), "(1, 1, 1) mm: mean ± SD"] == "1.00 ± 0.00"
    # Column order follows the given voxel sizes; metrics follow the study's order.
    assert list(table.display["Δ metric"].unique())[:2] == ["ΔHD (mm)", "ΔHD95 (mm)"]
    assert "DSC" not in " ".join(table.display["Δ metric"])


def test_table_a2_is_stratified_by_category(scores):
    table = tables.table_a2(scores)
    cats = [c.split(":")[0] for c in table.display.columns[2::3]]
    assert cats == ["small", "midsize", "large", "tubular"]
    row = table.numeric.set_index(["metric", "category", "tool"]).loc[("HD", "large", "miseval")]
    # miseval HD doubles the reference at 2 mm and 0.5x0.5x2 (2 of its large rows failed at
    # 2 mm are in categories chosen by order, so recompute rather than assume).
    pick = (scores["metric"] == "HD") & (scores["category"] == "large")
    keyed = scores.loc[pick].pivot_table(
        index=["case", "oar", "spacing"], columns="tool", values="value", dropna=False
    )
    diff = (keyed["miseval"] - keyed["reference"]).dropna()
    assert row["n_finite"] == len(diff) and row["mean"] == pytest.approx(diff.mean())


def test_table_a4_compares_meshings_to_the_reference(scores):
    table = tables.table_a4(scores)
    numeric = table.numeric
    assert set(numeric["tool"]) == set(REFERENCE_MESHING_VARIANTS)
    mc = numeric.loc[(numeric["tool"] == "reference-marching-cubes") & (numeric["metric"] == "HD")]
    np.testing.assert_allclose(mc["mean"], 0.01, atol=1e-9)
    sn = numeric.loc[(numeric["tool"] == "reference-surface-nets") & (numeric["metric"] == "NSD")]
    np.testing.assert_allclose(sn["mean"], -10.0, atol=1e-9)  # -0.1 in [0, 1] = -10 %pt
    with pytest.raises(ValueError, match="meshing variants"):
        tables.table_a4(scores.loc[~scores["tool"].isin(REFERENCE_MESHING_VARIANTS)])


def test_wilcoxon_table_states_the_factor(scores):
    factor = bonferroni_factor_of(make_settings())
    result = wilcoxon_table(scores, implementations(TOOLS), ["1x1x1"], factor)
    table = tables.table_wilcoxon(result, len(implementations(TOOLS)))
    assert f"p × {factor:,}" in " ".join(table.display.columns)
    assert f"{factor:,} = 1 voxel sizes × 6 metrics × C(7, 2)" in table.notes[0]
    assert "no common finite scores" in set(table.display.iloc[:, 6])


def test_table_a3_layout_and_symbols():
    table = tables.table_a3(edge_case_documents())
    display = table.display.set_index("Tool")
    assert list(display.columns[:5]) == ["Version", "DSC O1", "DSC O2", "DSC O3", "DSC S"]
    assert display.loc[tool_label("monai"), "HD O1"] == "NaNW"
    assert display.loc[tool_label("deepmind"), "HD O2"] == "∞"
    assert display.loc[tool_label("miseval"), "HD O1"] == "3.50"
    assert display.loc[tool_label("miseval"), "HD S"] == "✓"
    assert display.loc[tool_label("monai"), "Version"] == "1.6.1"


def test_table_a3_says_when_a_tool_is_not_installed():
    missing = {
        "tool": "anima",
        "label": "Anima",
        "version": None,
        "status": "unavailable",
        "reason": "program 'animaSegPerfAnalyzer' not found",
        "records": [],
    }
    display = tables.table_a3([*edge_case_documents(), missing]).display.set_index("Tool")
    assert display.loc[tool_label("anima"), "Version"] == "not installed"


def test_edge_case_loader_names_the_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tool": "x", "version": "1", "records": [{"case": "O9", "output": "0"}]}')
    with pytest.raises(ValueError, match="bad.json"):
        load_edge_cases([bad])
    with pytest.raises(ValueError, match="missing.json"):
        load_edge_cases([tmp_path / "missing.json"])


def test_renderings_are_written(tmp_path, scores):
    table = tables.table_a1(scores)
    paths = [tmp_path / f"a1.{ext}" for ext in ("csv", "md", "tex", "html")]
    write_table(table, *paths)
    assert pd.read_csv(paths[0]).shape[0] == table.numeric.shape[0]
    markdown = paths[1].read_text()
    assert markdown.startswith("## Table A1") and "| ΔHD (mm)" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    cells_per_row = {len(re.findall(r"(?<!\\)\|", line)) for line in rows}
    assert cells_per_row == {len(table.display.columns) + 1}  # "min | max" stays in one cell
    latex = paths[2].read_text()
    assert r"\begin{tabular}" in latex and r"$\Delta$HD" in latex
    assert re.search(r"(?<!\\)%", latex) is None  # every % escaped, or LaTeX drops the line
    assert "<table" in paths[3].read_text()


def test_format_number():
    assert format_number(0.091) == "0.09"
    assert format_number(-34.81) == "−34.8"
    assert format_number(115.2) == "115"
    assert format_number(float("nan")) == "–"
    assert format_number(float("inf")) == "∞"


def test_analysis_plan_of_the_default_configuration():
    from study.pipeline.analysis_plan import AnalysisPlan
    from study.pipeline.config import load_config

    root = Path(__file__).resolve().parents[1]
    # The paper's eleven and the reference: the paper's factor; all 17 tools: every pair of 18.
    paper = AnalysisPlan(load_config(root / "workflow/presets/paper.yaml"))
    assert paper.params["factor"] == 1188 and paper.params["n_implementations"] == 12
    config = load_config(root / "config.yaml")
    plan = AnalysisPlan(config)
    assert plan.params["factor"] == 3 * 6 * 153 and plan.params["n_implementations"] == 18
    targets = plan.targets()
    assert "results/tables/table_a4.tex" in targets and "results/findings.html" in targets
    assert "results/tables/table_observers.html" in targets  # the data report
    for made in ("cards.md", "recommendations.html", "tables/recommendations.csv"):
        assert f"results/{made}" in targets  # what a reader can act on
    assert "results/tables/intervals.csv" in targets
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    assert not any("table_a4" in t for t in AnalysisPlan(config).targets())


@pytest.mark.parametrize(
    "overrides, caption",
    [
        ({}, "scan-sized grids (300 × 300 × 280 mm around each case's organs)"),
        ({"timing": {"grid": "scoring"}}, "cropped grids (each pair's box plus 5 mm)"),
        (
            {
                "timing": {"grid": "scoring"},
                "field_of_view": {"policy": "scan", "scan_mm": [250] * 3},
            },
            "scan-sized grids (250 × 250 × 250 mm around each case's organs)",
        ),
    ],
)
def test_figure_a5_caption_names_the_timed_grid(overrides, caption):
    from study.pipeline.analysis_plan import AnalysisPlan
    from study.pipeline.config import load_config

    assert AnalysisPlan(load_config(overrides)).params["timing_grid"] == caption


def test_unavailable_tools_are_named_in_the_notes(scores):
    notes = " ".join(tables.table_a1(scores).notes)
    assert (
        "Not available here (no scores): Anima (program 'animaSegPerfAnalyzer' not found)" in notes
    )
    assert "anima" not in set(tables.table_a1(scores).numeric["tool"])


# --------------------------------------------------------------------------------------------
# The tools since the paper: a group of their own, after the eleven
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [tables.table_a1, tables.table_a2], ids=["A1", "A2"])
def test_a_later_tool_is_a_group_after_the_papers_tools(monkeypatch, scores, build):
    register_later_tool(monkeypatch)
    table = build(with_later_tool(scores))
    groups = table.numeric.drop_duplicates("tool").set_index("tool")["group"]
    assert groups[LATER_TOOL] == "later" and set(groups.drop(LATER_TOOL)) == {"paper"}
    # The CSV rows: every paper tool's before the later tool's, within each metric.
    for _, rows in table.numeric.groupby("metric", sort=False):
        ranks = rows["group"].map({"paper": 0, "later": 1}).to_numpy()
        assert (np.diff(ranks) >= 0).all()
    hd = table.display.loc[table.display["Δ metric"] == "ΔHD (mm)"]
    assert list(hd["Group"]) == ["In the paper"] * (len(hd) - 1) + ["Since the paper"]
    assert hd["Tool"].iloc[-1] == "Later Tool"
    assert any(note.startswith("Group: In the paper") for note in table.notes)
    # Metrics the later tool does not offer have no row of it.
    masd = table.display.loc[table.display["Δ metric"] == "ΔMASD (mm)"]
    assert "Later Tool" not in set(masd["Tool"])


def test_the_papers_tools_alone_look_like_the_paper(scores):
    table = tables.table_a1(scores)
    assert "Group" not in table.display.columns and not any("Group:" in n for n in table.notes)
    assert set(table.numeric["group"]) == {"paper"}  # the CSV keeps its columns


def test_a_tool_without_an_adapter_is_grouped_as_other(scores):
    stranger = scores.loc[scores["tool"] == "monai"].assign(tool="zzz_user_tool")
    table = tables.table_a1(pd.concat([scores, stranger], ignore_index=True))
    hd = table.display.loc[table.display["Δ metric"] == "ΔHD (mm)"]
    assert hd.iloc[-1][["Group", "Tool"]].tolist() == ["Other", "zzz_user_tool"]


def test_table_a3_shows_the_later_tools_row_after_the_papers(monkeypatch):
    register_later_tool(monkeypatch)
    table = tables.table_a3(edge_case_documents(later=True))
    assert list(table.display["Tool"]) == ["Google DeepMind", "MISeval", "MONAI", "Later Tool"]
    assert list(table.display["Group"]) == ["In the paper"] * 3 + ["Since the paper"]
    later = table.display.set_index("Tool").loc["Later Tool"]
    assert (later["HD O1"], later["HD O3"], later["DSC O1"]) == ("∞", "NaN", "")  # no DSC
    assert set(table.numeric.loc[table.numeric["tool"] == LATER_TOOL, "group"]) == {"later"}
