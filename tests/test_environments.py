"""Environments: tools scored in the paper's versions beside today's, and what drifted.

The unit tests need nothing but the study's environment. The ones marked `paper` run the
tools in the paper's environment and skip, with the reason, where `make env-paper` has not
built it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import LATER_TOOL, register_later_tool

from adapters import REGISTRY, CallSettings, describe, invoke, invoke_files, worker
from adapters.environments import (
    ENVIRONMENTS,
    REPO,
    WORKER_DEPTH,
    Environment,
    NestedWorker,
    environment,
    in_built_environment,
    python_path,
)
from maskio import write_mask
from study.analysis.environments import (
    compare,
    drift_table,
    edge_changes,
    findings_section,
    score_drift,
)
from study.pipeline.config import ConfigError, load_config
from study.scoring.edge_cases import probe
from study.scoring.score import scored_name, split_scored_name

PAPER = ENVIRONMENTS["paper"]
PAPER_CALLS = CallSettings(environment="paper")


def require_paper():
    reason = PAPER.unavailable()
    if reason is not None:
        pytest.skip(reason)


def test_names_join_and_split_a_tool_and_its_environment():
    assert scored_name("deepmind") == "deepmind"
    assert scored_name("deepmind", "paper") == "deepmind@paper"
    assert split_scored_name("deepmind@paper") == ("deepmind", "paper")
    assert split_scored_name("reference") == ("reference", "study")


def test_an_unknown_or_unbuilt_environment_says_so(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="unknown environment 'conda'"):
        environment("conda")
    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", tmp_path)
    states = describe(["deepmind", "medpy"], "paper")
    assert all("make env-paper" in reason for _, reason in states.values())
    a = np.zeros((8, 8, 8), bool)
    a[2:5, 2:5, 2:5] = True
    outcome = invoke("deepmind", a, a, (1, 1, 1), settings=PAPER_CALLS)
    assert outcome.unavailable is not None and "is not built" in outcome.unavailable


def test_the_config_scores_today_first():
    with pytest.raises(ConfigError, match="environments must start with 'study'"):
        load_config({"environments": ["paper", "study"]})
    with pytest.raises(ConfigError, match="environments"):
        load_config({"environments": ["conda"]})
    assert load_config({})["environments"] == ["study"]


def score_rows(environment: str, version: str, values: dict) -> list[dict]:
    return [
        {
            "tool": "medpy",
            "case": "c",
            "oar": oar,
            "spacing": spacing,
            "metric": "HD",
            "value": value,
            "status": "ok" if math.isfinite(value) else ("nan" if math.isnan(value) else "inf"),
            "tool_version": version,
            "environment": environment,
        }
        for (oar, spacing), value in values.items()
    ]


def test_score_drift_counts_identical_values_and_the_largest_difference():
    today = {("A", "1x1x1"): 2.0, ("B", "1x1x1"): 3.0, ("C", "1x1x1"): math.nan}
    then = {("A", "1x1x1"): 2.0, ("B", "1x1x1"): 3.25, ("C", "1x1x1"): math.nan}
    missing = {"tool": "anima", "case": "", "oar": "", "spacing": "", "metric": ""}
    missing |= {"value": math.nan, "status": "unavailable", "tool_version": ""}
    rows = score_rows("study", "0.5.2", today) + score_rows("paper", "0.4.0", then)
    rows += [missing | {"environment": "study"}, missing | {"environment": "paper"}]
    scores = pd.DataFrame(rows)
    assert list(score_drift(scores, "paper")["tool"]) == ["medpy"]  # anima: missing in both
    drift = score_drift(scores, "paper").iloc[0]
    assert (drift.pairs, drift.identical, drift.status_changed) == (3, 2, 0)
    assert drift.max_abs_difference == pytest.approx(0.25)
    assert (drift.version_other, drift.version_study) == ("0.4.0", "0.5.2")


def edge_document(tool: str, version: str, output: str, message: str = "") -> dict:
    record = {"case": "O1", "metric": "HD", "output": output, "value": "", "warned": False}
    return {"tool": tool, "version": version, "records": [{**record, "message": message}]}


def test_an_edge_case_change_is_the_environments_when_the_tool_did_not_change():
    today = [
        edge_document("deepmind", "0.1", "error", "AttributeError: np.Inf was removed"),
        edge_document("segmetrics", "1.2.8", "0"),
        edge_document("medpy", "0.5.2", "error"),
    ]
    then = [
        edge_document("deepmind", "0.1", "inf"),
        edge_document("segmetrics", "1.1.6", "float_max"),
        edge_document("medpy", "0.4.0", "error"),
    ]
    changes = edge_changes(today, then, "paper").set_index("tool")
    assert list(changes.index) == ["deepmind", "segmetrics"]  # medpy: E both times
    assert changes.loc["deepmind", "why"].startswith("the environment (the same 0.1")
    assert changes.loc["segmetrics", "why"] == "the tool's version (1.1.6 → 1.2.8)"
    assert (changes.loc["deepmind", "paper"], changes.loc["deepmind", "study"]) == ("∞", "E")
    scores = pd.DataFrame(
        score_rows("study", "0.1", {("A", "1x1x1"): 2.0})
        + score_rows("paper", "0.1", {("A", "1x1x1"): 2.0})
    ).assign(tool="deepmind")
    comparison = compare(scores, today, then, "paper")
    table = drift_table(comparison)
    assert table.display.iloc[0]["Largest |Δ| of finite values"] == "identical"
    assert table.notes[-1] == "seg-metrics, the tool's version (1.1.6 → 1.2.8): HD O1 ∞* → 0"
    title, lines = findings_section(comparison)
    assert title == "Since the paper environment's versions"
    assert lines[0] == "Identical on every scored pair, metric and voxel size: Google DeepMind."
    assert lines[1].startswith("Edge cases: 2 cells changed, 1 of them with the tool's version")


def test_a_tool_since_the_paper_is_not_compared_with_the_papers_versions(monkeypatch):
    """Even in a scores table that holds it in both environments (the scoring plan scores
    none there): a later tool has no paper version to drift from."""
    register_later_tool(monkeypatch)
    values = {("A", "1x1x1"): 2.0}
    rows = score_rows("study", "0.5.2", values) + score_rows("paper", "0.4.0", values)
    later = [row | {"tool": LATER_TOOL} for row in rows]
    documents = [edge_document(LATER_TOOL, "2.0", "error")], [edge_document(LATER_TOOL, "2.0", "0")]
    comparison = compare(pd.DataFrame(rows + later), *documents, "paper")
    assert list(comparison.drift["tool"]) == ["medpy"]
    assert comparison.changes.empty
    assert len(edge_changes(*documents, "paper")) == 1  # what the filter left out


# --- in the paper's environment --------------------------------------------------------------


def test_the_paper_environment_has_the_papers_versions():
    require_paper()
    versions = {name: v for name, (v, _) in describe(list(REGISTRY), "paper").items()}
    assert versions["medpy"] == "0.4.0" and versions["monai"] == "1.3.0"
    assert versions["segmetrics"] == "1.1.6" and versions["simpleitk"] == "2.3.1"
    assert versions["pymia"] == "0.3.2" and versions["miseval"] == "1.2.2"


def records_of(name: str, environment: str) -> dict:
    document = probe(REGISTRY[name], CallSettings(environment=environment))
    return {(r["metric"], r["case"]): r for r in document["records"]}


def test_the_papers_versions_handle_empty_masks_as_the_paper_reports():
    """The paper's Table A3: DeepMind ∞ for HD and NaN for MASD with empty masks, NSD and DSC
    0, 0, NaN (today numpy 2 turns the ∞ and NaN into errors); seg-metrics 1.1.6 a very large
    number for one empty mask and an error for two. MedPy 0.4.0 gives DSC 0 for two empty
    masks (the paper's MedPy, 9 commits later, 1; today's, under numpy 2, NaN)."""
    require_paper()
    deepmind = records_of("deepmind", "paper")
    expected = {"HD": "inf inf inf", "MASD": "nan nan nan", "NSD": "0 0 nan", "DSC": "0 0 nan"}
    for metric, outputs in expected.items():
        got = " ".join(deepmind[(metric, case)]["output"] for case in ("O1", "O2", "O3"))
        assert got == outputs, metric
    today = records_of("deepmind", "study")[("HD", "O1")]
    assert today["output"] == "error" and "NumPy 2.0" in today["message"]
    segmetrics = records_of("segmetrics", "paper")
    assert [segmetrics[("HD", case)]["output"] for case in ("O1", "O2", "O3")] == [
        "float_max",
        "float_max",
        "error",
    ]
    assert records_of("medpy", "paper")[("DSC", "O3")]["output"] == "0"


DIRECT = """
import json, sys
import numpy as np
import SimpleITK as sitk
from maskio import read_mask

