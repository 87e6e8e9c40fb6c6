"""Every tool call in a worker process of the tool's environment.

A tool that segfaults, panics, hangs or eats memory kills only its worker: the call becomes an
`Outcome` whose error says what happened ("killed by SIGSEGV", "timed out after 600 s",
"MemoryError ... memory limit of 8 GB"), and the next call starts a fresh worker. The parent
never holds a tool's libraries, so one tool cannot break another's calls either.

The parent (`call`) keeps one worker per (adapter, environment) and talks to it in JSON lines:

    parent -> worker   {"adapter": "adapters.monai:MONAI", "tool_paths": {...}}     once
    worker -> parent   {"version": ..., "unavailable": ...}                          ready
    parent -> worker   {"path_a", "path_b", "label", "metrics",
                        "settings": CallSettings.as_key()}                           a call
    worker -> parent   {"started": true}       the masks are read, the tool is called
    worker -> parent   {"outcome": {...}} or {"invalid": "<file>: <problem>"}

`python -m adapters.worker --describe` answers one question instead: the state of the adapters
named on stdin (`Environment.describe` asks it of an environment's Python).

The worker reads the study's own mask files (`maskio.load_pair`: no arrays cross the pipe) and
times the call inside itself (`calls.run_in_process`), so `seconds` stays the tool's own. The
per-call timeout runs from the worker's "started": reading a scan-sized file is not the tool's
time. The memory limit is the worker's address-space limit (RLIMIT_AS), so a runaway
allocation fails inside the tool, as a MemoryError, instead of taking the machine.
"""

from __future__ import annotations

import atexit
import importlib
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from adapters.base import Adapter, configure
from adapters.calls import CallSettings, Outcome, run_in_process
from adapters.environments import (
    START_SECONDS,
    NestedWorker,
    adapter_path,
    child_variables,
    environment_named_by,
)
from maskio import InputError, load_pair

KILL_GRACE_SECONDS = 5.0
"""Added to the call's timeout before the worker is killed: program tools time their own
subprocess out at the timeout and report it in their own words first."""


class InvalidInput(ValueError):
    """The files of a call are not a pair of masks on one grid (the worker's words)."""


def _limit_worker(memory_bytes: int | None):
    """preexec_fn: the worker's address-space limit, and death with its parent (Linux), so a
    worker stuck in a tool never outlives the job that started it."""

    def apply() -> None:
        if memory_bytes is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return apply


class WorkerDied(RuntimeError):
    """The worker ended or was killed; the message says how."""


