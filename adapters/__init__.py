"""Thin, faithful adapters for the segmentation-metric tools the study compares.

`REGISTRY` maps a short name to its adapter; `STUDY_TOOLS` are the eleven tools in the paper's
table order; `CROSS_CHECKS` are kept apart (the authors' own MeshMetrics package).
`invoke` runs one tool on one mask pair and records values, error, warnings and seconds.
Adding a tool: one module with an `Adapter` subclass and one line in `_ADAPTERS` below.
"""

from __future__ import annotations

from adapters.anima import Anima
from adapters.base import Adapter, ToolError, configure
from adapters.deepmind import DeepMind
from adapters.evaluatesegmentation import EvaluateSegmentation
from adapters.harness import Outcome, check_pair, invoke, resolve
from adapters.medpy import MedPy
from adapters.meshmetrics import MeshMetrics
from adapters.metricsreloaded import MetricsReloaded
from adapters.miseval import MISeval
from adapters.monai import MONAI
from adapters.plastimatch import Plastimatch
from adapters.pymia import Pymia
from adapters.segmetrics import SegMetrics
from adapters.simpleitk import SimpleITK

_ADAPTERS: tuple[Adapter, ...] = (
    Anima(), EvaluateSegmentation(), DeepMind(), MedPy(), MetricsReloaded(), MISeval(),
    MONAI(), Plastimatch(), Pymia(), SegMetrics(), SimpleITK(), MeshMetrics(),
)

REGISTRY: dict[str, Adapter] = {adapter.name: adapter for adapter in _ADAPTERS}

STUDY_TOOLS: tuple[str, ...] = (
    "anima", "evaluatesegmentation", "deepmind", "medpy", "metricsreloaded", "miseval",
    "monai", "plastimatch", "pymia", "segmetrics", "simpleitk",
)
"""The eleven tools, in the order of the paper's tables."""

CROSS_CHECKS: tuple[str, ...] = ("meshmetrics",)
"""Not scored as tools: cross-checks of the reference."""

__all__ = [
    "Adapter", "CROSS_CHECKS", "Outcome", "REGISTRY", "STUDY_TOOLS", "ToolError",
    "check_pair", "configure", "invoke", "resolve",
]
