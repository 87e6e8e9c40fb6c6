"""The whole study as a user runs it: the test preset end to end, in a scratch directory.

One run of the test preset is shared by the module; the checks then look at what it wrote,
rerun it (determinism, resume), and break it on purpose (a hanging and a crashing tool, bad
configs).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from analysis_fixtures import assert_the_yardstick_certified

from study.pipeline.config import load_config
from study.pipeline.layout import Layout
from study.records import BRACKET_COLUMNS, SCORE_COLUMNS, spacing_label
from study.scoring.score import collect

# The workflow runs in the repository: its reference jobs start with compiled kernels.
pytestmark = pytest.mark.usefixtures("compiled_kernels")


REPO = Path(__file__).resolve().parents[1]
TEST_PRESET = REPO / "workflow/presets/test.yaml"


def snakemake(
    workdir: Path, *args: str, configfile: Path = TEST_PRESET, check: bool = True
) -> subprocess.CompletedProcess:
    """Run Snakemake on the project's Snakefile with `workdir` as working directory."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
        "--cores",
        "2",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{done.stderr[-4000:]}")
    return done


def preset(**overrides) -> dict:
    """The test preset with some top-level keys replaced."""
    config = yaml.safe_load(TEST_PRESET.read_text())
    config.update(overrides)
    return config


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


def scored(workdir: Path, *tools: str, configfile: Path) -> pd.DataFrame:
    """Score `tools` on the test preset's case and nothing else (results/scores.parquet
    waits for every record it is checked against: edge cases, timing, the grid check)."""
    files = [Layout.SCORES.format(dataset="test", tool=tool, batch="case_01") for tool in tools]
    snakemake(workdir, *files, configfile=configfile)
    return collect(workdir / file for file in files)


def comparable(scores: pd.DataFrame) -> pd.DataFrame:
    """Scores without what legitimately changes between runs (timings, warning texts)."""
    keys = ["tool", "spacing", "case", "oar", "metric"]
    return scores.drop(columns=["seconds", "message"]).sort_values(keys, ignore_index=True)


@pytest.fixture(scope="module")
def study_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("study")
    snakemake(workdir)
    return workdir


def test_scores_table_has_every_tool_pair_and_metric(study_run):
    scores = pd.read_parquet(study_run / "results/scores.parquet")
    assert list(scores.columns) == [*SCORE_COLUMNS, *BRACKET_COLUMNS]
    assert_the_yardstick_certified(scores)  # reference.brackets, by default
    config = load_config(TEST_PRESET)
    from adapters import REGISTRY
    from study.scoring.score import implementation

    ran = scores[scores.status != "unavailable"]
    pairs = ran[ran.tool == "reference"].drop_duplicates(["case", "oar", "spacing"])
    assert len(pairs) == len(ran.drop_duplicates(["case", "oar", "spacing"]))
    for tool in config["tools"]:
        rows = scores[scores.tool == tool]
        reason = implementation(tool).unavailable()
        if reason is None:
            asked = [m for m in REGISTRY[tool].metrics if m in config["metrics"]["scored"]]
            assert len(rows) == len(pairs) * len(asked), tool
            # A metric the tool cannot compute on 3D masks: error rows in its own words.
            failing = rows.metric.isin(list(REGISTRY[tool].fails_on_3d))
            for metric, words in REGISTRY[tool].fails_on_3d.items():
                assert rows[rows.metric == metric].message.str.contains(words, regex=False).all()
            if not failing.all():
                ok = rows[~failing].status == "ok"
                assert ok.mean() > 0.5, (tool, rows.status.value_counts())
        else:  # once per run, with the reason, not once per pair
            assert len(rows) == 1 and rows.iloc[0].status == "unavailable", tool
            assert rows.iloc[0].message == reason


def test_reference_variants_edge_cases_and_timing_are_written(study_run):
    scores = pd.read_parquet(study_run / "results/scores.parquet")
    assert {"reference", "reference-marching-cubes", "reference-surface-nets"} <= set(scores.tool)
    config = load_config(TEST_PRESET)
    for tool in ["reference", *config["tools"]]:
        assert (study_run / f"results/edge_cases/{tool}.json").is_file(), tool
    timing = pd.read_parquet(study_run / "results/timing/reference.parquet")
    assert (timing.seconds > 0).all() and timing.repeat.nunique() == config["timing"]["repeats"]
    # Scan-sized by default: one grid for the case, field_of_view.scan_mm at the timed voxel
    # size (to a voxel per axis).
    assert set(timing.grid) == {"scan"} and timing["shape"].nunique() == 1
    shape = map(int, timing["shape"].iloc[0].split("x"))
    scan = zip(config["field_of_view"]["scan_mm"], config["timing"]["voxel_size"], strict=True)
    assert all(abs(n - mm / step) <= 1 for n, (mm, step) in zip(shape, scan, strict=True))


