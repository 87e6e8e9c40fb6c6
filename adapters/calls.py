"""One tool call: the settings it is made with, what it produced, and the call itself.

`CallSettings` is the one value of a call's settings (percentile, tau, timeout, memory limit,
environment); the harness, the workers, the scoring loop and the workflow rules (as the rerun
key of a tool's jobs) all take it whole. `run_in_process` makes the call wherever it runs (in
a tool's worker, or here for the reference) and turns whatever the tool does into an
`Outcome`. It sits between the adapter classes (`adapters.base`) and the two places a call
starts from, the worker (`adapters.worker`) and the harness (`adapters.harness`), so the
worker needs nothing of the harness.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import logging
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adapters.base import Adapter, MetricsFailed
from adapters.environments import STUDY_ENVIRONMENT
from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU

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


@dataclass(frozen=True)
class CallSettings:
    """How a tool is called, besides the masks and the metrics asked for.

    percentile: the percentile of HD95 (HDp).
    tau: the tolerance of NSD and BIoU, in mm.
    timeout: seconds a call may take before its worker is killed.
    memory_gb: the worker's address-space limit in GB (None: no limit).
    environment: the Python environment the tool runs in (`adapters.environments`).
    """

    percentile: float = DEFAULT_PERCENTILE
    tau: float = DEFAULT_TAU
    timeout: float = 600.0
    memory_gb: float | None = DEFAULT_MEMORY_GB
    environment: str = STUDY_ENVIRONMENT

    def as_key(self, *fields: str) -> dict:
        """The settings as plain values (of `fields` only, when given), for the JSON of a
        worker's requests and for the params a Snakemake job is keyed on (Snakemake compares
        the repr of plain values; an object's would not count). `CallSettings(**key)`
        reads it back, the fields left out at their defaults."""
        whole = dataclasses.asdict(self)
        return {name: whole[name] for name in fields} if fields else whole


DEFAULT_SETTINGS = CallSettings()
"""The settings of a call that names none (every field at its default): the default argument
of the functions that take settings."""


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
    brackets: metric key -> (lower, upper) proven to hold its exact value, for the metrics
        of a tool that proves them (`adapters.base.Bracketed`: the reference).
    """

    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    failed: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    unavailable: str | None = None
    brackets: dict[str, tuple[float, float]] = field(default_factory=dict)

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


def run_in_process(
    adapter: Adapter,
    a: np.ndarray,
    b: np.ndarray,
    spacing: Sequence[float],
    *,
    metrics: Sequence[str],
    settings: CallSettings,
    files: tuple[str | Path, str | Path] | None = None,
) -> Outcome:
    """Call the adapter here, on validated masks; whatever it raises becomes the error.

    Program tools get the settings' timeout for their subprocess and `files`, the mask files
    holding a and b, which they then read instead of a copy written for the call; the memory
    limit and the environment are the process's own, set by whoever started it. Any exception
    counts, BaseExceptions too (a Rust tool's panic arrives as one), except KeyboardInterrupt.
    """
    outcome = Outcome()
    log_handler = _WarningLogHandler()
    root_logger = logging.getLogger()
    printed = io.StringIO()
    root_logger.addHandler(log_handler)
    options = {"timeout": settings.timeout, "files": files} if adapter.is_program else {}
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
                    a,
                    b,
                    spacing,
                    metrics=metrics,
                    percentile=settings.percentile,
                    tau=settings.tau,
                    **options,
                )
                outcome.values = {key: float(value) for key, value in values.items()}
                outcome.brackets = dict(getattr(values, "brackets", {}))
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
