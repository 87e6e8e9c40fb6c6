"""Tool cards, recommendations and the interval table follow the data they are computed from."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import (
    LATER_ERROR,
    SPACINGS,
    edge_case_documents,
    make_scores,
    make_settings,
    make_timing,
    register_later_tool,
    with_later_tool,
    write_results,
)

from adapters import REGISTRY
from study.__main__ import main
from study.analysis import advice, cards, document, findings, verdict_text
from study.analysis import verdicts as rules
from study.analysis.document import render_html
from study.analysis.read import AnalysisInputs
from study.analysis.tables import table_a3
from study.records import SCORE_COLUMNS, parse_spacing_label, spacing_title


def overall(scores: pd.DataFrame, *args, **kwargs) -> pd.DataFrame:
    """The verdict table's rows over every grid's pairs (the `ALL` stratum)."""
    return verdict_text.of_stratum(rules.verdict_table(scores, *args, **kwargs))


def verdicts(scores: pd.DataFrame, **kwargs) -> pd.DataFrame:
    table = overall(scores, **kwargs)
    return table.set_index(["metric", "spacing", "tool"]).sort_index()


def test_the_planted_tools_are_ranked_and_the_biased_one_avoided():
    table = verdicts(make_scores())
    hd95 = table.loc[("HD95", "1x1x1")]
    used = hd95.loc[hd95["verdict"] == "use"].sort_values("rank")
    # Ranked by |worst Δ|: 0, then the planted +0.5 mm of the identical pair (one row).
    assert list(used.index) == ["deepmind", "metricsreloaded"]
    assert used.loc["metricsreloaded", "identical"] == "monai"
    assert list(used["rank"]) == [1, 2] and used["worst"].tolist() == pytest.approx([0, 0.5])
    medpy = hd95.loc["medpy"]
    assert medpy["verdict"] == "avoid" and medpy["rank"] == 0
    assert medpy["reasons"].startswith(
        "over-estimates by +1.99 mm (median Δ), a bias: Δ > 0 on 22 of 22 pairs; 0% of 24 "
        "pairs within ±0.5 mm"
    )
    assert "2 of 24 Δ not finite" in medpy["reasons"]  # the planted inf and NaN
    miseval = table.loc[("HD", "2x2x2", "miseval")]
    assert "fails on 2 of 24 pairs (boom)" in miseval["reasons"]


def test_a_verdict_is_given_per_voxel_size_never_pooled():
    """A tool within the tolerance at 1 mm and not at 2 mm is used at 1 mm and avoided at
    2 mm; pooled over both (48 pairs, 50 % within) it would be avoided at 1 mm too."""
    scores = make_scores()
    at_2mm = (scores["tool"] == "deepmind") & (scores["spacing"] == "2x2x2")
    scores.loc[at_2mm & (scores["metric"] == "HD95"), "value"] += 1.0
    table = overall(scores)
    assert not table.duplicated(["metric", "spacing", "tool"]).any()
    assert set(table["spacing"]) == set(SPACINGS)  # one grid per row, the run's three
    assert table["grid"].tolist() == table["spacing"].map(spacing_title).tolist()
    rows = table.set_index(["metric", "spacing", "tool"])
    assert rows.loc[("HD95", "1x1x1", "deepmind"), "verdict"] == "use"
    assert rows.loc[("HD95", "2x2x2", "deepmind"), "verdict"] == "avoid"
    # The summary gives each voxel size its own verdict, by its spacing.
    lines = verdict_text.summary_lines(table)
    hd95 = next(line for line in lines if line.startswith("**HD95**"))
    assert hd95.startswith("**HD95** — (1, 1, 1) mm: use Google DeepMind, Metrics Reloaded")
    assert "· (2, 2, 2) mm: use Metrics Reloaded = MONAI ·" in hd95
    assert "· (0.5, 0.5, 2) mm: use Google DeepMind" in hd95


def test_a_grid_without_a_voxel_size_label_is_a_grid_of_its_own():
    """Pairs scored on their own scans' grids ("native") get their own verdicts."""
    scores = make_scores()
    scores.loc[scores["spacing"] == "0.5x0.5x2", "spacing"] = "native"
    table = overall(scores)
    assert list(dict.fromkeys(table["spacing"])) == ["1x1x1", "2x2x2", "native"]
    assert (table.loc[table["spacing"] == "native", "n"] == 24).all()
    assert set(table.loc[table["spacing"] == "native", "grid"]) == {"native grid"}


