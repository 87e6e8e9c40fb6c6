"""The call harness: run one tool on one pair, never raise for the tool's own failures.

`invoke` validates the inputs (bad input is the caller's fault and raises ValueError), then
calls the adapter with Python warnings, logging warnings and stray prints captured, times the
call, and turns any exception into `Outcome.error`. Python tools run in this process: a
persistent worker would add a pickling round trip per call for masks of up to millions of
voxels and a second copy of torch in memory. Their `timeout` is a SIGALRM deadline instead
(`_deadline`); program tools get theirs through subprocess.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import signal
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from adapters.base import Adapter
from reference.keys import METRIC_KEYS


@dataclass
class Outcome:
    """What one call produced.

    values: metric key -> value, for the metrics the tool returned.
    error: the tool's error message (or why it is unavailable); None when it ran.
    warnings: warning texts the tool raised, logged or printed.
    seconds: wall time of the call (program tools: the whole process, files included).
    unavailable: the reason when the tool is not installed here, else None.
    """

    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    unavailable: str | None = None


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


class CallTimedOut(BaseException):
    """An in-process call ran past its deadline. A BaseException, like KeyboardInterrupt, so
    that a tool's own `except Exception` cannot swallow it."""


IMPORT_GRACE = 0.01
"""Seconds between checks of a deadline that fell inside an import."""


def _importing(frame) -> bool:
    """Whether `frame` or a caller runs import machinery (importlib's frozen bootstrap)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def _deadline(seconds: float):
    """Raise CallTimedOut in the block once `seconds` have passed (SIGALRM).

    Python runs signal handlers between bytecodes, so a call is interrupted at its next line
    of Python; one stuck inside a single C function is interrupted when that returns. Signals
    reach only the main thread: elsewhere (and on platforms without setitimer) the block runs
    without a deadline.

    An import is never interrupted: a module cut off half-way stays in sys.modules half
    initialised, and every later call of the process fails with it (a NameError inside VTK)
    or crashes. The deadline waits for the import to finish, checking every IMPORT_GRACE s.
    """
    if not (
        hasattr(signal, "setitimer")
        and math.isfinite(seconds)
        and threading.current_thread() is threading.main_thread()
    ):
        yield
        return

    def expire(signum, frame):
        if _importing(frame):
            signal.setitimer(signal.ITIMER_REAL, IMPORT_GRACE)
            return
        raise CallTimedOut(f"timed out after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
    files: tuple[str | Path, str | Path] | None = None,
) -> Outcome:
    """Run one tool on (a, b); the tool's failures become `Outcome.error`, never exceptions.

    `metrics` defaults to everything the tool supports; requested metrics the tool does not
    support are skipped (the scoring loop may ask every tool for every metric), unknown keys
    raise ValueError. `files`, the mask files (written by `maskio`) that hold a and b, are
    handed to program tools, which then read them instead of a copy written for the call.
    """
    adapter = resolve(adapter_or_name)
    voxel = check_pair(a, b, spacing)
    requested = adapter.metrics if metrics is None else tuple(metrics)
    unknown = sorted(set(requested) - set(METRIC_KEYS))
    if unknown:
        raise ValueError(f"unknown metric keys {unknown}; known: {METRIC_KEYS}")
    supported = tuple(m for m in adapter.metrics if m in requested)
    reason = adapter.unavailable()
    if reason is not None:
        return Outcome(error=f"unavailable: {reason}", unavailable=reason)
    if not supported:
        return Outcome()
    return _call(adapter, a, b, voxel, supported, percentile, tau, float(timeout), files)


def _call(adapter: Adapter, a, b, spacing, metrics, percentile, tau, timeout, files) -> Outcome:
    outcome = Outcome()
    log_handler = _WarningLogHandler()
    root_logger = logging.getLogger()
    printed = io.StringIO()
    root_logger.addHandler(log_handler)
    # Program tools get the timeout through subprocess; Python tools through a deadline.
    options = {"timeout": timeout, "files": files} if adapter.is_program else {}
    deadline = _deadline(math.inf if adapter.is_program else timeout)
    start = time.perf_counter()
    try:
        with (
            warnings.catch_warnings(record=True) as caught,
            contextlib.redirect_stdout(printed),
            contextlib.redirect_stderr(printed),
        ):
            warnings.simplefilter("always")
            try:
                with deadline:
                    values = adapter.compute(
                        a, b, spacing, metrics=metrics, percentile=percentile, tau=tau, **options
                    )
                outcome.values = {key: float(value) for key, value in values.items()}
            except Exception as error:  # noqa: BLE001 - any tool failure becomes a record
                outcome.error = f"{type(error).__name__}: {error}"
            except CallTimedOut as error:
                outcome.error = str(error)
    finally:
        outcome.seconds = time.perf_counter() - start
        root_logger.removeHandler(log_handler)
    texts = [str(item.message) for item in caught if not issubclass(item.category, _API_NOTICES)]
    texts += log_handler.messages
    texts += [line.strip() for line in printed.getvalue().splitlines() if "warn" in line.lower()]
    outcome.warnings = list(dict.fromkeys(texts))  # once each, in order of appearance
    return outcome
