"""What the analysis reads of a study's configuration, as one typed value.

Built once from the validated configuration (study.pipeline.config.load_config fills every
default from the schema and the metric vocabulary), then passed down: nothing below reads the
configuration dict or restates a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adapters.environments import STUDY_ENVIRONMENT
from study.records import grid_labels
from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU


@dataclass(frozen=True)
class AnalysisSettings:
    """The analysis's view of one study's configuration.

    The field defaults describe a run known only by its files (`study cards` without a
    configuration): no configured tools or grids (tables then keep the scores' own order) and
    the vocabulary's default percentile and tau.
    """

    dataset: str = ""
    source: str = ""  # where the mask pairs come from: synthetic, manifest or lidc ("" unknown)
    tools: tuple[str, ...] = ()  # compared with the reference, in the configured order
    cross_checks: tuple[str, ...] = ()  # scored like a tool, reported as a check
    grid_labels: tuple[str, ...] = ()  # spacing labels in configured order, native grid last
    n_voxel_sizes: int = 0  # the configured voxel sizes (the native grid is not one)
    percentile: float = DEFAULT_PERCENTILE  # p of HDp
    tau_mm: float = DEFAULT_TAU  # tolerance of NSD and BIoU
    scored_metrics: tuple[str, ...] = ()
    environments: tuple[str, ...] = (STUDY_ENVIRONMENT,)  # the study's own first
    meshings: tuple[str, ...] = ()  # the reference's meshings scored

    @classmethod
    def from_config(cls, config: Mapping) -> AnalysisSettings:
        """The settings of a validated configuration (every key present)."""
        metrics = config["metrics"]
        return cls(
            dataset=config["dataset"]["name"],
            source=config["dataset"]["source"],
            tools=tuple(config["tools"]),
            cross_checks=tuple(config["cross_checks"]),
            grid_labels=tuple(grid_labels(config)),
            n_voxel_sizes=len(config["voxel_sizes"]),
            percentile=metrics["percentile"],
            tau_mm=metrics["tau_mm"],
            scored_metrics=tuple(metrics["scored"]),
            environments=tuple(config["environments"]),
            meshings=tuple(config["reference"]["meshings"]),
        )

    @property
    def other_environments(self) -> tuple[str, ...]:
        """The environments scored beside the study's own (the paper's versions, ...)."""
        return self.environments[1:]

    def present_tools(self, tools_scored) -> list[str]:
        """The configured tools that were scored (in `tools_scored`), in configured order."""
        scored = set(tools_scored)
        return [tool for tool in self.tools if tool in scored]

    def present_tools_and_checks(self, tools_scored) -> list[str]:
        """The configured tools, then the cross-checks, that were scored."""
        scored = set(tools_scored)
        return [tool for tool in (*self.tools, *self.cross_checks) if tool in scored]