path_a, path_b = sys.argv[1:3]
(a, spacing, _), (b, _, _) = read_mask(path_a), read_mask(path_b)
out = {}

import surface_distance as sd
d = sd.compute_surface_distances(a, b, spacing)
out["deepmind"] = {"HD": sd.compute_robust_hausdorff(d, 100),
                   "HD95": sd.compute_robust_hausdorff(d, 95),
                   "NSD": sd.compute_surface_dice_at_tolerance(d, 2.0)}

from medpy.metric import binary
out["medpy"] = {"HD": binary.hd(b, a, voxelspacing=spacing),
                "HD95": binary.hd95(b, a, voxelspacing=spacing),
                "MASD": binary.asd(b, a, voxelspacing=spacing)}

f = sitk.HausdorffDistanceImageFilter()
f.Execute(sitk.ReadImage(path_a), sitk.ReadImage(path_b))
out["simpleitk"] = {"HD": f.GetHausdorffDistance(), "MASD": f.GetAverageHausdorffDistance()}

import torch
from monai.metrics import compute_hausdorff_distance
y = torch.from_numpy(a[None, None].astype(np.float32))
p = torch.from_numpy(b[None, None].astype(np.float32))
out["monai"] = {"HD": compute_hausdorff_distance(p, y, include_background=True,
                                                 spacing=list(spacing)).item()}