def test_grid_check_covers_every_tool_and_reaches_the_findings(study_run):
    from study.scoring.grid_check import grid_differences, read_grid_check

    config = load_config(TEST_PRESET)
    files = sorted((study_run / "results/grid_check").glob("*.parquet"))
    checked = read_grid_check(files)
    differences = grid_differences(checked)
    reference = differences[differences.tool == "reference"]
    assert len(reference) and not reference.changed.any()  # the reference is invariant
    assert set(differences.spacing) == {
        spacing_label(size) for size in config["grid_check"]["voxel_sizes"]
    }
    findings = (study_run / "results/findings.md").read_text()
    assert "## Scores on cropped and scan-sized grids" in findings


RECORDED_SCORES = REPO / "tests/data/test_preset_scores.csv"
"""The test preset's scores (status ok) as a run wrote them; `RECORD_SCORES=1 pytest
tests/test_workflow_study.py -k recorded` rewrites the rows of the tools that ran when a change
is meant to move them (say so in the commit), and keeps the rows of tools not installed here."""


def test_scores_equal_the_recorded_ones(study_run):
    """A change to the code's structure leaves the study's results as they were: every score
    of every implementation that ran both here and in the recording, within 1e-6."""
    keys = ["tool", "spacing", "case", "oar", "metric"]
    scores = pd.read_parquet(study_run / "results/scores.parquet")
    from adapters import REGISTRY

    varying = [
        REGISTRY[tool].varying_metrics if tool in REGISTRY else frozenset() for tool in scores.tool
    ]
    repeatable = np.array(
        [metric not in metrics for metric, metrics in zip(scores.metric, varying, strict=True)]
    )
    now = scores.loc[(scores.status == "ok") & repeatable, [*keys, "value"]].astype(
        {"spacing": str}
    )
    if os.environ.get("RECORD_SCORES"):
        recorded = pd.read_csv(RECORDED_SCORES, dtype={"spacing": str})
        kept = recorded[~recorded.tool.isin(set(now.tool))]
        pd.concat([now, kept]).sort_values(keys).to_csv(RECORDED_SCORES, index=False)
    recorded = pd.read_csv(RECORDED_SCORES, dtype={"spacing": str})
    # Tools that are not installed here (make tools) are compared where they are.
    both = sorted(set(now.tool) & set(recorded.tool))
    assert {"reference", "deepmind", "monai", "simpleitk"} <= set(both)
    now, recorded = (
        frame[frame.tool.isin(both)].sort_values(keys, ignore_index=True)
        for frame in (now, recorded)
    )
    pd.testing.assert_frame_equal(now[keys], recorded[keys])
    differs = ~np.isclose(now["value"], recorded["value"], rtol=0, atol=1e-6)
    assert not differs.any(), now[differs].assign(recorded=recorded["value"][differs])


def test_job_logs_show_progress(study_run):
    logs = list((study_run / "results/logs/score_case").rglob("*.log"))
    assert logs and all("pairs scored" in log.read_text() for log in logs)


def test_a_rerun_with_the_same_seed_gives_identical_scores(study_run, tmp_path):
    # The data, the voxelization and the reference are ours; two tools stand for the rest.
    config = preset(tools=["deepmind", "simpleitk"])
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    tools = ("reference", "deepmind", "simpleitk")
    again = scored(tmp_path, *tools, configfile=write_config(tmp_path / "again.yaml", config))
    first = pd.read_parquet(study_run / "results/scores.parquet")
    first = first[first.tool.isin(["reference", "deepmind", "simpleitk"])]
    assert len(again) == len(first) > 0
    pd.testing.assert_frame_equal(comparable(first), comparable(again))