class Worker:
    """One worker process running one adapter in one environment's Python."""

    def __init__(
        self, adapter: Adapter, python: str, memory_gb: float | None, tool_paths: Mapping
    ) -> None:
        memory = None if memory_gb is None else int(memory_gb * 2**30)
        self.log = tempfile.TemporaryFile()  # the worker's stderr: never fills a pipe
        self.process = subprocess.Popen(
            [python, "-m", "adapters.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env={
                **child_variables(f"worker of environment {environment_named_by(python)!r}"),
                "PYTHONFAULTHANDLER": "1",
            },
            preexec_fn=_limit_worker(memory),
        )
        self._buffer = b""
        self.send({"adapter": adapter_path(adapter), "tool_paths": dict(tool_paths)})
        self.ready = self.receive(START_SECONDS)

    def send(self, message: Mapping) -> None:
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerDied(self._death()) from None

    def receive(self, seconds: float) -> dict:
        """The worker's next message; WorkerDied if it ends or says nothing for `seconds`."""
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    self.stop()
                    raise WorkerDied(f"timed out after {seconds:g} s (worker killed)")
                chunk = os.read(self.process.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise WorkerDied(self._death())
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _death(self) -> str:
        """How the worker ended, in words, with the last line it wrote to stderr."""
        code = self.process.wait()
        if code < 0:
            said = f"killed by {signal.Signals(-code).name}"
            if -code == signal.SIGKILL:
                said += " (out of memory, or killed from outside)"
        else:
            said = f"exited with code {code}"
        self.log.seek(0)
        lines = [line.strip() for line in self.log.read().decode(errors="replace").splitlines()]
        last = next((line for line in reversed(lines) if line), "")
        return f"worker {said}" + (f": {last[-300:]}" if last else "")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()
        self.log.close()


_WORKERS: dict[tuple[str, str, float | None], Worker] = {}


def _worker(adapter: Adapter, python: str, memory_gb: float | None, tool_paths) -> Worker:
    key = (adapter_path(adapter), python, memory_gb)
    worker = _WORKERS.get(key)
    if worker is None or worker.process.poll() is not None:
        worker = _WORKERS[key] = Worker(adapter, python, memory_gb, tool_paths)
    return worker


def _retire(adapter: Adapter, python: str, memory_gb: float | None) -> None:
    worker = _WORKERS.pop((adapter_path(adapter), python, memory_gb), None)
    if worker is not None:
        worker.stop()


@atexit.register
def stop_all() -> None:
    """Stop every worker (at exit; tests call it to start the next test afresh)."""
    while _WORKERS:
        _WORKERS.popitem()[1].stop()


def _ready(adapter: Adapter, python: str, memory_gb: float | None, tool_paths) -> dict:
    """The worker's {"version", "unavailable"}; a worker that cannot start makes the tool
    unavailable, with how it died."""
    try:
        return _worker(adapter, python, memory_gb, dict(tool_paths)).ready
    except WorkerDied as died:
        _retire(adapter, python, memory_gb)
        return {"version": None, "unavailable": f"its worker could not start: {died}"}


def call(
    adapter: Adapter,
    python: str,
    path_a: str | Path,
    path_b: str | Path,
    *,
    metrics: Sequence[str],
    settings: CallSettings,
    label: int | None = None,
    tool_paths: Mapping | None = None,
) -> Outcome:
    """One tool call in the adapter's worker of `python` (the settings' environment's), with
    the settings' memory limit; a dead or killed worker becomes the error.

    Raises InvalidInput when the files are not a pair of masks on one grid: the caller's
    mistake, not the tool's.
    """
    memory_gb, timeout = settings.memory_gb, settings.timeout
    ready = _ready(adapter, python, memory_gb, tool_paths or {})
    if ready["unavailable"] is not None:
        return Outcome(
            error=f"unavailable: {ready['unavailable']}", unavailable=ready["unavailable"]
        )
    request = {
        "path_a": str(path_a),
        "path_b": str(path_b),
        "label": label,
        "metrics": list(metrics),
        "settings": settings.as_key(),
    }
    worker = _worker(adapter, python, memory_gb, tool_paths or {})
    try:
        worker.send(request)
        started = worker.receive(START_SECONDS)
        if "invalid" in started:
            raise InvalidInput(started["invalid"])
        answer = worker.receive(timeout + KILL_GRACE_SECONDS if math.isfinite(timeout) else 1e9)
    except WorkerDied as died:
        _retire(adapter, python, memory_gb)
        return Outcome(error=str(died))
    return Outcome(**answer["outcome"])


# --- the worker's side ------------------------------------------------------------------------


def _memory_note(error: str, memory_gb: float | None) -> str:
    if memory_gb is None or not error.startswith("MemoryError"):
        return error
    return f"{error} (exceeded the worker's memory limit of {memory_gb:g} GB)"


def _load(path: str) -> Adapter:
    """The adapter a 'module:Class' path names, instantiated."""
    module, _, qualname = path.partition(":")
    return getattr(importlib.import_module(module), qualname)()


def state_of(adapter: Adapter, *, build: bool = False) -> dict:
    """{"version", "unavailable"} of an adapter in this process's environment, and with
    `build` its "build" (`Adapter.build`, a digest of files: asked only where outputs are
    keyed, not by every worker that starts)."""
    reason = adapter.unavailable()
    state = {"version": adapter.version() if reason is None else None, "unavailable": reason}
    return state | ({"build": adapter.build() if reason is None else ""} if build else {})


def describe_here() -> None:
    """--describe: the state of each adapter named on stdin, its build too when the request
    asks for it, as JSON on stdout."""
    request = json.load(sys.stdin)
    configure(request["tool_paths"])
    build = request["build"]
    json.dump([state_of(_load(path), build=build) for path in request["adapters"]], sys.stdout)


def serve() -> None:
    """The worker's loop: import the adapter, answer calls until stdin closes.

    The protocol keeps a descriptor of its own; file descriptor 1 is pointed at stderr, so
    that whatever a tool prints, from Python or from C, cannot corrupt the answers.
    """
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def answer(message: Mapping) -> None:
        channel.write(json.dumps(message) + "\n")

    hello = json.loads(sys.stdin.readline())
    configure(hello["tool_paths"])
    adapter = _load(hello["adapter"])
    answer(state_of(adapter))
    for line in sys.stdin:
        request = json.loads(line)
        try:
            pair = load_pair(request["path_a"], request["path_b"], request["label"])
        except (InputError, OSError) as error:
            answer({"invalid": str(error)})
            continue
        answer({"started": True})
        settings = CallSettings(**request["settings"])
        outcome = run_in_process(
            adapter,
            pair.a,
            pair.b,
            pair.spacing,
            metrics=request["metrics"],
            settings=settings,
            files=(request["path_a"], request["path_b"]) if request["label"] is None else None,
        )
        if outcome.error is not None:
            outcome.error = _memory_note(outcome.error, settings.memory_gb)
        answer({"outcome": asdict(outcome)})


def main(argv: Sequence[str]) -> None:
    """A describe (`--describe`) or worker process; one that would start another of its own
    kind stops with that one line on stderr, which its parent reports."""
    try:
        describe_here() if list(argv) == ["--describe"] else serve()
    except NestedWorker as error:
        sys.exit(f"adapters.worker: {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
