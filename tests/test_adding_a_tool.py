"""Adding a tool is one module and its line in the registry (with its import), nothing else.

Throwaway adapters are added that way to a copy of the project; with no other edit, the
registry lists them, the default configuration (`tools: all`) includes them, the registry-wide
adapter tests pass for the one that offers HD alone (no test assumes DSC or any other
metric), and the workflow plans to score, probe and time them (a dry run). Two of them
misbehave as real tools do, one killing its interpreter with SIGSEGV and one raising a
BaseException (a Rust panic arrives as one): the workflow runs to its end, and their failures
are error rows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from project_copy import THROWAWAY_MODULE, copy_project, run_in, run_workflow

CRASHING_MODULE = '''"""Throwaway tools that crash on pairs of an odd number of voxels in a."""

import os
import signal

from adapters.throwaway import Throwaway


class Segfaulting(Throwaway):
    name = "segfaulting"
    label = "Segfaulting"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        if a.sum() % 2:
            os.kill(os.getpid(), signal.SIGSEGV)
        return super()._compute(a, b, spacing, metrics, percentile, tau)


class Panic(BaseException):
    """As pyo3_runtime.PanicException: not an Exception."""


class Panicking(Throwaway):
    name = "panicking"
    label = "Panicking"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        if a.sum() % 2:
            raise Panic("thread panicked at src/lib.rs")
        return super()._compute(a, b, spacing, metrics, percentile, tau)
'''


@pytest.fixture(scope="module")
def project_with_a_new_tool(tmp_path_factory) -> Path:
    return copy_project(
        tmp_path_factory.mktemp("project"),
        {"throwaway": THROWAWAY_MODULE, "crashing": CRASHING_MODULE},
        {"Throwaway": "throwaway", "Segfaulting": "crashing", "Panicking": "crashing"},
    )


def test_the_registry_lists_it(project_with_a_new_tool):
    listed = run_in(
        project_with_a_new_tool, "-m", "adapters", "list", "--tools", "throwaway"
    ).stdout
    assert listed.split()[:3] == ["throwaway", "tool", "Throwaway"]


def test_the_registry_wide_adapter_tests_pass_for_it(project_with_a_new_tool):
    """tests/test_adapters.py of the copy, for the HD-only tool: run, not skipped."""
    said = run_in(
        project_with_a_new_tool,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_adapters.py",
        "-k",
        "throwaway or registry_names",
    ).stdout
    assert re.search(r"\b4 passed\b", said) and "skipped" not in said, said[-2000:]


def test_its_card_is_written_with_no_other_edit(project_with_a_new_tool, tmp_path):
    """`python -m study cards` on a scores table holding the new tool: its card describes it
    from its module's header, and the recommendations rank it."""
    project = project_with_a_new_tool
    scores_path = tmp_path / "scores.parquet"
    run_in(
        project,
        "-c",
        "import sys; sys.path.insert(0, 'tests')\n"
        "import pandas as pd\n"
        "from analysis_fixtures import make_scores\n"
        "scores = make_scores()\n"
        "hd = scores[(scores.tool == 'reference') & (scores.metric == 'HD')]\n"
        "hd = hd.assign(tool='throwaway', tool_version='0.1')\n"
        f"pd.concat([scores, hd]).to_parquet({str(scores_path)!r})\n",
    )
    out = tmp_path / "out"
    run_in(project, "-m", "study", "cards", "--scores", str(scores_path), "--out", str(out))
    card = (out / "cards.md").read_text().split("## Throwaway (`throwaway`, since the paper)")[1]
    card = card.split("\n## ")[0]
    assert "**Tool**: A throwaway tool that offers HD alone (face-connected boundary, EDT)." in card
    assert "**Declared by its adapter**: offers HD." in card
    # Identical to Google DeepMind (both equal the reference): their shared row and verdict.
    assert (
        "HD at (2, 2, 2) mm (with Google DeepMind = Throwaway): 100% of 24 pairs within ±0.5 mm; "
        "worst +0.00 mm"
    ) in card
    recommended = pd.read_csv(out / "recommendations.csv")
    mine = (recommended.tool == "throwaway") | recommended.identical.fillna("").str.contains(
        "throwaway"
    )
    assert set(recommended.loc[mine, "metric"]) == {"HD"}


def test_the_workflow_scores_probes_and_times_it(project_with_a_new_tool, tmp_path):
    project = project_with_a_new_tool
    preset = project / "workflow/presets/test.yaml"
    planned = run_workflow(project, tmp_path, preset, "--dry-run").stdout
    outputs = set(re.findall(r"output: (\S+)", planned))
    assert "results/edge_cases/throwaway.json" in outputs
    assert "results/timing/throwaway.parquet" in outputs
    assert any(
        re.fullmatch(r"results/scores/[^/]+/throwaway/[^/]+\.parquet", path) for path in outputs
    ), sorted(outputs)


def test_a_crashing_tool_becomes_error_rows_and_the_study_completes(
    project_with_a_new_tool, tmp_path
):
    project = project_with_a_new_tool
    config = yaml.safe_load((project / "workflow/presets/test.yaml").read_text())
    config["tools"] = ["segfaulting", "panicking", "simpleitk"]
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    (tmp_path / "crashing.yaml").write_text(yaml.safe_dump(config))
    run_workflow(project, tmp_path, tmp_path / "crashing.yaml")
    scores = pd.read_parquet(tmp_path / "results/scores.parquet")
    assert (tmp_path / "results/findings.md").is_file()  # the analysis ran to its end
    cards = (tmp_path / "results/cards.md").read_text()
    assert "## Segfaulting (`segfaulting`, since the paper)" in cards
    assert "worker killed by SIGSEGV" in cards  # its failures, in its own words
    for tool, words in (
        ("segfaulting", "worker killed by SIGSEGV"),
        ("panicking", "Panic: thread"),
    ):
        rows = scores[scores.tool == tool]
        failed = rows[rows.status == "error"]
        assert len(failed) and failed.message.str.contains(words, regex=False).all(), tool
        assert (rows.status == "ok").any(), f"{tool}: the pairs after a crash are scored too"
    assert set(scores[scores.tool == "simpleitk"].status) == {"ok"}
    assert set(scores[scores.tool == "reference"].status) == {"ok"}
    probe = json.loads((tmp_path / "results/edge_cases/segfaulting.json").read_text())
    assert probe["status"] == "ok" and probe["records"]
