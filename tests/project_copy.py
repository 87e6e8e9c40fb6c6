"""A copy of the project with throwaway tools added the way a contributor adds one: a module
of its own and its line in the registry, nothing else. The workflow tests that need a tool of
their own (a new one, one that misbehaves, one that is installed or upgraded between runs)
run the copy's workflow as a process."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from reference import compute_metrics
from reference.analytic import ball_mask
from reference.meshing import MESHINGS
from study.records import REFERENCE, REFERENCE_VARIANTS

REPO = Path(__file__).resolve().parents[1]
PROJECT_PARTS = (
    "Snakefile",
    "config.yaml",
    "environment.yml",
    "workflow",
    "profiles",
    "vocabulary",
    "adapters",
    "maskio",
    "reference",
    "study",
    "tests",
    "pyproject.toml",
)

THROWAWAY_MODULE = '''"""A throwaway tool that offers HD alone (face-connected boundary, EDT)."""

from adapters.base import PythonAdapter


def directed_distances(x, y, spacing):
    """Distances from the boundary voxels of x to the nearest boundary voxel of y."""
    from scipy import ndimage

    def boundary(mask):
        return mask & ~ndimage.binary_erosion(mask)

    return ndimage.distance_transform_edt(~boundary(y), sampling=spacing)[boundary(x)]


class Throwaway(PythonAdapter):
    name = "throwaway"
    label = "Throwaway"
    metrics = ("HD",)
    module = "scipy"
    distribution = "scipy"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        there, back = directed_distances(a, b, spacing), directed_distances(b, a, spacing)
        return {"HD": float(max(there.max(), back.max()))}
'''


def commit_in_new_repository(folder: Path, *paths: str) -> None:
    """Make `folder` a git repository whose one commit holds `paths` (relative to it): a
    project checkout as a user has one, for what a published page says of its commit."""

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", *paths)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "checkout")


def copy_project(copy: Path, modules: Mapping[str, str], adapters: Mapping[str, str]) -> Path:
    """The project's parts copied into `copy`, with each of `modules` (name -> source) added
    under adapters/ and each of `adapters` (class name -> its module) in the registry, first.
    The copy starts with the reference's compiled kernels (`warm_kernel_cache`)."""
    warm_kernel_cache()
    for part in PROJECT_PARTS:
        source = REPO / part
        if source.is_dir():  # copytree keeps mtimes, which numba's cache index checks
            shutil.copytree(source, copy / part, ignore=shutil.ignore_patterns("*.pyc"))
        else:
            shutil.copy2(source, copy / part)
    for name, text in modules.items():
        (copy / "adapters" / f"{name}.py").write_text(text)
    registry = copy / "adapters" / "registry.py"
    text = registry.read_text()
    entry, first_import = "_ADAPTERS: tuple[Adapter, ...] = (", "from adapters.anima import"
    assert text.count(entry) == 1 and text.count(first_import) == 1
    imports = "".join(f"from adapters.{module} import {cls}\n" for cls, module in adapters.items())
    lines = "".join(f"\n    {cls}()," for cls in adapters)
    text = text.replace(first_import, imports + first_import)
    registry.write_text(text.replace(entry, entry + lines))
    return copy


BUILD_FILES = ("Makefile", "requirements.txt", "constraints.txt")
"""make's own files: the environment's stamp is computed from them."""

VENV = Path(sys.executable).parents[1]
"""The environment the tests run in, handed to a copy's make as VENV."""


def copy_for_make(copy: Path) -> Path:
    """`copy_project` with make's files, so that the documented `make` commands run in the
    copy with this environment (`make -C copy ... VENV=<VENV>`). make rebuilds the environment
    when a pinned file is newer than its stamp, and the rebuild's `pip install -e` in the copy
    would point the shared environment at the copy: the copy's pinned files are dated 1970, so
    make finds the environment up to date when its stamp (the files' checksum) exists, and the
    test stops before any run when it does not."""
    project = copy_project(copy, {}, {})
    for name in BUILD_FILES:
        shutil.copy2(REPO / name, project / name)
    for name in (*BUILD_FILES, "pyproject.toml"):
        os.utime(project / name, (0, 0))
    question = ["make", "-C", str(project), "--question", "venv", f"VENV={VENV}"]
    if subprocess.run(question, capture_output=True).returncode != 0:
        pytest.fail(f"{VENV} is not built from the pinned files: run `make venv` first")
    return project


@functools.cache  # once per test process: later calls would only load the cache again
def warm_kernel_cache() -> None:
    """Compile the reference's numba kernels into the repository's own cache (once it holds
    them, only loaded), so that a copy starts with them as a user's second run does: on a cold
    cache each of the copy's first reference jobs compiles them, about 35 s of CPU apiece.
    Running on a cold cache is test_reference's `test_two_processes_on_a_cold_kernel_cache`.
    The lock (on a file of the package; test workers share it) lets one process compile
    while the other waits, then loads."""
    spacing = (1.0, 1.0, 2.0)
    a = ball_mask((24, 24, 12), spacing, 7.0, (12.0, 12.0, 12.0))
    b = ball_mask((24, 24, 12), spacing, 8.0, (13.0, 12.0, 13.0))
    with open(REPO / "reference" / "__init__.py") as package:
        fcntl.flock(package, fcntl.LOCK_EX)
        for meshing in MESHINGS:
            compute_metrics(a, b, spacing, meshing=meshing, bounds=False)
            compute_metrics(a, b, spacing, meshing=meshing, metrics=["HD"], bounds=False)
        # Every study certifies its yardstick, in 3D and in 2D (module `reference.bounds`).
        yardstick = REFERENCE_VARIANTS[REFERENCE]
        compute_metrics(a, b, spacing, meshing=yardstick)
        compute_metrics(a[:, :, 6], b[:, :, 6], spacing[:2], meshing=yardstick)


def run_in(
    project: Path, *command: str, cwd: Path | None = None, path: Path | None = None, check=True
) -> subprocess.CompletedProcess:
    """`python *command` with the copy (and `path`, if given) first on the Python path; with
    `check`, a failure fails the test with the end of what it said."""
    python_path = os.pathsep.join(str(p) for p in (project, path) if p)
    done = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        cwd=cwd or project,
        env={**os.environ, "PYTHONPATH": python_path},
        timeout=600,
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def run_workflow(project: Path, directory: Path, configfile: Path, *options: str):
    """The copy's workflow, run to its end in `directory` with `configfile` (and `options`)."""
    return run_in(
        project,
        "-m",
        "snakemake",
        "--cores",
        "2",
        "--snakefile",
        str(project / "Snakefile"),
        "--directory",
        str(directory),
        "--configfile",
        str(configfile),
        *options,
    )
