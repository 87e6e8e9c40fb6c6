"""End to end: the analysis rules and the report on a planted results folder, then the notebook
that regenerates the figures from the same folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml
from analysis_fixtures import make_config, write_results
from nbclient import NotebookClient

from study.analysis.settings import AnalysisSettings
from study.analysis.significance import bonferroni_factor_of
from study.pipeline.config import load_config

REPO = Path(__file__).resolve().parents[1]

MINI_SNAKEFILE = """configfile: "config.yaml"

import glob


class PlantedRecords:
    # Stands in for the scoring plan: the planted records already exist.
    def edge_case_files(self, environment="study"):
        # Only today's environment is planted; the paper's rules exist but are not asked for.
        return sorted(glob.glob("results/edge_cases/*.json")) if environment == "study" else []

    def timing_files(self):
        return sorted(glob.glob("results/timing/*.parquet"))

    def grid_check_files(self):
        return sorted(glob.glob("results/grid_check/*.parquet"))


SCORING = PlantedRecords()
# Stand in for common.smk's: the planted run deploys no software.
STUDY_ENV = None
from study.pipeline.layout import Layout

LAYOUT = Layout(config)


# Stand in for the dataset and scoring stages: the planted files already exist.
rule dataset_manifest:
    output:
        LAYOUT.dataset_manifest(),


rule collect_scores:
    output:
        LAYOUT.SCORES_TABLE,


rule voxelize_case:
    output:
        LAYOUT.voxelize_targets(),


include: "{rules}"


rule all:
    default_target: True
    input:
        ANALYSIS.targets(),
"""


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory) -> Path:
    """A planted results folder on which the analysis rules and the report have run."""
    root = tmp_path_factory.mktemp("study")
    write_results(root)
    config = make_config()
    config["reference"] = {
        "meshings": ["discrete_marching_cubes", "marching_cubes", "surface_nets"]
    }
    # Completed as the workflow completes it (the planted Snakefile does not load the schema).
    (root / "config.yaml").write_text(yaml.safe_dump(load_config(config)))
    (root / "Snakefile").write_text(
        MINI_SNAKEFILE.format(rules=REPO / "workflow" / "rules" / "analysis.smk")
    )
    for args in (["--cores", "2"], ["--report", "results/report.html"]):
        run = subprocess.run(
            [sys.executable, "-m", "snakemake", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stderr[-3000:]
    return root


def test_every_analysis_output_is_made(study_dir):
    for stem in ("table_a1", "table_a2", "table_a3", "table_a4", "table_wilcoxon"):
        for ext in ("csv", "md", "tex", "html"):
            assert (study_dir / "results" / "tables" / f"{stem}.{ext}").stat().st_size > 0
    for stem in ("figure_4", "figure_a3", "figure_a4", "figure_a5"):
        for ext in ("png", "pdf"):
            assert (study_dir / "results" / "figures" / f"{stem}.{ext}").stat().st_size > 0
    assert "## Compared with the paper" in (study_dir / "results" / "findings.md").read_text()


def test_table_a1_file_against_recomputation(study_dir):
    scores = pd.read_parquet(study_dir / "results" / "scores.parquet")
    table = pd.read_csv(study_dir / "results" / "tables" / "table_a1.csv", dtype={"spacing": str})
    row = table.set_index(["metric", "spacing", "tool"]).loc[("NSD", "0.5x0.5x2", "monai")]
    pick = (scores["metric"] == "NSD") & (scores["spacing"] == "0.5x0.5x2")
    wide = scores.loc[pick].pivot_table(index=["case", "oar"], columns="tool", values="value")
    assert row["mean"] == pytest.approx(100 * (wide["monai"] - wide["reference"]).mean())


def test_wilcoxon_file_uses_the_configured_factor(study_dir):
    table = pd.read_csv(study_dir / "results" / "tables" / "table_wilcoxon.csv")
    settings = AnalysisSettings.from_config(load_config(make_config()))
    assert set(table["factor"]) == {bonferroni_factor_of(settings)} == {378}


def test_report_holds_every_item_with_captions(study_dir):
    page = (study_dir / "results" / "report.html").read_text()
    for name in (
        "table_a1.html",
        "table_a3.html",
        "table_wilcoxon.html",
        "figure_4.png",
        "figure_a4.png",
        "figure_a5.png",
        "findings.html",
    ):
        assert name in page
    assert "Bonferroni factor\\n<strong>378</strong>" in page
    assert "Dataset <strong>synthetic</strong>" in page


def test_notebook_regenerates_the_figures(study_dir, monkeypatch):
    output = study_dir / "notebook_figures"
    monkeypatch.setenv("SEGMETRICS_RESULTS", str(study_dir / "results"))
    monkeypatch.setenv("SEGMETRICS_CONFIG", str(study_dir / "config.yaml"))
    monkeypatch.setenv("SEGMETRICS_FIGURES", str(output))
    notebook = nbformat.read(REPO / "notebooks" / "figures.ipynb", as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    ).execute()
    for stem in ("figure_4", "figure_a3", "figure_a4", "figure_a5"):
        assert (output / f"{stem}.png").stat().st_size > 10_000
    printed = "".join(
        o.get("text", "")
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    )
    assert "Bonferroni factor: 378" in printed
