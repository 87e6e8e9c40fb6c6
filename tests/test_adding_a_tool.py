"""Adding a tool is one module and its line in the registry (with its import), nothing else.

A throwaway adapter is added that way to a copy of the project; with no other edit, the
registry lists it, the default configuration (`tools: all`) includes it, and the workflow
plans to score, probe and time it (a dry run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROJECT_PARTS = ("Snakefile", "config.yaml", "workflow", "adapters", "maskio", "reference", "study")

THROWAWAY_MODULE = '''"""A throwaway tool: every distance 0."""

from adapters.base import PythonAdapter


class Throwaway(PythonAdapter):
    name = "throwaway"
    label = "Throwaway"
    metrics = ("HD", "DSC")
    module = "numpy"
    distribution = "numpy"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {metric: 0.0 for metric in metrics}
'''


@pytest.fixture(scope="module")
def project_with_a_new_tool(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("project")
    for part in PROJECT_PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy / part)
    (copy / "adapters" / "throwaway.py").write_text(THROWAWAY_MODULE)
    registry = copy / "adapters" / "__init__.py"
    text = registry.read_text()
    entry, first_import = "_ADAPTERS: tuple[Adapter, ...] = (", "from adapters.anima import"
    assert text.count(entry) == 1 and text.count(first_import) == 1
    text = text.replace(first_import, f"from adapters.throwaway import Throwaway\n{first_import}")
    registry.write_text(text.replace(entry, f"{entry}\n    Throwaway(),"))
    return copy


def run_in(project: Path, *command: str, cwd: Path | None = None) -> str:
    environment = {**os.environ, "PYTHONPATH": str(project)}
    done = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        cwd=cwd or project,
        env=environment,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_registry_lists_it(project_with_a_new_tool):
    listed = run_in(project_with_a_new_tool, "-m", "adapters", "list", "--tools", "throwaway")
    assert listed.split()[:3] == ["throwaway", "tool", "Throwaway"]


def test_the_workflow_scores_probes_and_times_it(project_with_a_new_tool, tmp_path):
    project = project_with_a_new_tool
    planned = run_in(
        project,
        "-m",
        "snakemake",
        "--dry-run",
        "--cores",
        "1",
        "--snakefile",
        str(project / "Snakefile"),
        "--directory",
        str(tmp_path),
        "--configfile",
        str(project / "workflow/presets/test.yaml"),
    )
    outputs = set(re.findall(r"output: (\S+)", planned))
    assert "results/edge_cases/throwaway.json" in outputs
    assert "results/timing/throwaway.parquet" in outputs
    assert any(
        re.fullmatch(r"results/scores/[^/]+/throwaway/[^/]+\.parquet", path) for path in outputs
    ), sorted(outputs)