def test_where_no_tool_passes_the_closest_are_named_with_their_interval():
    """No dead end: with every tool off by 1 mm or more at 2 mm, the two closest are named
    (the narrowest 95 % interval first) with their interval, beside the reference's exact
    route and its time per pair."""
    scores = make_scores()
    at_2mm = (scores["spacing"] == "2x2x2") & (scores["metric"] == "HD95")
    scores.loc[at_2mm & (scores["tool"] == "deepmind"), "value"] += 0.9  # Δ +0.9
    scores.loc[at_2mm & (scores["tool"] == "metricsreloaded"), "value"] += 0.6  # Δ +1.1
    scores.loc[at_2mm & (scores["tool"] == "monai"), "value"] += 0.7  # Δ +1.2
    reference = (scores["spacing"] == "2x2x2") & (scores["tool"] == "reference")
    scores.loc[reference, "seconds"] = 1.5  # one call per pair for all its metrics
    table = overall(scores)
    grid = table.loc[(table["metric"] == "HD95") & (table["spacing"] == "2x2x2")]
    assert "use" not in set(grid["verdict"])
    closest = grid.loc[grid["verdict"] == "closest"].set_index("tool")
    # Metrics Reloaded (+1.1 mm) is not MONAI's (+1.2 mm) twin here any more.
    assert list(closest.index) == ["deepmind", "metricsreloaded"]
    assert list(closest["rank"]) == [1, 2]
    assert closest.loc["deepmind", ["lo", "hi"]].tolist() == pytest.approx([0.9, 0.9])
    verdict = verdict_text.grid_verdict(grid)
    assert verdict.startswith("no tool passes; closest Google DeepMind (narrowest interval: ")
    assert (
        "Δ in [+0.90, +0.90] mm on 95 % of pairs: a published v is within [v -0.90, v -0.90] "
        "of the exact value"
    ) in verdict
    assert "`python -m reference A B` (median 1.5 s, at most 1.5 s per pair" in verdict
    for line in verdict_text.summary_lines(overall(make_scores())):
        assert "use none" not in line


def test_a_consistent_bias_is_called_a_bias_with_its_factor():
    """A tool at 0.3 × the reference's distance (pymia's MASD in the default study) is named
    for a bias by a factor, with the pairs its sign holds on, not for scatter."""
    scores = make_scores()
    rows = scores.loc[(scores["tool"] == "reference") & (scores["metric"] == "MASD")]
    third = rows.assign(tool="pymia", tool_version="1", value=rows["value"] * 0.3)
    table = verdicts(pd.concat([scores, third], ignore_index=True))
    reason = table.loc[("MASD", "1x1x1", "pymia"), "reasons"]
    assert reason.startswith(
        "under-estimates by a factor of 0.30 (median tool / reference; median Δ"
    )
    assert "a bias: Δ < 0 on 24 of 24 pairs" in reason and "scatters" not in reason
    # An offset stays an offset (MedPy's planted +2 mm), and Δ of both signs is scatter.
    assert "over-estimates by +1.98 mm" in table.loc[("MASD", "1x1x1", "medpy"), "reasons"]
    rng = np.random.default_rng(0)
    noisy = rows.assign(
        tool="pymia", tool_version="1", value=rows["value"] + rng.choice([-1.0, 1.0], len(rows))
    )
    table = verdicts(pd.concat([scores, noisy], ignore_index=True))
    assert table.loc[("MASD", "1x1x1", "pymia"), "reasons"].startswith("scatters: Δ > 0 on ")


