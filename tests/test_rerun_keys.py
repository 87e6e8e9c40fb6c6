"""Every output is keyed on what made it: a rerun redoes exactly the outputs of a tool that was
installed or upgraded, and nothing else, and the analysis never mixes two versions.

One study of the test preset's case, with a throwaway tool whose package is missing at first
(the README's newcomer path: `make run`, install the rest, `make run` again), then installed
at version 1.0, then upgraded to 1.1: a real package on the Python path, whose version the
workflow reads from its metadata as it does for every tool.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from analysis_fixtures import assert_the_yardstick_certified
from project_copy import THROWAWAY_MODULE, copy_project, run_in

INSTALLED_MODULE = '''"""A throwaway tool whose package the test installs, then upgrades."""

from adapters.throwaway import Throwaway


class Installed(Throwaway):
    name = "installed"
    label = "Installed"
    module = "throwaway_backend"
    distribution = "throwaway-backend"
    install_hint = "pip install throwaway-backend"
'''

TOOL = "installed"
OTHERS = ("simpleitk", "reference")
"""The study's other implementations, whose outputs no change of the tool may touch."""


def install(site: Path, version: str) -> None:
    """The tool's package at `version` in `site`, as pip leaves it: the module and its
    dist-info (the metadata `importlib.metadata.version` reads)."""
    for old in site.glob("throwaway_backend-*.dist-info"):
        shutil.rmtree(old)
    (site / "throwaway_backend.py").write_text(f"__version__ = {version!r}\n")
    info = site / f"throwaway_backend-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: throwaway-backend\nVersion: {version}\n"
    )


def mtimes(folder: Path) -> dict[str, int]:
    """Every file of the run's results (logs and benchmarks aside) -> its mtime in ns."""
    return {
        str(path.relative_to(folder)): path.stat().st_mtime_ns
        for path in (folder / "results").rglob("*")
        if path.is_file() and not {"logs", "benchmarks"} & set(path.parts)
    }


def of_tool(path: str, tool: str) -> bool:
    """Whether a results file is one of `tool`'s own (scores, edge cases, timing, grid check)."""
    parts = Path(path).parts
    return tool in parts or Path(path).stem == tool


class Study:
    """The copy of the project, its config and a run folder; `run` runs its workflow."""

    def __init__(self, project: Path, folder: Path, site: Path) -> None:
        self.project, self.folder, self.site = project, folder, site
        config = yaml.safe_load((project / "workflow/presets/test.yaml").read_text())
        config["tools"] = [TOOL, "simpleitk"]
        config["reference"]["meshings"] = ["discrete_marching_cubes"]
        config["reference"]["brackets"] = False  # a test switches it on
        self.config = folder / "config.yaml"
        self.config.write_text(yaml.safe_dump(config))

    def run(self, *options: str, check: bool = True):
        return run_in(
            self.project,
            "-m",
            "snakemake",
            "--cores",
            "2",
            "--snakefile",
            str(self.project / "Snakefile"),
            "--directory",
            str(self.folder),
            "--configfile",
            str(self.config),
            *options,
            path=self.site,
            check=check,
        )


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Study:
    project = copy_project(
        tmp_path_factory.mktemp("project"),
        {"throwaway": THROWAWAY_MODULE, "installed_tool": INSTALLED_MODULE},
        {"Installed": "installed_tool"},
    )
    site = tmp_path_factory.mktemp("site")
    return Study(project, tmp_path_factory.mktemp("run"), site)


@pytest.fixture(scope="module")
def newcomer(study) -> dict:
    """Run without the tool, install it, run again; what each run left."""
    study.run()
    first = {
        "probe": json.loads((study.folder / f"results/edge_cases/{TOOL}.json").read_text()),
        "findings": (study.folder / "results/findings.md").read_text(),
    }
    install(study.site, "1.0")
    study.run()
    return {"first": first, "after": mtimes(study.folder)}


def test_a_tool_installed_between_runs_is_probed_tabled_and_found(study, newcomer):
    # The first run could not have it, and said so.
    assert newcomer["first"]["probe"]["status"] == "unavailable"
    assert "Installed: not available" in newcomer["first"]["findings"]
    probe = json.loads((study.folder / f"results/edge_cases/{TOOL}.json").read_text())
    assert probe["status"] == "ok" and probe["version"] == "1.0" and probe["records"]
    table = (study.folder / "results/tables/table_a3.md").read_text()
    row = next(line for line in table.splitlines() if "| Installed" in line)
    assert "| 1.0 " in row and "not installed" not in row, row
    findings = (study.folder / "results/findings.md").read_text()
    assert "**Installed** edge cases (Table A3): HD O1" in findings
    assert "Installed: not available" not in findings
    unrecorded = [line.partition("not recorded")[2] for line in findings.splitlines()]
    assert not any("Installed" in names for names in unrecorded), findings


def test_nothing_changed_nothing_to_do(study, newcomer):
    planned = study.run("--dry-run").stdout
    assert "Nothing to be done" in planned, planned[-2000:]


def test_an_upgrade_reruns_exactly_the_tools_jobs(study, newcomer):
    before = newcomer["after"]
    install(study.site, "1.1")
    study.run()
    after = mtimes(study.folder)
    assert set(after) == set(before)
    changed = {path for path in after if after[path] != before[path]}
    # Its own outputs, but for the first run's record of it missing: no longer a target.
    own = {path for path in before if of_tool(path, TOOL) and "unavailable" not in path}
    kinds = {Path(path).parts[1] for path in own}
    assert kinds == {"scores", "edge_cases", "timing", "grid_check"}, sorted(own)
    assert own <= changed, sorted(own - changed)
    for other in OTHERS:
        touched = sorted(path for path in changed if of_tool(path, other))
        assert not touched, f"{other}'s outputs were redone: {touched}"
    assert not any("masks" in Path(path).parts for path in changed)
    probe = json.loads((study.folder / f"results/edge_cases/{TOOL}.json").read_text())
    assert probe["version"] == "1.1"


def test_asking_for_brackets_reruns_only_the_references_scoring(study, newcomer):
    """reference.brackets switched on: the reference's score files are redone, each of its
    values inside the bracket now recorded beside it; no tool's output is touched."""
    before = mtimes(study.folder)
    config = yaml.safe_load(study.config.read_text())
    config["reference"]["brackets"] = True
    study.config.write_text(yaml.safe_dump(config))
    study.run()
    after = mtimes(study.folder)
    changed = {path for path in after if after[path] != before[path]}
    redone = {Path(path).parts[1] for path in changed if of_tool(path, "reference")}
    assert redone == {"scores"}, sorted(changed)
    for tool in (TOOL, "simpleitk"):
        assert not [path for path in changed if of_tool(path, tool)], tool
    assert_the_yardstick_certified(pd.read_parquet(study.folder / "results/scores.parquet"))
    for page in ("tables/table_a1.md", "recommendations.md"):
        text = (study.folder / "results" / page).read_text()
        assert "The reference's own uncertainty (its proven brackets" in text, page


def test_a_stale_record_stops_the_analysis_naming_its_file(study, newcomer):
    """A record of another version planted beside the others: collecting stops, and says
    which tool, which versions, which files."""
    path = study.folder / f"results/edge_cases/{TOOL}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "version": "0.9"}))
    done = study.run(check=False)
    assert done.returncode != 0
    said = done.stderr
    assert f"{TOOL} (environment study) in 2 versions" in said, said[-3000:]
    assert f"0.9 in results/edge_cases/{TOOL}.json" in said
    assert f"results/scores/test/{TOOL}/" in said