json.dump({t: {k: float(v) for k, v in m.items()} for t, m in out.items()}, sys.stdout)
"""


def test_each_paper_version_equals_a_direct_call_of_that_version(tmp_path):
    """On an anisotropic pair, each tool through its adapter in the paper's environment
    equals the same tool called directly by the paper environment's Python."""
    require_paper()
    spacing = (0.5, 0.5, 2.0)
    x, y, z = np.meshgrid(
        *(np.arange(n) * s for n, s in zip((48, 48, 14), spacing, strict=True)), indexing="ij"
    )
    a = (x - 12) ** 2 + (y - 12) ** 2 + (z - 13) ** 2 < 8**2
    b = (x - 13) ** 2 / 1.2 + (y - 11) ** 2 + (z - 14) ** 2 < 7**2
    paths = [write_mask(tmp_path / f"{n}.nii.gz", m, spacing) for n, m in (("a", a), ("b", b))]
    done = subprocess.run(
        [PAPER.python, "-c", DIRECT, *map(str, paths)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    direct = json.loads(done.stdout)
    for tool, values in direct.items():
        outcome = invoke_files(tool, *paths, metrics=sorted(values), settings=PAPER_CALLS)
        assert outcome.error is None, (tool, outcome.error)
        assert outcome.values == pytest.approx(values, rel=1e-12, abs=1e-12), tool


# --- make env-paper ----------------------------------------------------------------------------


def load_builder():
    spec = importlib.util.spec_from_file_location(
        "build_environment", Path(__file__).resolve().parents[1] / "tools/build_environment.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_builder_is_a_no_op_when_up_to_date_and_links_its_programs(
    tmp_path, monkeypatch, capsys
):
    builder = load_builder()
    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", tmp_path)
    python = Path(PAPER.python)
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    builder.stamp_of(PAPER).touch()
    program = tmp_path / "plastimatch-1.9.4"
    program.write_text("#!/bin/sh\n")
    monkeypatch.setitem(builder.PROGRAMS, "paper", {"plastimatch": ("plastimatch", str(program))})
    monkeypatch.setattr(builder, "_run", lambda command: pytest.fail(f"ran {command}"))
    assert builder.build("paper") == python
    assert (python.parent / "plastimatch").resolve() == program
    assert "paper: up to date" in capsys.readouterr().out
    changed = tmp_path / "paper.txt"
    changed.write_text("numpy==1.23.5\n")
    edited = Environment("paper", changed, "")
    assert builder.stamp_of(edited) != builder.stamp_of(PAPER)  # a new pin rebuilds


def test_the_builder_names_what_it_can_build():
    with pytest.raises(
        SystemExit, match="no environment 'study' to build; buildable: \\['paper', 'panoptica'\\]"
    ):
        load_builder().build("study")


def test_a_tool_with_a_home_environment_runs_there_for_the_study(monkeypatch, tmp_path):
    """panoptica's scores count as the study's, made by its home environment's Python, which
    says how to build it when it is missing; the paper environment has no panoptica."""
    panoptica = REGISTRY["panoptica"]
    assert panoptica.runs_in("study") == "panoptica" and panoptica.runs_in("paper") == "paper"
    assert REGISTRY["monai"].runs_in("study") == "study"
    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", tmp_path)
    (_, reason), (version, ok) = describe(["panoptica", "monai"]).values()
    assert "make env-panoptica" in reason and ok is None and version
    with pytest.raises(ConfigError, match="environments"):
        load_config({"environments": ["study", "panoptica"]})  # not a set of versions


def test_only_the_papers_tools_are_scored_in_the_papers_environment(monkeypatch, tmp_path):
    from study.pipeline.scoring_plan import ScoringPlan

    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", tmp_path)
    config = load_config({"environments": ["study", "paper"], "tools": ["monai", "mikan"]})
    plan = ScoringPlan(config, dataset="synthetic", cases=["case_01"])
    assert plan.elsewhere == ["monai@paper"]


@pytest.mark.parametrize("name", ["paper", "panoptica"])
def test_the_pins_are_exact_and_name_each_package_once(name):
    names = []
    for path in load_builder().pinned_files(ENVIRONMENTS[name]):
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, separator, version = line.partition("==")
                assert separator and version, f"{path.name}: {line!r} is not pinned"
                names.append(name.lower().replace("_", "-"))
    assert len(names) == len(set(names)), "a package pinned twice"


def test_a_study_in_both_environments_runs_to_its_end(tmp_path):
    """`environments: [study, paper]` through Snakemake: the paper's tool in both, the tool
    since the paper in the study's only, the drift table and the findings section written."""
    require_paper()
    import subprocess
    import sys

    import yaml

    repo = Path(__file__).resolve().parents[1]
    config = yaml.safe_load((repo / "workflow/presets/test.yaml").read_text())
    config.update(environments=["study", "paper"], tools=["medpy", "mikan"])
    config["dataset"]["oars"] = ["Cochlea_L", "Parotid_L"]
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "--snakefile"]
    command += [str(repo / "Snakefile"), "--directory", str(tmp_path)]
    command += ["--configfile", str(tmp_path / "config.yaml")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    scores = pd.read_parquet(tmp_path / "results/scores.parquet")
    held = scores.groupby("tool")["environment"].agg(set).to_dict()
    assert held["medpy"] == {"study", "paper"} and held["mikan"] == {"study"}
    drift = pd.read_csv(tmp_path / "results/tables/table_drift.csv")
    assert set(drift["tool"]) == {"medpy"}
    findings = (tmp_path / "results/findings.md").read_text()
    assert "## Since the paper environment's versions" in findings
    assert "## Tools since the paper" in findings and "**mikan-rs**" in findings


# --- an environment recognised however it is reached; never a chain of workers ---------------


@pytest.mark.parametrize("reached", ["through the link", "at its target"])
def test_an_environment_linked_from_elsewhere_is_its_tools_home(monkeypatch, tmp_path, reached):
    """.envs/panoptica a symbolic link to an environment elsewhere (scratch space on a
    cluster; here the running Python's): that Python, whichever path started it, answers for
    panoptica itself instead of asking its home, that is itself, again."""
    envs = tmp_path / "envs"
    envs.mkdir()
    (envs / "panoptica").symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", envs)
    if reached == "through the link":
        monkeypatch.setattr(sys, "prefix", str(envs / "panoptica"))
    monkeypatch.setattr(Environment, "describe", lambda *_, **__: pytest.fail("asked again"))
    assert in_built_environment() and ENVIRONMENTS["panoptica"].is_here()
    assert not ENVIRONMENTS["paper"].is_here()
    reason = REGISTRY["panoptica"].unavailable()  # the study's .venv has no panoptica
    assert reason == "Python package 'panoptica' is not installed (make env-panoptica)"


def test_a_worker_process_starts_no_other(monkeypatch):
    """In a describe or worker process (its parent set WORKER_DEPTH), starting another of
    either kind is a one-line error naming the environment, and no process is started."""
    monkeypatch.setenv(WORKER_DEPTH, "1")
    monkeypatch.setattr(subprocess, "run", lambda *_, **__: pytest.fail("started a process"))
    monkeypatch.setattr(subprocess, "Popen", lambda *_, **__: pytest.fail("started a process"))
    with pytest.raises(NestedWorker, match="describe of environment 'study'") as said:
        environment("study").describe([REGISTRY["medpy"]], {})
    assert "\n" not in str(said.value)
    with pytest.raises(NestedWorker, match="worker of environment 'study'"):
        worker.Worker(REGISTRY["medpy"], sys.executable, None, {})


ASKS = {
    "describe": "from adapters.environments import environment\n"
    "print(environment('study').describe([AsksItsHome()], {}, build=False)[0]['unavailable'])",
    "worker": "import numpy as np\nfrom adapters import invoke\n"
    "print(invoke(AsksItsHome(), np.ones((2, 2, 2)), np.ones((2, 2, 2)), (1, 1, 1)).unavailable)",
}


@pytest.mark.parametrize("kind", sorted(ASKS))
def test_a_tool_that_always_asks_its_home_makes_one_error_not_a_chain(tmp_path, kind):
    """The reported bug's shape, in real processes: a tool whose environment never takes
    itself for its home. The first describe or worker process asks, its child refuses in one
    line, which reaches the study as the tool's reason; every process the test started lives
    in a session of its own, killed whole if it outlives the bound."""
    log = tmp_path / "asked"
    code = "from fake_tools import AsksItsHome\n" + ASKS[kind]
    variables = {**os.environ, "PYTHONPATH": python_path(), "ASKS_ITS_HOME_LOG": str(log)}
    variables.pop(WORKER_DEPTH, None)
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        env=variables,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the session's leftovers, if any
    assert process.returncode == 0, err[-2000:]
    assert len(log.read_text().split()) == 1  # one process asked; its child started none
    said = out.strip().splitlines()
    assert len(said) == 1 and "describe of environment 'study'" in said[0]
    assert f"process is a describe or worker process already ({WORKER_DEPTH}=1)" in said[0]