def test_an_interrupted_run_resumes_without_rescoring(study_run, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(study_run, copy, symlinks=True)
    nothing = snakemake(copy, "--dry-run")
    assert "Nothing to be done" in nothing.stdout + nothing.stderr
    # Interrupted while scoring: one job's file never written, nothing collected yet.
    (copy / "results/scores/test/reference/case_01.parquet").unlink()
    (copy / "results/scores.parquet").unlink()
    done = snakemake(copy, "--dry-run", "--quiet", "rules")
    plan = done.stdout + done.stderr
    planned = dict(re.findall(r"^(\w+)\s+(\d+)$", plan, re.M))
    assert planned.get("score_case") == "1", plan  # only the lost file is scored again
    assert "synthesize_case" not in planned and "voxelize_case" not in planned, plan


def test_failing_tools_become_error_rows_and_the_study_completes(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hanging, crashing = bin_dir / "hang", bin_dir / "crash"
    hanging.write_text('#!/bin/sh\ncase "$1" in --version) echo "version 0";; *) sleep 60;; esac\n')
    crashing.write_text(
        '#!/bin/sh\ncase "$1" in --version) echo "version 0";; '
        '*) echo "segfault on purpose" >&2; exit 139;; esac\n'
    )
    for script in (hanging, crashing):
        script.chmod(0o755)
    config = preset(
        tools=["plastimatch", "anima"],
        tool_paths={"plastimatch": str(hanging), "anima": str(crashing)},
        timeouts={"tool_seconds": 5},  # the reference: over 1 s a pair under load
        voxel_sizes=[[2, 2, 2]],  # two pairs: each call of the hanging tool waits 5 s
    )
    config["dataset"]["oars"] = ["Cochlea_L", "Parotid_L"]
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    configfile = write_config(tmp_path / "faulty.yaml", config)
    scores = scored(tmp_path, "plastimatch", "anima", "reference", configfile=configfile)
    for tool, words in (("plastimatch", "timed out"), ("anima", "segfault on purpose")):
        rows = scores[scores.tool == tool]
        assert len(rows) > 0 and set(rows.status) == {"error"}, tool
        assert rows.message.str.contains(words).all(), tool
    assert (scores[scores.tool == "reference"].status != "error").all()


@pytest.mark.parametrize(
    "change, words",
    [
        ({"tools": ["deepmind", "nosuchtool"]}, "nosuchtool"),
        ({"voxel_sizes": [[1, 1, 0]]}, "voxel_sizes"),
        ({"metrics": {"percentile": 95, "tau_mm": -2}}, "tau_mm"),
    ],
)
def test_a_bad_config_fails_at_start_up_naming_the_key(tmp_path, change, words):
    configfile = write_config(tmp_path / "bad.yaml", preset(**change))
    done = snakemake(tmp_path, "--dry-run", configfile=configfile, check=False)
    assert done.returncode != 0 and words in done.stderr + done.stdout


def test_the_slurm_profile_plans_every_job_with_resources(tmp_path):
    done = snakemake(tmp_path, "--dry-run", "--profile", str(REPO / "profiles/slurm"))
    said = done.stdout + done.stderr
    assert "score_case" in said and "Job stats:" in said


def test_report_tables_and_notebook_from_the_test_preset(study_run, monkeypatch):
    """The paper's outputs from the test preset, checked against plain recomputation."""
    import nbformat
    from nbclient import NotebookClient

    snakemake(study_run, "--report", "results/report.html")  # as make run does, with --cores
    page = (study_run / "results/report.html").read_text()
    for name in (
        "table_a1.html",
        "table_a3.html",
        "table_wilcoxon.html",
        "table_observers.html",
        "figure_4.png",
        "figure_a5.png",
        "findings.html",
        "cards.html",
        "recommendations.html",
        "intervals.html",
    ):
        assert name in page, name
    # The data report: the reference's median HD per category, recomputed.
    observers = pd.read_csv(study_run / "results/tables/table_observers.csv")
    scores_all = pd.read_parquet(study_run / "results/scores.parquet")
    reference_hd = scores_all[(scores_all.tool == "reference") & (scores_all.metric == "HD")]
    for category, values in reference_hd.groupby("category")["value"]:
        row = observers[(observers.category == category) & (observers.metric == "HD")].iloc[0]
        assert row["median"] == pytest.approx(values.median()) and row["n"] == len(values)

    scores = pd.read_parquet(study_run / "results/scores.parquet")
    wide = scores[(scores.metric == "HD") & (scores.spacing == "2x2x2")].pivot_table(
        index=["case", "oar"], columns="tool", values="value"
    )
    table = pd.read_csv(study_run / "results/tables/table_a1.csv", dtype={"spacing": str})
    cell = table.set_index(["metric", "spacing", "tool"]).loc[("HD", "2x2x2", "simpleitk")]
    assert cell["mean"] == pytest.approx((wide["simpleitk"] - wide["reference"]).mean())

    config = load_config(TEST_PRESET)
    compared = ["HD", "HD95", "MASD", "ASSD", "NSD", "BIoU"]
    implementations = len(config["tools"]) + 1  # the reference is compared too
    factor = len(config["voxel_sizes"]) * len(compared) * math.comb(implementations, 2)
    wilcoxon = pd.read_csv(study_run / "results/tables/table_wilcoxon.csv")
    assert set(wilcoxon["factor"]) == {factor}

    figures = study_run / "notebook_figures"
    monkeypatch.setenv("SEGMETRICS_RESULTS", str(study_run / "results"))
    shutil.copy(TEST_PRESET, study_run / "config.yaml")  # data/ lies beside the config
    monkeypatch.setenv("SEGMETRICS_CONFIG", str(study_run / "config.yaml"))
    monkeypatch.setenv("SEGMETRICS_FIGURES", str(figures))
    notebook = nbformat.read(REPO / "notebooks/figures.ipynb", as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    ).execute()
    for stem in ("figure_4", "figure_a3", "figure_a4", "figure_a5"):
        assert (figures / f"{stem}.png").stat().st_size > 10_000, stem