def test_an_injected_bias_drops_a_tool_out_of_the_recommended_set():
    scores = make_scores()
    before = verdicts(scores).loc[("HD95", "0.5x0.5x2", "deepmind")]
    assert before["verdict"] == "use"
    biased = (scores["tool"] == "deepmind") & (scores["metric"] == "HD95")
    scores.loc[biased, "value"] -= 0.8
    after = verdicts(scores).loc[("HD95", "0.5x0.5x2")]
    assert after.loc["deepmind", "verdict"] == "avoid"
    assert after.loc["deepmind", "reasons"].startswith(
        "under-estimates by -0.80 mm (median Δ), a bias: Δ < 0 on 24 of 24 pairs; 0% of 24"
    )
    assert after.loc["metricsreloaded", "rank"] == 1  # the others move up
    # A bias on few enough pairs keeps it: 2 of the 24 pairs at 1 mm leave 91.7 % within.
    scores = make_scores()
    rows = scores.index[biased & (scores["spacing"] == "1x1x1")]
    scores.loc[rows[:2], "value"] += 3.0
    assert verdicts(scores).loc[("HD95", "1x1x1", "deepmind"), "verdict"] == "use"
    scores.loc[rows[2:3], "value"] += 3.0  # 3 of 24: 87.5 % < MOST_PAIRS
    assert verdicts(scores).loc[("HD95", "1x1x1", "deepmind"), "verdict"] == "avoid"


def test_use_and_avoid_are_told_apart_by_word_and_colour():
    table = overall(make_scores())
    page = render_html(cards.recommendation_sections(table), "Recommendations")
    for word in ("USE", "AVOID"):
        style = document.VERDICT_STYLES[word]
        assert f"<td style='{style}'>{word}</td>" in page
    assert document.VERDICT_STYLES["USE"] != document.VERDICT_STYLES["AVOID"]
    assert "<td class='wrap'>over-estimates by" in page  # the reasons wrap, never cut


def test_tools_with_identical_scores_share_one_row_and_rank():
    """Metrics Reloaded = MONAI in the fixture: one row, one rank, one line of the summary;
    a difference in its scores parts them again."""
    table = overall(make_scores())
    pair = table.loc[table["tool"].isin(["metricsreloaded", "monai"])]
    assert set(pair["tool"]) == {"metricsreloaded"} and set(pair["identical"]) == {"monai"}
    frame = verdict_text.verdicts_frame(pair.iloc[:1])
    assert frame["Tool"].iloc[0] == "Metrics Reloaded = MONAI"
    scores = make_scores()
    scores.loc[(scores["tool"] == "monai") & (scores["metric"] == "HD"), "value"] += 0.01
    parted = verdicts(scores).loc[("HD", "1x1x1")]
    assert {"metricsreloaded", "monai"} <= set(parted.index)
    assert parted.loc["metricsreloaded", "rank"] != parted.loc["monai", "rank"]


def in_voxels(scores: pd.DataFrame, tool: str = "voxels") -> pd.DataFrame:
    """A tool that reports the reference's distances divided by the first voxel side (what a
    tool computing in voxels gives on an isotropic grid)."""
    rows = scores.loc[(scores["tool"] == "reference") & scores["metric"].isin(["HD", "HD95"])]
    sides = rows["spacing"].map(lambda s: parse_spacing_label(s)[0])
    added = rows.assign(tool=tool, tool_version="1", value=rows["value"] / sides)
    return pd.concat([scores, added], ignore_index=True)


def test_a_tool_that_ignores_the_voxel_size_is_named_for_it():
    table = verdicts(in_voxels(make_scores()))
    reason = table.loc[("HD", "2x2x2", "voxels"), "reasons"]
    assert (
        "ignores the voxel size (measured: its HD is the reference's 1.00 × at (1, 1, 1) mm, "
        "0.50 × at (2, 2, 2) mm, distances in voxels)"
    ) in reason
    # On a grid where it was not measured, the measurement says where, and the grid its own.
    anisotropic = table.loc[("HD95", "0.5x0.5x2", "voxels"), "reasons"]
    assert "at (2, 2, 2) mm, distances in voxels; here 2.00 ×)" in anisotropic
    # Tools whose distances are not 1 / s of the reference's are not accused of it (at 1 mm
    # the voxel tool is exact, so it shares a row with MISeval, there exact too).
    others = table.loc[
        (table.index.get_level_values("tool") != "voxels") & (table["identical"] != "voxels")
    ]
    assert not others["reasons"].fillna("").str.contains("ignores the voxel size").any()
    # MISeval's adapter says so, and the recommendation carries it as a caution.
    assert "its HD ignores the voxel size" in table.loc[("HD", "2x2x2", "miseval"), "cautions"]


