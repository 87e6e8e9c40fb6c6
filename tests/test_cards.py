"""Tool cards, recommendations and the interval table follow the data they are computed from."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import (
    LATER_ERROR,
    edge_case_documents,
    make_config,
    make_scores,
    make_timing,
    register_later_tool,
    with_later_tool,
    write_results,
)

from adapters import REGISTRY
from study.__main__ import main
from study.analysis import advice, cards, findings
from study.analysis.tables import table_a3
from study.records import SCORE_COLUMNS, parse_spacing_label


def verdicts(scores: pd.DataFrame, **kwargs) -> pd.DataFrame:
    table = advice.recommendations(scores, **kwargs)
    return table.set_index(["metric", "grid_kind", "tool"]).sort_index()


def test_the_planted_tools_are_ranked_and_the_biased_one_avoided():
    table = verdicts(make_scores())
    hd95 = table.loc[("HD95", "isotropic")]
    used = hd95.loc[hd95["verdict"] == "use"].sort_values("rank")
    # Ranked by |worst Δ|: 0, then the planted +0.5 mm (a tie, kept in tool order).
    assert list(used.index) == ["deepmind", "metricsreloaded", "monai"]
    assert list(used["rank"]) == [1, 2, 3] and used["worst"].tolist() == pytest.approx(
        [0, 0.5, 0.5]
    )
    medpy = hd95.loc["medpy"]
    assert medpy["verdict"] == "avoid" and medpy["rank"] == 0
    assert "over-estimates: 0% of 48 pairs within ±0.5 mm, median Δ +1.99" in medpy["reasons"]
    assert "2 of 48 Δ not finite" in medpy["reasons"]  # the planted inf and NaN
    miseval = table.loc[("HD", "isotropic", "miseval")]
    assert "fails on 2 of 48 pairs (boom)" in miseval["reasons"]


def test_an_injected_bias_drops_a_tool_out_of_the_recommended_set():
    scores = make_scores()
    before = verdicts(scores).loc[("HD95", "anisotropic", "deepmind")]
    assert before["verdict"] == "use"
    biased = (scores["tool"] == "deepmind") & (scores["metric"] == "HD95")
    scores.loc[biased, "value"] -= 0.8
    after = verdicts(scores).loc[("HD95", "anisotropic")]
    assert after.loc["deepmind", "verdict"] == "avoid"
    assert (
        "under-estimates: 0% of 24 pairs within ±0.5 mm, median Δ −0.80".replace("−", "-")
        in after.loc["deepmind", "reasons"]
    )
    assert after.loc["monai", "rank"] == 2  # the others move up
    # A bias on few enough pairs keeps it: 4 of the 48 isotropic pairs leave 91.7 % within.
    scores = make_scores()
    rows = scores.index[biased & scores["spacing"].isin(["1x1x1", "2x2x2"])]
    scores.loc[rows[:4], "value"] += 3.0
    assert verdicts(scores).loc[("HD95", "isotropic", "deepmind"), "verdict"] == "use"
    scores.loc[rows[4:5], "value"] += 3.0  # 5 of 48: 89.6 % < MOST_PAIRS
    assert verdicts(scores).loc[("HD95", "isotropic", "deepmind"), "verdict"] == "avoid"


def in_voxels(scores: pd.DataFrame, tool: str = "voxels") -> pd.DataFrame:
    """A tool that reports the reference's distances divided by the first voxel side (what a
    tool computing in voxels gives on an isotropic grid)."""
    rows = scores.loc[(scores["tool"] == "reference") & scores["metric"].isin(["HD", "HD95"])]
    sides = rows["spacing"].map(lambda s: parse_spacing_label(s)[0])
    added = rows.assign(tool=tool, tool_version="1", value=rows["value"] / sides)
    return pd.concat([scores, added], ignore_index=True)


def test_a_tool_that_ignores_the_voxel_size_is_named_for_it():
    table = verdicts(in_voxels(make_scores()))
    reason = table.loc[("HD", "isotropic", "voxels"), "reasons"]
    assert "ignores the voxel size: its HD is the reference's 1.00 × at (1, 1, 1) mm" in reason
    assert "0.50 × at (2, 2, 2) mm" in reason
    assert "ignores the voxel size" in table.loc[("HD95", "anisotropic", "voxels"), "reasons"]
    # Tools whose distances are not 1 / s of the reference's are not accused of it.
    others = table.drop(index="voxels", level="tool")
    assert not others["reasons"].str.contains("ignores the voxel size").any()
    # MISeval's adapter says so, and the recommendation carries it as a caution.
    assert "its HD ignores the voxel size" in table.loc[("HD", "isotropic", "miseval"), "cautions"]


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
    assert not table.loc[("HD", "isotropic", "fraction"), "reasons"].count("voxel size")
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
    reason = table.loc[("HD", "isotropic", "monai"), "reasons"]
    assert reason.startswith("depends on the field of view: changed on 1 of 1 grid-check pairs")
    assert table.loc[("HD95", "isotropic", "monai"), "verdict"] == "use"
    # The card says the same, of its own tool only.
    assert cards.field_of_view_text(pd.DataFrame(rows), "monai") == f"HD: {reason}"


def test_errors_on_empty_masks_are_cautions():
    edge_cases = table_a3(edge_case_documents()).numeric
    edge_cases.loc[(edge_cases["tool"] == "monai") & (edge_cases["case"] == "O1"), "output"] = (
        "error"
    )
    table = verdicts(make_scores(), edge_cases=edge_cases)
    assert table.loc[("HD", "isotropic", "monai"), "cautions"] == (
        "raises an error on empty masks (O1)"
    )


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


def test_the_interval_holds_the_central_95_percent():
    table = advice.intervals(planted_spread()).set_index("category")
    # Δ = 0.0, 0.1, ..., 10.0: the 2.5th and 97.5th percentiles are 0.25 and 9.75 mm.
    assert table.loc["all", ["lo", "hi"]].tolist() == pytest.approx([0.25, 9.75])
    assert table.loc["small", "n_finite"] == 101  # enough pairs for a category row
    few = advice.intervals(planted_spread(advice.MIN_CATEGORY_PAIRS - 1))
    assert list(few["category"]) == ["all"]
    display = cards.interval_table(planted_spread()).display.iloc[0]
    assert display["Reference given a published v"] == "[v -9.75, v -0.25]"
    assert "Measured on this run's data only (101 mask pairs of planted" in " ".join(
        cards.interval_table(planted_spread()).notes
    )


def test_the_interval_matches_numpy_on_the_fixture():
    scores = make_scores()
    table = advice.intervals(scores).set_index(["tool", "metric", "spacing", "category"])
    medpy = scores.loc[(scores["tool"] == "medpy") & (scores["metric"] == "HD")]
    reference = scores.loc[(scores["tool"] == "reference") & (scores["metric"] == "HD")]
    keys = ["case", "oar", "spacing"]
    merged = medpy.merge(reference, on=keys, suffixes=("", "_ref"))
    at = merged.loc[merged["spacing"] == "2x2x2"]
    expected = np.percentile(at["value"] - at["value_ref"], [2.5, 97.5])
    assert table.loc[("medpy", "HD", "2x2x2", "all"), ["lo", "hi"]].tolist() == pytest.approx(
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


def later_inputs(monkeypatch) -> findings.AnalysisInputs:
    register_later_tool(monkeypatch)
    edge_cases = table_a3(edge_case_documents(later=True)).numeric
    return findings.AnalysisInputs(
        with_later_tool(make_scores()),
        pd.DataFrame(),
        make_config(),
        make_timing(later=True),
        None,
        edge_cases,
    )


def test_a_later_tools_card_puts_its_facts_together(monkeypatch):
    inputs = later_inputs(monkeypatch)
    recommended = advice.recommendations(inputs.scores, None, inputs.edge_cases)
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
    assert (
        "**Avoid** for HD95 on anisotropic grids: no finite Δ on 24 pairs; fails on 24 of 24 "
        f"pairs ({LATER_ERROR})."
    ) in text
    # Tied with Google DeepMind at Δ = 0 on every HD pair, after it in tool order.
    assert "**Use** for HD on isotropic grids (rank 2, worst +0.00 mm)" in text
    assert "HD95 on isotropic grids (rank 2, worst -0.25 mm)" in text
    caption, frame = card.tables[0]
    hd95 = frame.loc[frame["Metric"] == "HD95"].set_index("Voxel size")
    assert hd95.loc["(1, 1, 1) mm", "Median Δ"] == "-0.25"
    assert hd95.loc["(1, 1, 1) mm", "Within"] == "100% (±0.5 mm)"
    assert hd95.loc["(0.5, 0.5, 2) mm", "Failed / not finite"] == "24 / 0"
    assert list(frame["Metric"].unique()) == ["HD", "HD95", "DSC"]


def test_the_cards_command_writes_every_output(tmp_path, capsys):
    paths = write_results(tmp_path)
    out = tmp_path / "out"
    arguments = ["cards", "--scores", str(paths["scores"]), "--out", str(out)]
    arguments += ["--edge-cases", *map(str, paths["edge_cases"])]
    assert main([*arguments, "--timing", *map(str, paths["timing"])]) == 0
    assert "cards of 5 tools" in capsys.readouterr().out
    cards_md = (out / "cards.md").read_text()
    assert cards_md.startswith("# Tool cards") and "## MedPy (`medpy`, in the paper)" in cards_md
    assert "at least 90% of the pairs have |Δ| within ±0.5 mm" in cards_md
    assert (out / "recommendations.md").read_text().startswith("# Recommendations")
    csv = pd.read_csv(out / "recommendations.csv")
    assert list(csv.columns) == list(advice.RECOMMENDATION_COLUMNS)
    assert (out / "intervals.md").read_text().startswith("## How far off is a published number")
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
