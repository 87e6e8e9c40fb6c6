"""The study in 2D as a user runs it: the 2D test preset (the synthetic 2D shapes at two pixel
sizes, every tool) to its end, with the command its header gives, in a scratch directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from analysis_fixtures import assert_the_yardstick_certified

from adapters import REGISTRY, STUDY_TOOLS
from study.analysis.verdicts import ALL
from study.dataset.shapes2d import SHAPES
from study.records import REFERENCE
from study.scoring.score import NOT_OFFERED_2D

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("compiled_kernels")]

REPO = Path(__file__).resolve().parents[1]
PRESET = REPO / "workflow/presets/test-2d.yaml"


@pytest.fixture(scope="module")
def run_2d(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("study2d")
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
    command += ["--directory", str(workdir), "--configfile", str(PRESET), "--cores", "2"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir


def test_the_preset_runs_as_its_header_says():
    header = PRESET.read_text().splitlines()
    assert any("--configfile workflow/presets/test-2d.yaml" in line for line in header)
    assert yaml.safe_load(PRESET.read_text())["dataset"]["dimension"] == 2


def test_every_shape_is_scored_on_both_2d_grids_by_every_tool_and_the_reference(run_2d):
    scores = pd.read_parquet(run_2d / "results/scores.parquet")
    installed = scores[scores["status"] != "unavailable"]  # a tool not installed has one row
    assert set(installed["spacing"]) == {"1x1", "0.5x2"}
    assert set(installed["oar"]) == set(SHAPES)
    assert set(STUDY_TOOLS) | {REFERENCE} <= set(scores["tool"])
    reference = scores[scores["tool"] == REFERENCE]
    assert len(reference) == len(SHAPES) * 2 * 6 and (reference["status"] == "ok").all()


def test_the_yardstick_is_certified_each_finite_value_in_its_bracket(run_2d):
    assert_the_yardstick_certified(pd.read_parquet(run_2d / "results/scores.parquet"))


def test_a_metric_a_tool_does_not_offer_in_2d_is_an_error_row_that_says_so(run_2d):
    scores = pd.read_parquet(run_2d / "results/scores.parquet")
    scored = yaml.safe_load(PRESET.read_text())["metrics"]["scored"]
    for name, tool in REGISTRY.items():
        declined = [metric for metric in tool.not_offered_2d if metric in scored]
        rows = scores[(scores["tool"] == name) & scores["metric"].isin(declined)]
        assert len(rows) == len(SHAPES) * 2 * len(declined), name
        assert (rows["status"] == "error").all(), name
        assert rows["message"].str.startswith(NOT_OFFERED_2D).all(), name
        offered = scores[(scores["tool"] == name) & scores["metric"].isin(tool.metrics_2d)]
        assert not offered["message"].str.startswith(NOT_OFFERED_2D).any(), name


def test_torchmetrics_hd_is_measured_where_it_works_and_its_fault_recorded_where_not(run_2d):
    scores = pd.read_parquet(run_2d / "results/scores.parquet")
    hd = scores[(scores["tool"] == "torchmetrics") & (scores["metric"] == "HD")]
    assert (hd["status"] == "ok").any()
    failed = hd[hd["status"] == "error"]
    assert len(failed) and failed["message"].str.contains("IndexError").all()


def test_the_verdicts_and_table_a1_are_per_2d_grid(run_2d):
    verdicts = pd.read_csv(run_2d / "results/tables/recommendations.csv")
    assert set(verdicts["spacing"]) == {"1x1", "0.5x2"}
    verdicts = verdicts.loc[verdicts["stratum"] == ALL]  # a shape alone is too few pairs
    # segauge shares its row with mikan-rs, which offers nothing in 2D either (no scores).
    named = verdicts["tool"].eq("segauge") | verdicts["identical"].fillna("").str.contains(
        "segauge"
    )
    segauge = verdicts[named & verdicts["metric"].eq("HD95")]
    assert set(segauge["verdict"]) == {"not measured"}
    assert segauge["reason"].str.contains(NOT_OFFERED_2D).all()
    table_a1 = (run_2d / "results/tables/table_a1.md").read_text()
    assert "(1, 1) mm" in table_a1 and "(0.5, 2) mm" in table_a1
    assert (run_2d / "results/figures/figure_4.png").stat().st_size > 10_000


def test_the_shape_table_shows_torchmetrics_right_on_square_images_only(run_2d):
    from test_benchmarks import run_script

    printed = run_script(
        "by_image_shape_2d.py", "--results", str(run_2d / "results"), "--dataset", "test-2d"
    )
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|")[:2]): line
        for line in printed.splitlines()
        if line.startswith("| torchmetrics") or line.startswith("| deepmind")
    }
    cells = {key: [c.strip() for c in line.strip("|").split("|")] for key, line in rows.items()}
    higher = cells["torchmetrics", "higher than wide"]
    assert higher[2] != "0" and higher[4] == higher[2] and higher[5] == "IndexError"
    wider = cells["torchmetrics", "wider than high"]
    assert float(wider[6]) > 1.0  # silently wrong, by millimetres
    assert all(cells["deepmind", shape][4] == "0" for shape in ("square", "wider than high"))
