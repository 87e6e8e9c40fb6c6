"""The call harness: run one tool on one pair, never raise for the tool's own failures.

`invoke` (masks in memory) and `invoke_files` (mask files) validate the inputs (bad input is
the caller's fault and raises ValueError), then run the tool: a registry tool in a worker
process of its environment (`adapters.worker`), which reads the files itself, so a crash, a
panic, a hang or runaway memory becomes `Outcome.error`; an adapter that is ours and tested
(`in_process`, the reference) in this process. Either way `run_in_process` makes the call:
Python warnings, logging warnings and stray prints captured, the call timed, any exception
turned into `Outcome.error`.
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import math
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adapters.base import Adapter, MetricsFailed
from adapters.environments import STUDY_ENVIRONMENT
from reference.keys import METRIC_KEYS

DEFAULT_MEMORY_GB = 8.0
"""Address-space limit of a worker unless the config says otherwise: above the 3.9 GB
seg-metrics reached on a scan-sized grid plus the 1.6 GB of address space that importing
torch, MONAI and every other tool takes, below what a 2-core, 24 GB machine can give two
jobs at once."""

LARGE_MASK_VOXELS = 1_000_000
"""Before a call on masks larger than this, the previous calls' garbage is collected: some tools
(Metrics Reloaded) leave reference cycles holding about 0.5 GB per scan-sized call, which would
otherwise pile up past a job's memory (measured: 1.9 GB with collection, 2.9 GB after three
calls and 5.3 GB after ten without). On cropped masks the collection would cost more than the
call."""


@dataclass
class Outcome:
    """What one call produced.

    values: metric key -> value, for the metrics the tool returned.
    error: the tool's error message (or why it is unavailable); None when it ran.
    failed: metric key -> the tool's error, for metrics that failed on their own while
        others have values (`adapters.base.MetricsFailed`).
    warnings: warning texts the tool raised, logged or printed.
    seconds: wall time of the call (program tools: the whole process, files included).
    unavailable: the reason when the tool is not installed here, else None.
    """

    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    failed: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    unavailable: str | None = None

    def error_of(self, metric: str) -> str | None:
        """Why `metric` has no value: the call's error or the metric's own; None if none."""
        return self.error or self.failed.get(metric)


_API_NOTICES = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
"""Warnings about a library's own API (numpy's `in1d`, scipy namespaces, MONAI arguments):
they say nothing about the masks, appear on every call, and would hide the warnings the
edge-case table is about, so they are not recorded."""


class _WarningLogHandler(logging.Handler):
    """Collects log records of level WARNING and above (seg-metrics warns through logging)."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


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


def resolve(adapter_or_name: Adapter | str) -> Adapter:
    """The adapter itself, or the registry entry of that name (ValueError if unknown)."""
    if isinstance(adapter_or_name, Adapter):
        return adapter_or_name
    from adapters import REGISTRY

    if adapter_or_name not in REGISTRY:
        raise ValueError(f"unknown tool {adapter_or_name!r}; known: {sorted(REGISTRY)}")
    return REGISTRY[adapter_or_name]


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
    percentile: float = 95,
    tau: float = 2.0,
    timeout: float = 600.0,
    environment: str = STUDY_ENVIRONMENT,
    memory_gb: float | None = DEFAULT_MEMORY_GB,
) -> Outcome:
    """Run one tool on masks in memory; the tool's failures become `Outcome.error`.

    A tool that runs in a worker gets the masks as files written for the call (`maskio`),
    outside its timed call; `invoke_files` takes files that already exist.
    """
    from maskio import write_mask

    adapter = resolve(adapter_or_name)
    voxel = check_pair(a, b, spacing)
    metrics = _requested(adapter, metrics)
    if adapter.in_process:
        return _in_process(adapter, a, b, voxel, metrics, percentile, tau, timeout)
    with tempfile.TemporaryDirectory(prefix=f"{adapter.name}-pair-") as folder:
        files = [
            write_mask(f"{folder}/{name}.nii.gz", m, voxel) for name, m in (("a", a), ("b", b))
        ]
        return invoke_files(
            adapter,
            *files,
            metrics=metrics,
            percentile=percentile,
            tau=tau,
            timeout=timeout,
            environment=environment,
            memory_gb=memory_gb,
        )


def invoke_files(
    adapter_or_name: Adapter | str,
    path_a: str | Path,
    path_b: str | Path,
    *,
    label: int | None = None,
    metrics: Sequence[str] | None = None,
    percentile: float = 95,
    tau: float = 2.0,
    timeout: float = 600.0,
    environment: str = STUDY_ENVIRONMENT,
    memory_gb: float | None = DEFAULT_MEMORY_GB,
) -> Outcome:
    """Run one tool on two mask files (of one grid; `label`: the voxels of that label in two
    label maps). A tool that is not `in_process` runs in a worker of `environment`'s Python,
    which reads the files itself; files that are not such a pair raise ValueError naming them.
    """
    from adapters import worker
    from adapters.base import TOOL_PATHS
    from adapters.environments import environment as named

    adapter = resolve(adapter_or_name)
    metrics = _requested(adapter, metrics)
    if adapter.in_process:
        from maskio import load_pair

        pair = load_pair(path_a, path_b, label)
        return _in_process(adapter, pair.a, pair.b, pair.spacing, metrics, percentile, tau, timeout)
    where = named(adapter.runs_in(environment))
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
        percentile=percentile,
        tau=tau,
        timeout=timeout,
        memory_gb=memory_gb,
        tool_paths=TOOL_PATHS,
    )


