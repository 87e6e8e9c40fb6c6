"""The Python environments a tool can be scored in: today's, and the paper's versions.

`study` is the environment running the study (`.venv`, built by `make`): today's pinned tool
versions. `paper` holds the versions the paper used (its pins: `workflow/envs/paper.txt`),
built by `make env-paper` into `.envs/paper/`; scoring a tool there tells how far its results
moved since the paper, and which of today's failures are the environment's (numpy 2), not the
tool's. The adapter code is the same in every environment: a worker of the environment's
Python imports it from this project (`python_path`, `adapter_path`).

This module is the bottom of the adapters' layers (environments <- base <- calls <- worker <-
harness): an adapter asked from the study for a tool that lives in another environment asks
that environment's Python (`Environment.describe`) without needing the layers above.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENVIRONMENTS_DIR = REPO / ".envs"
"""Where `make env-<name>` builds the environments other than the study's own."""

WORKER_DEPTH = "ADAPTERS_WORKER_DEPTH"
"""Set to 1 for every describe and worker process of an environment (`child_variables`): such
a process starts no other, so an environment that fails to recognise itself makes one
one-line error, not a chain of processes each asking the next (1,145 processes and 23 GB in
three minutes, with .envs/panoptica a symbolic link, before environments were compared
resolved)."""

START_SECONDS = 300.0
"""Longest wait for a Python of an environment to start (interpreter, numpy, SimpleITK) and
answer, or for a worker to read a pair of scan-sized mask files; either is seconds, so a
process silent this long is stuck."""


def adapter_path(adapter: object) -> str:
    """'module:Class', how a process of another Python finds an adapter: it imports it, no
    object is pickled."""
    return f"{type(adapter).__module__}:{type(adapter).__qualname__}"


def python_path() -> str:
    """PYTHONPATH for a process of an environment's Python: the project, and every folder on
    this process's path that is not part of its interpreter (tests' and users' own modules),
    never site-packages, which belong to one environment."""
    own = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    folders = [str(REPO)]
    for entry in sys.path:
        folder = Path(entry or os.getcwd()).resolve()
        if folder.is_dir() and not any(folder.is_relative_to(p) for p in own):
            folders.append(str(folder))
    return os.pathsep.join(dict.fromkeys(folders))


class NestedWorker(RuntimeError):
    """A describe or worker process was about to start another (`WORKER_DEPTH`)."""


def child_variables(what: str) -> dict[str, str]:
    """The environment variables of a describe or worker process, `what` (naming its
    environment): this process's, the project on PYTHONPATH, and `WORKER_DEPTH`.
    NestedWorker, in one line, when this process is itself such a process: it would start
    one of its own kind, and that one another."""
    if os.environ.get(WORKER_DEPTH, "0") != "0":
        raise NestedWorker(
            f"{what}: not started, this process is a describe or worker process already "
            f"({WORKER_DEPTH}={os.environ[WORKER_DEPTH]}) and starts no other (its Python, "
            f"{sys.prefix}, was not recognised as that environment's)"
        )
    return {**os.environ, "PYTHONPATH": python_path(), WORKER_DEPTH: "1"}


@dataclass(frozen=True)
class Environment:
    """A named Python environment: its pins, and where its interpreter lives.

    name: what configs and records call it.
    requirements: the pinned requirements file it is built from (None: the study's own,
        requirements.txt with constraints.txt, built by `make`).
    about: one line for tables and `python -m adapters list`.
    tool_home: True for one tool's home environment, which holds today's version of that
        tool only: not a set of versions a study is scored in (config `environments`).
    """

    name: str
    requirements: Path | None
    about: str
    tool_home: bool = False

    @property
    def prefix(self) -> Path:
        """The environment's folder (its sys.prefix): this process's for the study's."""
        if self.requirements is None:
            return Path(sys.prefix)
        return ENVIRONMENTS_DIR / self.name

    @property
    def python(self) -> str:
        """The environment's interpreter: this process's own for the study's environment."""
        if self.requirements is None:
            return sys.executable
        return str(self.prefix / "bin" / "python")

    def is_here(self) -> bool:
        """True when this process runs in this environment, however either is reached: both
        folders resolved, so a .envs/<name> that is a symbolic link (to an environment on
        scratch space) is the folder it points to. Folders, not interpreters: a venv's
        bin/python is a link to the base Python every venv of it shares."""
        return Path(sys.prefix).resolve() == self.prefix.resolve()

    def unavailable(self) -> str | None:
        """None when the environment's Python exists, else why not and how to build it."""
        if os.access(self.python, os.X_OK):
            return None
        return (
            f"environment {self.name!r} is not built ({self.python} missing; make env-{self.name})"
        )

    def describe(
        self, adapters: Sequence[object], tool_paths: Mapping, *, build: bool = True
    ) -> list[dict]:
        """{"version", "unavailable"}, and with `build` its "build", of each adapter as this
        environment sees it (`adapters.worker.state_of`), asked of one short-lived process of
        its Python (`python -m adapters.worker --describe`), not of a worker per tool."""
        reason = self.unavailable()
        if reason is None:
            request = {
                "adapters": [adapter_path(a) for a in adapters],
                "tool_paths": dict(tool_paths),
                "build": build,
            }
            done = subprocess.run(
                [self.python, "-m", "adapters.worker", "--describe"],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                env=child_variables(f"describe of environment {self.name!r} ({self.python})"),
                timeout=START_SECONDS,
            )
            if done.returncode == 0:
                return json.loads(done.stdout)
            said = (done.stderr.strip().splitlines() or ["no message"])[-1]
            reason = f"{self.python} could not describe its tools: {said}"
        return [{"version": None, "unavailable": reason} for _ in adapters]


ENVIRONMENTS: dict[str, Environment] = {
    environment.name: environment
    for environment in (
        Environment("study", None, "today's pinned versions (requirements.txt)"),
        Environment(
            "paper",
            REPO / "workflow" / "envs" / "paper.txt",
            "the versions the paper used (workflow/envs/paper.txt)",
        ),
        Environment(
            "panoptica",
            REPO / "workflow" / "envs" / "panoptica.txt",
            "panoptica and the numpy < 2.3 it requires (workflow/envs/panoptica.txt)",
            tool_home=True,
        ),
    )
}

STUDY_ENVIRONMENT = "study"
"""The environment the study scores in unless the config asks for more."""

SCORED_ENVIRONMENTS: tuple[str, ...] = tuple(
    name for name, environment in ENVIRONMENTS.items() if not environment.tool_home
)
"""The sets of versions a study can be scored in (config `environments`)."""


def in_built_environment() -> bool:
    """True in the Python of an environment built under .envs/ (a tool's worker there), False
    in the study's own; an environment whose .envs/<name> is a symbolic link counts, reached
    through the link or at its target (`Environment.is_here`)."""
    built = [env for env in ENVIRONMENTS.values() if env.requirements is not None]
    here = Path(sys.prefix).resolve()
    return here.is_relative_to(ENVIRONMENTS_DIR.resolve()) or any(env.is_here() for env in built)


def environment_named_by(python: str) -> str:
    """The name of the environment whose interpreter `python` is, or `python` itself."""
    return next((env.name for env in ENVIRONMENTS.values() if env.python == python), python)


def environment(name: str) -> Environment:
    """The environment of that name; ValueError naming the known ones."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; known: {sorted(ENVIRONMENTS)}")
    return ENVIRONMENTS[name]
