"""Thin, faithful adapters for the segmentation-metric tools the study compares.

The registry (`adapters.registry`) is the one list of tools: `REGISTRY` maps a short name to
its adapter, and `STUDY_TOOLS`, `PAPER_TOOLS`, `LATER_TOOLS` and `CROSS_CHECKS` are read off it.
`invoke` / `invoke_files` run one tool on one mask pair with one `CallSettings`, in a worker
process of the tool's environment (`adapters.worker`), and record values, error, warnings and
seconds in an `Outcome`.

The modules' layers, lowest first, each importing only those below it: `environments` (where
a tool runs), `base` (what an adapter is), the tool modules and `registry`, `calls` (the
settings, the outcome, the call itself), `worker` (a tool's process), `harness` (`invoke`,
`identify`); this package re-exports what callers use.
"""

from __future__ import annotations

from adapters.base import Adapter, ToolError, configure
from adapters.calls import CallSettings, Outcome
from adapters.harness import (
    Identity,
    check_pair,
    describe,
    identify,
    invoke,
    invoke_files,
)
from adapters.registry import (
    CROSS_CHECKS,
    LATER_TOOLS,
    PAPER_TOOLS,
    REGISTRY,
    STUDY_TOOLS,
    resolve,
)

__all__ = [
    "Adapter",
    "CROSS_CHECKS",
    "CallSettings",
    "Identity",
    "LATER_TOOLS",
    "Outcome",
    "PAPER_TOOLS",
    "REGISTRY",
    "STUDY_TOOLS",
    "ToolError",
    "check_pair",
    "configure",
    "describe",
    "identify",
    "invoke",
    "invoke_files",
    "resolve",
]
