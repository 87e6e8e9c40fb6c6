"""The LIDC preset CI runs, as the docs tell a researcher to run it: `make run
CONFIG=workflow/presets/lidc-test.yaml`, killed hard in the middle and resumed with the same
command, to its end: the readers' masks, both arms (a voxel size and the native grid), every
tool's scores, Table A1 with the native column, the report."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from analysis_fixtures import assert_the_yardstick_certified
from project_copy import VENV, commit_in_new_repository, copy_for_make

from adapters import STUDY_TOOLS
from study.records import NATIVE

REPO = Path(__file__).resolve().parents[1]
PRESET = "workflow/presets/lidc-test.yaml"
pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")


def make_run(project: Path) -> list[str]:
    """The documented command, with the project's own environment."""
    return ["make", "-C", str(project), "run", f"CONFIG={PRESET}", f"VENV={VENV}", "CORES=2"]


@pytest.fixture(scope="module")
def lidc_run(tmp_path_factory) -> Path:
    project = copy_for_make(tmp_path_factory.mktemp("project"))
    env = {**os.environ, "PYTHONPATH": str(project)}
    first = subprocess.Popen(
        make_run(project),
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        scores = project / "results/scores/lidc-test"
        for _ in range(1800):  # until the first tool's scores are written
            if first.poll() is not None or any(scores.glob("*/*.parquet")):
                break
            time.sleep(0.1)
        assert first.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the run and its jobs, as the OOM killer would
        first.wait()
    assert any((project / ".snakemake/locks").glob("*.lock")), "no stale lock to resume from"
    resumed = subprocess.run(make_run(project), env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    return project


def test_the_readers_masks_are_listed_with_where_they_come_from(lidc_run):
    manifest = pd.read_csv(lidc_run / "data/lidc-test/pairs.csv")
    assert set(manifest.patient_id) == {"LIDC-IDRI-0002", "LIDC-IDRI-0101", "LIDC-IDRI-0150"}
    assert len(manifest) == 4
    for column in ("annotation_a", "annotation_b", "series_uid", "nodule", "category"):
        assert manifest[column].notna().all(), column
    for path in [*manifest.path_a, *manifest.path_b]:
        assert (lidc_run / "data/lidc-test" / path).is_file()


def test_both_arms_are_scored_by_every_tool_and_the_reference(lidc_run):
    assert yaml.safe_load((lidc_run / PRESET).read_text())["tools"] == "all"
    scores = pd.read_parquet(lidc_run / "results/scores.parquet")
    assert set(scores.spacing) - {""} == {"2x2x2", NATIVE}
    scored = scores[scores.status != "unavailable"]
    available = set(STUDY_TOOLS) - set(scores.loc[scores.status == "unavailable", "tool"])
    for spacing in ("2x2x2", NATIVE):
        at = scored[scored.spacing == spacing]
        assert available | {"reference"} <= set(at.tool), spacing
        assert at.groupby("tool").oar.nunique().eq(4).all(), spacing
    assert (scored[scored.tool == "reference"].status == "ok").all()
    assert_the_yardstick_certified(scores)  # as in the published run


def test_the_native_grid_is_the_scans_own(lidc_run):
    from maskio import load_mask

    pairs = pd.read_csv(
        next((lidc_run / "results/masks/lidc-test/native").glob("*0002*/pairs.csv"))
    )
    manifest = pd.read_csv(lidc_run / "data/lidc-test/pairs.csv")
    drawn = manifest[manifest.patient_id == "LIDC-IDRI-0002"].iloc[0]
    native = load_mask(
        next((lidc_run / "results/masks/lidc-test/native").glob("*0002*")) / pairs.path_a[0]
    )
    source = load_mask(lidc_run / "data/lidc-test" / drawn.path_a)
    assert native.spacing == pytest.approx(source.spacing) and source.spacing[2] == pytest.approx(
        1.25
    )
    assert native.array.sum() == source.array.sum() > 0


def test_table_a1_and_the_report_carry_the_native_grid(lidc_run):
    table = (lidc_run / "results/tables/table_a1.md").read_text()
    assert "native grid: mean ± SD" in table and "(2, 2, 2) mm: mean ± SD" in table
    assert "native grid" in (lidc_run / "results/findings.md").read_text()
    assert (lidc_run / "results/report.html").stat().st_size > 100_000


def test_the_run_is_published_as_a_page_with_one_command(lidc_run, tmp_path):
    """`python -m study publish`, as docs/dataset.md gives it, against the run itself as the
    comparison: the answer first and the provenance last, every section there, the figures
    and the files a reader recomputes the verdicts from beside the page."""
    page = tmp_path / "docs/results/lidc-test.md"
    command = [sys.executable, "-m", "study", "publish", "--configfile", PRESET]
    command += ["--results", "results", "--compare", "results", "--compare-config", PRESET]
    command += ["--out", str(page)]
    done = subprocess.run(command, cwd=lidc_run, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    text = page.read_text()
    titles = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert titles[0] == "Which tool to use, per metric and grid"
    assert titles[-2:] == ["Set-up and provenance", "Cite"]
    for title in (
        "Table A1: Δ against the reference per grid",
        "Figures",
        "Compared with the paper",
        "Edge cases that occurred",
        "Real readers beside the synthetic observers",
        "Data",
    ):
        assert title in titles, title
    assert "4 reader pairs of 4 nodules in 3 scans" in text and "native grid" in text
    assert "The Cancer Imaging Archive" in text and "arXiv:2410.02630" in text
    assert "contradict 0." in text
    folder = page.with_suffix("")
    assert (folder / "figure_4.png").stat().st_size > 10_000
    published = pd.read_parquet(folder / "scores.parquet")
    assert {"tool", "metric", "value", "status", "patient_id", "nodule"} <= set(published)
    assert (published["tool"] == "reference").any()
    for name in ("recommendations.csv", "recommendations.md", "cards.md", "pairs.csv"):
        assert (folder / name).is_file(), name
    missing = subprocess.run(
        [*command[:-8], "--results", "nowhere", "--out", str(page)],
        cwd=lidc_run,
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "nowhere: no finished run here" in missing.stderr


def test_a_page_published_again_names_its_commit_clean(lidc_run):
    """Publishing over a committed page rewrites its files; those are the page's output, not
    changes of the code that made it: the page names the commit without "+ uncommitted
    changes" (it once counted its own files, when a run's newer scores replaced them)."""
    page = lidc_run / "docs/results/again.md"
    command = [sys.executable, "-m", "study", "publish", "--configfile", PRESET]
    command += ["--results", "results", "--out", str(page)]
    first = subprocess.run(command, cwd=lidc_run, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-3000:]
    # The committed page holds older files than the run's: publishing again replaces them.
    older = page.with_suffix("") / "recommendations.md"
    older.write_text(older.read_text() + "\nAn older run's line.\n")
    commit_in_new_repository(lidc_run, "docs/results")
    again = subprocess.run(command, cwd=lidc_run, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "An older run's line." not in older.read_text()
    made = next(line for line in page.read_text().splitlines() if line.startswith("- Commit:"))
    assert made.endswith("`.") and "uncommitted" not in made, made