def test_a_factor_near_one_over_s_at_one_size_is_not_taken_for_voxels():
    """A tool in millimetres whose quantity is a fraction of the reference's (an average over
    all voxels, as pymia's and SimpleITK's MASD: 0.30 at 1 mm, 0.53 at 2 mm in the default
    study) is not accused of ignoring the voxel size because 0.53 happens to be near 1 / 2;
    with a single isotropic voxel size nothing is said."""
    scores = make_scores()
    rows = scores.loc[(scores["tool"] == "reference") & (scores["metric"] == "HD")]
    factor = rows["spacing"].map({"1x1x1": 0.30, "2x2x2": 0.53, "0.5x0.5x2": 0.27})
    fraction = rows.assign(tool="fraction", tool_version="1", value=rows["value"] * factor)
    table = verdicts(pd.concat([in_voxels(scores), fraction], ignore_index=True))
    assert not str(table.loc[("HD", "2x2x2", "fraction"), "reasons"]).count("voxel size")
    one_size = in_voxels(scores.loc[scores["spacing"] != "1x1x1"])
    assert "voxel size" not in " ".join(verdicts(one_size)["reasons"].astype(str))


def _grid_rows(tool: str, status: str, cropped: float, scan: float | None = None) -> list[dict]:
    """A tool's HD on one grid-check pair, on the cropped and the scan-sized grid."""
    values = {"cropped": cropped, "scan": cropped if scan is None else scan}
    return [
        {
            "tool": tool,
            "spacing": "2x2x2",
            "oar": "Glottis",
            "category": "midsize",
            "metric": "HD",
            "grid": grid,
            "value": value,
            "status": status,
        }
        for grid, value in values.items()
    ]


def test_scores_that_depend_on_the_field_of_view_are_a_reason_to_avoid():
    rows = _grid_rows("monai", "ok", 3.0, 4.5)
    table = verdicts(make_scores(), grid_checked=pd.DataFrame(rows))
    reason = table.loc[("HD", "2x2x2", "monai"), "reasons"]
    assert reason.startswith("depends on the field of view: changed on 1 of 1 grid-check pairs")
    assert table.loc[("HD", "2x2x2", "metricsreloaded"), "verdict"] == "use"  # its twin
    assert table.loc[("HD95", "2x2x2", "metricsreloaded"), "identical"] == "monai"
    # Identical scores, opposite verdicts: the reason that tells them apart is printed.
    apart = " (identical scores to Metrics Reloaded on this grid)"
    assert reason.endswith(apart)
    # The card says the same, of its own tool only.
    assert cards.field_of_view_text(pd.DataFrame(rows), "monai") == f"HD: {reason}".removesuffix(
        apart
    )


def test_errors_on_empty_masks_are_cautions():
    edge_cases = table_a3(edge_case_documents()).numeric
    edge_cases.loc[(edge_cases["tool"] == "monai") & (edge_cases["case"] == "O1"), "output"] = (
        "error"
    )
    table = verdicts(make_scores(), edge_cases=edge_cases)
    assert table.loc[("HD", "1x1x1", "metricsreloaded"), "cautions"] == (
        "MONAI only: raises an error on empty masks (O1)"
    )


def test_an_error_the_environment_causes_is_said_to_be_the_environments():
    """Google DeepMind raises on empty masks under NumPy 2 (np.Inf removed), not by design:
    the caution says so."""
    edge_cases = table_a3(edge_case_documents()).numeric
    deepmind = (edge_cases["tool"] == "deepmind") & edge_cases["case"].isin(["O1", "O2"])
    edge_cases.loc[deepmind, "output"] = "error"
    edge_cases.loc[deepmind, "message"] = (
        "AttributeError: `np.Inf` was removed in the NumPy 2.0 release. Use `np.inf` instead."
    )
    caution = verdicts(make_scores(), edge_cases=edge_cases).loc[("HD", "2x2x2", "deepmind")]
    assert caution["cautions"] == (
        "raises an error on empty masks (O1, O2) in this environment, not by design: NumPy 2 "
        "removed np.Inf, which the tool calls"
    )
    edge_cases.loc[deepmind, "message"] = "ValueError: empty mask"
    caution = verdicts(make_scores(), edge_cases=edge_cases).loc[("HD", "2x2x2", "deepmind")]
    assert caution["cautions"] == "raises an error on empty masks (O1, O2)"


