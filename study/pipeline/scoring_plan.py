"""What the scoring stage runs: which implementations, on which files, and what it writes.

Built once when the workflow starts. Asking every tool whether it is installed here happens
then, once per environment, so a missing tool becomes one "unavailable" record instead of a
job per case. A tool scored in an environment other than the study's has jobs and files of
its own, named `tool@environment` (`study.scoring.score.scored_name`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from adapters import CallSettings, Identity, configure, identify
from adapters.environments import STUDY_ENVIRONMENT
from study.pipeline.layout import Layout
from study.records import REFERENCE, REFERENCE_VARIANTS, spacing_label
from study.scoring.grid_check import GRIDS
from study.scoring.score import implementation, scored_name, split_scored_name


class ScoringPlan:
    """Score, edge-case and timing files of a validated config, for the Snakemake rules."""

    def __init__(self, config: Mapping, *, dataset: str, cases: Sequence[str]):
        meshings = config["reference"]["meshings"]
        self.variants = [
            name for name, meshing in REFERENCE_VARIANTS.items() if meshing in meshings
        ]
        self.brackets = config["reference"]["brackets"]
        self.tools = [*config["tools"], *config.get("cross_checks", [])]
        self.dataset, self.cases = dataset, list(cases)
        self.calls = CallSettings(
            percentile=config["metrics"]["percentile"],
            tau=config["metrics"]["tau_mm"],
            timeout=config["timeouts"]["tool_seconds"],
            memory_gb=config["timeouts"]["tool_memory_gb"],
        )
        self.check_per_category = config["grid_check"]["pairs_per_category"]
        self.check_spacings = [spacing_label(size) for size in config["grid_check"]["voxel_sizes"]]
        size = config["scoring"]["cases_per_job"]
        self.batches = {
            _batch_name(group): group
            for group in (self.cases[start : start + size] for start in range(0, len(cases), size))
        }
        configure(config.get("tool_paths", {}))  # binaries named in the config count as found
        # implementation() raises ValueError naming the known tools for an unknown name.
        self.identities: dict[str, Identity] = identify(
            [implementation(name) for name in [*self.variants, *self.tools]]
        )
        # The paper's tools in every other environment (not the cross-checks: they check the
        # reference, today; not the tools since the paper, which have no paper version),
        # asked once per environment.
        self.elsewhere = []
        paper_tools = [name for name in config["tools"] if implementation(name).in_paper]
        for environment in config["environments"][1:]:
            states = identify([implementation(name) for name in paper_tools], environment)
            for tool, identity in states.items():
                name = scored_name(tool, environment)
                self.elsewhere.append(name)
                self.identities[name] = identity

    def available(self, name: str) -> bool:
        return self.identities[name].unavailable is None

    def producer(self, name: str) -> dict[str, str | None]:
        """What makes the outputs of `name` (a scored name: tool, tool@environment or a
        reference meshing): the tool, its environment, version and build, or why it is
        unavailable. Every job of the tool takes it as a param, so Snakemake (rerun trigger
        `params`, on by default) reruns exactly the jobs whose producer changed: a tool
        installed, upgraded, rebuilt or gone, a new reference."""
        tool, environment = split_scored_name(name)
        identity = self.identities[name]
        return {"tool": tool, "environment": environment, **dataclasses.asdict(identity)}

    def settings(self, name: str, *fields: str) -> dict:
        """How the jobs of `name` (a scored name) call it: the config's `CallSettings` in the
        name's environment, as plain values (`CallSettings.as_key`, of `fields` only when
        given). The jobs take it as a param, so a changed setting reruns exactly the jobs that
        use it, and their scripts read it back with `CallSettings(**settings)`."""
        _, environment = split_scored_name(name)
        return dataclasses.replace(self.calls, environment=environment).as_key(*fields)

    def certified(self, name: str) -> bool:
        """Whether the jobs of `name` record proven brackets (`reference.brackets`): only the
        yardstick's. Every Δ is taken against it; the other meshings are compared with it
        (Table A4), by differences far above the plain call's error, and certifying them
        would triple the brackets' cost. A job param, so switching it reruns exactly the
        yardstick's jobs."""
        return self.brackets and name == REFERENCE

    def priority(self, name: str) -> int:
        """Scheduling priority of a scoring job: the reference meshings first.

        They are the longest jobs (most of the scoring time, see docs/workflow.md). Started
        first, they leave the short tool jobs to fill the cores at the end, instead of one long
        reference job running alone on one core while the others idle (longest job first).
        """
        return 1 if name in self.variants else 0

    def cases_of(self, batch: str) -> list[str]:
        """The cases one score_case job scores."""
        return self.batches[batch]

    def score_files(self) -> list[str]:
        """One file per (implementation, batch of cases), or one 'unavailable' record per
        missing tool."""
        files = []
        for name in [*self.variants, *self.tools, *self.elsewhere]:
            if self.available(name):
                files += [
                    Layout.SCORES.format(dataset=self.dataset, tool=name, batch=batch)
                    for batch in self.batches
                ]
            else:
                files.append(Layout.UNAVAILABLE.format(dataset=self.dataset, tool=name))
        return files

    def edge_case_files(self, environment: str = STUDY_ENVIRONMENT) -> list[str]:
        """The reference's and every tool's edge-case record in the study's environment, or
        every tool's in another (missing tools say so)."""
        if environment == STUDY_ENVIRONMENT:
            names = [REFERENCE, *self.tools]
        else:
            names = [name for name in self.elsewhere if split_scored_name(name)[1] == environment]
        return [Layout.EDGE_CASES.format(tool=name) for name in names]

    def other_environments(self) -> list[str]:
        """The environments scored beside the study's, in the config's order."""
        return list(dict.fromkeys(split_scored_name(name)[1] for name in self.elsewhere))

    def timing_files(self) -> list[str]:
        """HD timing of the reference and every available tool."""
        return [
            Layout.TIMING.format(tool=name)
            for name in [REFERENCE, *self.tools]
            if self.available(name)
        ]

    def grid_check_masks(self) -> dict[str, list[str]]:
        """Per grid, the pairs tables of the grid check (its voxel sizes, in order)."""
        return {
            grid: [
                Layout.GRID_CHECK_MASKS.format(grid=grid, spacing=spacing)
                for spacing in self.check_spacings
            ]
            for grid in GRIDS
        }

    def grid_check_files(self) -> list[str]:
        """The reference's and every available tool's grid-check scores (none when the check
        is off: grid_check.pairs_per_category 0)."""
        if not self.check_per_category:
            return []
        return [
            Layout.GRID_CHECK.format(tool=name)
            for name in [REFERENCE, *self.tools]
            if self.available(name)
        ]

    def record_files(self) -> list[str]:
        """Every record beside the scores: edge cases in every environment, timing, grid
        check."""
        return [
            *self.edge_case_files(),
            *(path for env in self.other_environments() for path in self.edge_case_files(env)),
            *self.timing_files(),
            *self.grid_check_files(),
        ]

    def targets(self) -> list[str]:
        return [Layout.SCORES_TABLE, *self.record_files()]


def _batch_name(cases: Sequence[str]) -> str:
    """A batch's file name: its case alone, or its first and last case ("case_01-case_04")."""
    return cases[0] if len(cases) == 1 else f"{cases[0]}-{cases[-1]}"
