"""The Python environments a tool can be scored in: today's, and the paper's versions.

`study` is the environment running the study (`.venv`, built by `make`): today's pinned tool
versions. `paper` holds the versions the paper used (its pins: `workflow/envs/paper.txt`),
built by `make env-paper` into `.envs/paper/`; scoring a tool there tells how far its results
moved since the paper, and which of today's failures are the environment's (numpy 2), not the
tool's. The adapter code is the same in every environment: a worker of the environment's
Python imports it from this project.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENVIRONMENTS_DIR = REPO / ".envs"
"""Where `make env-<name>` builds the environments other than the study's own."""


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
    def python(self) -> str:
        """The environment's interpreter: this process's own for the study's environment."""
        if self.requirements is None:
            return sys.executable
        return str(ENVIRONMENTS_DIR / self.name / "bin" / "python")

    def unavailable(self) -> str | None:
        """None when the environment's Python exists, else why not and how to build it."""
        if os.access(self.python, os.X_OK):
            return None
        return (
            f"environment {self.name!r} is not built ({self.python} missing; make env-{self.name})"
        )


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
    in the study's own."""
    return Path(sys.prefix).resolve().is_relative_to(ENVIRONMENTS_DIR.resolve())


def environment(name: str) -> Environment:
    """The environment of that name; ValueError naming the known ones."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; known: {sorted(ENVIRONMENTS)}")
    return ENVIRONMENTS[name]
