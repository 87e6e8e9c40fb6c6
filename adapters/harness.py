"""The call harness: run one tool on one pair, never raise for the tool's own failures.

`invoke` (masks in memory) and `invoke_files` (mask files) validate the inputs (bad input is
the caller's fault and raises ValueError), then run the tool with its `CallSettings`: a
registry tool in a worker process of its environment (`adapters.worker`), which reads the
files itself, so a crash, a panic, a hang or runaway memory becomes `Outcome.error`; an
adapter that is ours and tested (`in_process`, the reference) in this process. Either way
`calls.run_in_process` makes the call: Python warnings, logging warnings and stray prints
captured, the call timed, any exception turned into `Outcome.error`. `identify` and
`describe` say what each tool is in an environment: its version, build, or why it cannot run.

It stands above the registry (`adapters.registry`), the calls and the workers, which never
import it; only `compare` and the package do.
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapters import worker
from adapters.base import TOOL_PATHS, Adapter
from adapters.calls import DEFAULT_SETTINGS, CallSettings, Outcome, run_in_process
from adapters.environments import STUDY_ENVIRONMENT, Environment
from adapters.environments import environment as named
from adapters.registry import resolve
from maskio import load_pair, write_mask
from vocabulary import METRIC_KEYS


def check_pair(a: np.ndarray, b: np.ndarray, spacing: Sequence[float]) -> tuple[float, ...]:
    """Fail early on masks or spacing no tool should see; return spacing as floats."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"masks differ in shape: a {a.shape}, b {b.shape}")
    if a.ndim not in (2, 3):
        raise ValueError(f"masks must be 2D or 3D, got {a.ndim} dimensions")
    for name, mask in (("a", a), ("b", b)):
        if mask.dtype != bool and not np.isin(mask, (0, 1)).all():
            raise ValueError(f"mask {name} is not binary (values other than 0 and 1)")
    values = tuple(float(s) for s in spacing)
    if len(values) != a.ndim:
        raise ValueError(f"spacing {values} has {len(values)} entries for {a.ndim}D masks")
    if not all(math.isfinite(s) and s > 0 for s in values):
        raise ValueError(f"spacing {values} must be finite and positive")
    return values


def _requested(adapter: Adapter, metrics: Sequence[str] | None) -> tuple[str, ...]:
    """Of `metrics` (default: all the tool supports), those the tool supports; requested
    metrics it does not support are skipped (the scoring loop may ask every tool for every
    metric), unknown keys raise ValueError."""
    requested = adapter.metrics if metrics is None else tuple(metrics)
    unknown = sorted(set(requested) - set(METRIC_KEYS))
    if unknown:
        raise ValueError(f"unknown metric keys {unknown}; known: {METRIC_KEYS}")
    return tuple(m for m in adapter.metrics if m in requested)


def invoke(
    adapter_or_name: Adapter | str,
    a: np.ndarray,
    b: np.ndarray,
    spacing: Sequence[float],
    *,
    metrics: Sequence[str] | None = None,
    settings: CallSettings = DEFAULT_SETTINGS,
) -> Outcome:
    """Run one tool on masks in memory; the tool's failures become `Outcome.error`.

    A tool that runs in a worker gets the masks as files written for the call (`maskio`),
    outside its timed call; `invoke_files` takes files that already exist.
    """
    adapter = resolve(adapter_or_name)
    voxel = check_pair(a, b, spacing)
    metrics = _requested(adapter, metrics)
    if adapter.in_process:
        return _in_process(adapter, a, b, voxel, metrics, settings)
    with tempfile.TemporaryDirectory(prefix=f"{adapter.name}-pair-") as folder:
        files = [
            write_mask(f"{folder}/{name}.nii.gz", m, voxel) for name, m in (("a", a), ("b", b))
        ]
        return invoke_files(adapter, *files, metrics=metrics, settings=settings)


def invoke_files(
    adapter_or_name: Adapter | str,
    path_a: str | Path,
    path_b: str | Path,
    *,
    label: int | None = None,
    metrics: Sequence[str] | None = None,
    settings: CallSettings = DEFAULT_SETTINGS,
) -> Outcome:
    """Run one tool on two mask files (of one grid; `label`: the voxels of that label in two
    label maps). A tool that is not `in_process` runs in a worker of the settings'
    environment's Python, which reads the files itself; files that are not such a pair raise
    ValueError naming them.
    """
    adapter = resolve(adapter_or_name)
    metrics = _requested(adapter, metrics)
    if adapter.in_process:
        pair = load_pair(path_a, path_b, label)
        return _in_process(adapter, pair.a, pair.b, pair.spacing, metrics, settings)
    where = named(adapter.runs_in(settings.environment))
    reason = where.unavailable()
    if reason is not None:
        return Outcome(error=f"unavailable: {reason}", unavailable=reason)
    if not metrics:
        return Outcome()
    return worker.call(
        adapter,
        where.python,
        path_a,
        path_b,
        label=label,
        metrics=metrics,
        settings=settings,
        tool_paths=TOOL_PATHS,
    )


def _in_process(adapter, a, b, spacing, metrics, settings) -> Outcome:
    reason = adapter.unavailable()
    if reason is not None:
        return Outcome(error=f"unavailable: {reason}", unavailable=reason)
    if not metrics:
        return Outcome()
    return run_in_process(adapter, a, b, spacing, metrics=metrics, settings=settings)


@dataclass(frozen=True)
class Identity:
    """What made a tool's outputs in one environment: its version ("" if none), why it is
    unavailable (None when it runs), and its build (`Adapter.build`)."""

    version: str
    unavailable: str | None
    build: str = ""

    @classmethod
    def of(cls, state: dict) -> Identity:
        """From a worker's `state_of` answer; one without a "build" (not asked for, or a
        failed start's) leaves it ""."""
        return cls(state["version"] or "", state["unavailable"], state.get("build", ""))


def identify(
    adapters: Sequence[Adapter | str],
    environment: str = STUDY_ENVIRONMENT,
    *,
    build: bool = True,
) -> dict[str, Identity]:
    """Name -> the tool's `Identity` in `environment` (without `build`, its build left ""
    and no file hashed). A tool whose Python is this process's (the study's environment) is
    asked here; the others in one process of each Python they run in (`Adapter.runs_in`).
    Neither imports a tool: versions come from package metadata or the program itself."""
    tools = [resolve(adapter) for adapter in adapters]
    states: dict[str, Identity] = {}
    elsewhere: dict[Environment, list[Adapter]] = {}
    for tool in tools:
        where = named(tool.runs_in(environment))
        reason = where.unavailable()
        if reason is not None:
            states[tool.name] = Identity("", reason)
        elif tool.in_process or where.python == sys.executable:
            states[tool.name] = Identity.of(worker.state_of(tool, build=build))
        else:
            elsewhere.setdefault(where, []).append(tool)
    for where, group in elsewhere.items():
        for tool, state in zip(group, where.describe(group, TOOL_PATHS, build=build), strict=True):
            states[tool.name] = Identity.of(state)
    return {tool.name: states[tool.name] for tool in tools}


def describe(
    adapters: Sequence[Adapter | str], environment: str = STUDY_ENVIRONMENT
) -> dict[str, tuple[str, str | None]]:
    """Name -> (version, None) for each tool usable in `environment`, (version or "", why
    not) for the others (`identify` without the builds, which it does not compute: every
    scoring, probing and timing job asks for its tool's version)."""
    return {
        name: (identity.version, identity.unavailable)
        for name, identity in identify(adapters, environment, build=False).items()
    }