def _in_process(adapter, a, b, spacing, metrics, percentile, tau, timeout) -> Outcome:
    reason = adapter.unavailable()
    if reason is not None:
        return Outcome(error=f"unavailable: {reason}", unavailable=reason)
    if not metrics:
        return Outcome()
    return run_in_process(
        adapter, a, b, spacing, metrics=metrics, percentile=percentile, tau=tau, timeout=timeout
    )


def run_in_process(
    adapter: Adapter,
    a: np.ndarray,
    b: np.ndarray,
    spacing: Sequence[float],
    *,
    metrics: Sequence[str],
    percentile: float,
    tau: float,
    timeout: float,
    files: tuple[str | Path, str | Path] | None = None,
) -> Outcome:
    """Call the adapter here, on validated masks; whatever it raises becomes the error.

    Program tools get `timeout` for their subprocess and `files`, the mask files holding a
    and b, which they then read instead of a copy written for the call. Any exception counts,
    BaseExceptions too (a Rust tool's panic arrives as one), except KeyboardInterrupt.
    """
    outcome = Outcome()
    log_handler = _WarningLogHandler()
    root_logger = logging.getLogger()
    printed = io.StringIO()
    root_logger.addHandler(log_handler)
    options = {"timeout": timeout, "files": files} if adapter.is_program else {}
    if math.prod(np.shape(a)) > LARGE_MASK_VOXELS:
        gc.collect()  # outside the timed call
    start = time.perf_counter()
    try:
        with (
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stdout(printed),
            contextlib.redirect_stderr(printed),
        ):
            warnings.simplefilter("always")
            try:
                values = adapter.compute(
                    a, b, spacing, metrics=metrics, percentile=percentile, tau=tau, **options
                )
                outcome.values = {key: float(value) for key, value in values.items()}
            except MetricsFailed as partial:
                outcome.values, outcome.failed = partial.values, partial.errors
                if not partial.values:
                    outcome.error = str(partial)
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - any tool failure becomes a record
                outcome.error = f"{type(error).__name__}: {error}"
    finally:
        outcome.seconds = time.perf_counter() - start
        root_logger.removeHandler(log_handler)
    texts = [str(item.message) for item in caught if not issubclass(item.category, _API_NOTICES)]
    texts += log_handler.messages
    texts += [line.strip() for line in printed.getvalue().splitlines() if "warn" in line.lower()]
    outcome.warnings = list(dict.fromkeys(texts))  # once each, in order of appearance
    return outcome


@dataclass(frozen=True)
class Identity:
    """What made a tool's outputs in one environment: its version ("" if none), why it is
    unavailable (None when it runs), and its build (`Adapter.build`)."""

    version: str
    unavailable: str | None
    build: str = ""

    @classmethod
    def of(cls, state: dict) -> Identity:
        """From a worker's `state_of(..., build=True)` answer (or a failed start's, which
        has no build)."""
        return cls(state["version"] or "", state["unavailable"], state.get("build", ""))


def identify(
    adapters: Sequence[Adapter | str], environment: str = STUDY_ENVIRONMENT
) -> dict[str, Identity]:
    """Name -> the tool's `Identity` in `environment`. A tool whose Python is this process's
    (the study's environment) is asked here; the others in one process of each Python they
    run in (`Adapter.runs_in`). Neither imports a tool: versions come from package metadata
    or the program itself."""
    from adapters import worker
    from adapters.base import TOOL_PATHS
    from adapters.environments import environment as named

    tools = [resolve(adapter) for adapter in adapters]
    states: dict[str, Identity] = {}
    elsewhere: dict[str, list[Adapter]] = {}
    for tool in tools:
        where = named(tool.runs_in(environment))
        reason = where.unavailable()
        if reason is not None:
            states[tool.name] = Identity("", reason)
        elif tool.in_process or where.python == sys.executable:
            states[tool.name] = Identity.of(worker.state_of(tool, build=True))
        else:
            elsewhere.setdefault(where.python, []).append(tool)
    for python, group in elsewhere.items():
        for tool, state in zip(group, worker.describe(group, python, TOOL_PATHS), strict=True):
            states[tool.name] = Identity.of(state)
    return {tool.name: states[tool.name] for tool in tools}


def describe(
    adapters: Sequence[Adapter | str], environment: str = STUDY_ENVIRONMENT
) -> dict[str, tuple[str, str | None]]:
    """Name -> (version, None) for each tool usable in `environment`, (version or "", why
    not) for the others (`identify` without the builds)."""
    return {
        name: (identity.version, identity.unavailable)
        for name, identity in identify(adapters, environment).items()
    }