def planted_spread(n: int = 101, category: str = "small") -> pd.DataFrame:
    """One voxel size, n pairs of one category: the reference 10 mm, the tool 10 + k / 10 mm
    for k = 0 … n − 1 (Δ = 0, 0.1, …, 10 when n = 101)."""
    rows = []
    for k in range(n):
        for tool, value in (("reference", 10.0), ("monai", 10.0 + k / 10)):
            rows.append(
                {
                    "dataset": "planted",
                    "case": "case_01",
                    "oar": f"oar_{k}",
                    "category": category,
                    "spacing": "1x1x1",
                    "tool": tool,
                    "tool_version": "1",
                    "environment": "study",
                    "metric": "HD95",
                    "value": value,
                    "status": "ok",
                    "message": "",
                    "seconds": 0.0,
                }
            )
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


def intervals(scores: pd.DataFrame):
    """The interval table of a scores table, read off its verdict table."""
    return cards.interval_table(rules.verdict_table(scores), scores)


def test_the_interval_holds_the_central_95_percent():
    table = intervals(planted_spread()).numeric.set_index("stratum")
    # Δ = 0.0, 0.1, ..., 10.0: the 2.5th and 97.5th percentiles are 0.25 and 9.75 mm.
    assert table.loc[rules.ALL, ["lo", "hi"]].tolist() == pytest.approx([0.25, 9.75])
    assert table.loc["small OARs", "n_finite"] == 101  # enough pairs for a category row
    few = intervals(planted_spread(advice.MIN_CATEGORY_PAIRS - 1)).numeric
    assert list(few["stratum"]) == [rules.ALL]
    display = intervals(planted_spread()).display.iloc[0]
    assert display["Reference given a published v"] == "[v -9.75, v -0.25]"
    assert display["Readers' median [IQR]"] == "10.0 [10.0, 10.0] mm"
    assert "Measured on this run's data only (101 mask pairs of planted" in " ".join(
        intervals(planted_spread()).notes
    )


def test_the_interval_matches_numpy_on_the_fixture():
    scores = make_scores()
    table = intervals(scores).numeric.set_index(["tool", "metric", "spacing", "stratum"])
    medpy = scores.loc[(scores["tool"] == "medpy") & (scores["metric"] == "HD")]
    reference = scores.loc[(scores["tool"] == "reference") & (scores["metric"] == "HD")]
    keys = ["case", "oar", "spacing"]
    merged = medpy.merge(reference, on=keys, suffixes=("", "_ref"))
    at = merged.loc[merged["spacing"] == "2x2x2"]
    expected = np.percentile(at["value"] - at["value_ref"], [2.5, 97.5])
    assert table.loc[("medpy", "HD", "2x2x2", rules.ALL), ["lo", "hi"]].tolist() == pytest.approx(
        expected
    )


def test_every_adapter_header_gives_its_card_a_description():
    for name, adapter in REGISTRY.items():
        notes = dict(cards.adapter_notes(name))
        header = " ".join((inspect.getmodule(type(adapter)).__doc__ or "").split())
        assert notes.get("Tool"), name
        assert len(notes) > 1, f"{name}: its header has no section beyond its first line"
        for text in notes.values():
            assert text in header, (name, text)
    medpy = dict(cards.adapter_notes("medpy"))
    assert medpy["Boundary"].startswith("binary erosion with a square-connectivity")
    assert medpy["Arguments"] == "`result` = b (prediction), `reference` = a."
    assert cards.adapter_notes("no-such-tool") == []


def later_inputs(monkeypatch) -> AnalysisInputs:
    register_later_tool(monkeypatch)
    edge_cases = table_a3(edge_case_documents(later=True)).numeric
    return AnalysisInputs(
        with_later_tool(make_scores()),
        pd.DataFrame(),
        make_settings(),
        make_timing(later=True),
        None,
        edge_cases,
    )


