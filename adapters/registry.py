"""The registry: every tool the study knows, by its short name.

`REGISTRY` maps a short name to its adapter: the paper's eleven tools in the paper's table
order, then the tools the study added since (`Adapter.in_paper` False), then the cross-check.
It is the one list of tools: `STUDY_TOOLS` (role "tool"), `PAPER_TOOLS` and `LATER_TOOLS` (its
two groups) and `CROSS_CHECKS` (role "cross-check", the authors' own MeshMetrics package) are
read off it; a study's `tools: all` means `STUDY_TOOLS`, `tools: paper` means `PAPER_TOOLS`.
Adding a tool: one module with an `Adapter` subclass and one line in `_ADAPTERS` below.
"""

from __future__ import annotations

from adapters.anima import Anima
from adapters.base import Adapter
from adapters.deepmind import DeepMind
from adapters.evaluatesegmentation import EvaluateSegmentation
from adapters.grandchallenge import GrandChallenge
from adapters.medpy import MedPy
from adapters.meshmetrics import MeshMetrics
from adapters.metricsreloaded import MetricsReloaded
from adapters.mikan import Mikan
from adapters.miseval import MISeval
from adapters.monai import MONAI
from adapters.panoptica import Panoptica
from adapters.plastimatch import Plastimatch
from adapters.pymia import Pymia
from adapters.segauge import Segauge
from adapters.segmetrics import SegMetrics
from adapters.simpleitk import SimpleITK
from adapters.skimage import ScikitImage
from adapters.torchmetrics import TorchMetrics

_ADAPTERS: tuple[Adapter, ...] = (
    Anima(),
    EvaluateSegmentation(),
    DeepMind(),
    MedPy(),
    MetricsReloaded(),
    MISeval(),
    MONAI(),
    Plastimatch(),
    Pymia(),
    SegMetrics(),
    SimpleITK(),
    TorchMetrics(),
    ScikitImage(),
    Mikan(),
    Panoptica(),
    GrandChallenge(),
    Segauge(),
    MeshMetrics(),
)

REGISTRY: dict[str, Adapter] = {adapter.name: adapter for adapter in _ADAPTERS}

_TOOLS = [name for name, adapter in REGISTRY.items() if adapter.role == "tool"]

PAPER_TOOLS: tuple[str, ...] = tuple(name for name in _TOOLS if REGISTRY[name].in_paper)
"""The eleven tools of the paper, in the order of its tables."""

LATER_TOOLS: tuple[str, ...] = tuple(name for name in _TOOLS if not REGISTRY[name].in_paper)
"""The tools the study added since the paper: tables and figures show them after the eleven."""

STUDY_TOOLS: tuple[str, ...] = PAPER_TOOLS + LATER_TOOLS
"""The tools the study compares with the reference: the paper's, then the later ones, each
group in registry order, wherever in the registry a tool's line stands."""

CROSS_CHECKS: tuple[str, ...] = tuple(
    name for name, adapter in REGISTRY.items() if adapter.role == "cross-check"
)
"""Scored like tools, reported as cross-checks of the reference."""


def resolve(adapter_or_name: Adapter | str) -> Adapter:
    """The adapter itself, or the registry entry of that name (ValueError if unknown)."""
    if isinstance(adapter_or_name, Adapter):
        return adapter_or_name
    if adapter_or_name not in REGISTRY:
        raise ValueError(f"unknown tool {adapter_or_name!r}; known: {sorted(REGISTRY)}")
    return REGISTRY[adapter_or_name]