def test_a_later_tools_card_puts_its_facts_together(monkeypatch):
    inputs = later_inputs(monkeypatch)
    recommended = rules.verdict_table(inputs.scores, None, inputs.edge_cases)
    built = {card.title.split(" (")[0]: card for card in cards.build_cards(inputs, recommended)}
    assert "Reference" not in built and "Anima" in built
    assert built["Anima"].lines[0].startswith("Not available in this run: program")
    card = built["Later Tool"]
    text = "\n".join(card.lines)
    assert card.title == "Later Tool (`latertool`, since the paper)"
    assert "**Version** latertool-2.0 (environment: study)." in text
    assert "**Tool**: The registry entry of `LATER_TOOL`" in text  # its class's docstring
    assert "**Declared by its adapter**: offers HD, HD95, DSC." in text
    assert "HD O1 ∞, O2 ∞, O3 NaN, S ✓; the reference: no edge-case record" in text
    assert f"**Failed scores**: HD95 24 of 72 ({LATER_ERROR})." in text
    assert "**HD time**: median 20" in text
    # A tool that fails on every pair of a grid is not measured there, never "avoid".
    assert (
        f"**Not measured** for HD95 at (0.5, 0.5, 2) mm: fails on every pair: {LATER_ERROR}."
    ) in text
    assert "Avoid** for HD95" not in text
    # Identical to Google DeepMind on every HD pair: their shared row.
    assert "HD at (2, 2, 2) mm (with Google DeepMind = Later Tool): 100% of 24 pairs" in text
    assert "HD95 at (2, 2, 2) mm: 100% of 24 pairs within ±0.5 mm; worst -0.25 mm" in text
    caption, frame = card.tables[0]
    hd95 = frame.loc[frame["Metric"] == "HD95"].set_index("Voxel size")
    assert hd95.loc["(1, 1, 1) mm", "Median Δ"] == "-0.25"
    assert hd95.loc["(1, 1, 1) mm", "Within"] == "100% (±0.5 mm)"
    assert hd95.loc["(0.5, 0.5, 2) mm", "Failed / not finite"] == "24 / 0"
    assert hd95.loc["(0.5, 0.5, 2) mm", "Verdict"] == "not measured"
    assert list(frame["Metric"].unique()) == ["HD", "HD95"]  # DSC gets no verdict


def test_the_cards_command_writes_every_output(tmp_path, capsys):
    paths = write_results(tmp_path)
    out = tmp_path / "out"
    arguments = ["cards", "--scores", str(paths["scores"]), "--out", str(out)]
    arguments += ["--edge-cases", *map(str, paths["edge_cases"])]
    assert main([*arguments, "--timing", *map(str, paths["timing"])]) == 0
    assert "cards of 5 tools" in capsys.readouterr().out
    cards_md = (out / "cards.md").read_text()
    assert cards_md.startswith("# Tool cards") and "## MedPy (`medpy`, in the paper)" in cards_md
    assert "**use**: at least 90% of those pairs within the tolerance" in cards_md
    assert (out / "recommendations.md").read_text().startswith("# Recommendations")
    csv = pd.read_csv(out / "recommendations.csv")
    assert list(csv.columns) == list(rules.VERDICT_COLUMNS)
    assert (out / "intervals.md").read_text().startswith("## How far off is a published number")
    # The report's opening page: metric × voxel size, each verdict worded and coloured.
    glance = (out / "verdicts.html").read_text()
    assert "<th>(1, 1, 1) mm</th><th>(2, 2, 2) mm</th><th>(0.5, 0.5, 2) mm</th>" in glance
    assert ">USE</span>" in glance
    for name in ("cards.html", "recommendations.html", "intervals.html", "intervals.tex"):
        assert (out / name).stat().st_size > 0, name


def test_the_cards_command_names_a_missing_scores_table(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["cards", "--scores", str(tmp_path / "nope.parquet"), "--out", str(tmp_path)])
    assert stopped.value.code == 2
    assert "nope.parquet: scores table not found" in capsys.readouterr().err


def test_a_tool_that_failed_on_both_grids_is_not_called_the_same():
    """Errors (or inf) alike on both grids compare nothing: the card and the findings say so
    instead of 'the same on cropped and scan-sized grids'."""
    rows = pd.DataFrame(
        _grid_rows("torchmetrics", "error", np.nan)
        + _grid_rows("monai", "ok", 3.0)
        + _grid_rows("deepmind", "ok", np.inf)
    )
    assert cards.field_of_view_text(rows, "monai").startswith("the same on cropped")
    for tool in ("torchmetrics", "deepmind"):
        assert cards.field_of_view_text(rows, tool).startswith("not compared"), tool
    text = " ".join(findings.grid_section(rows).lines)
    assert "every pair and metric: MONAI;" in text
    assert "Not compared (no score finite on both grids" in text and "torchmetrics" in text
