"""Fake tools for the harness tests: each misbehaves in one way a real tool can.

They live in a module of their own because a worker process imports its adapter by name
('fake_tools:Hangs'); a class defined inside a test function could not be found there.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import time
import warnings
from pathlib import Path

import numpy as np

from adapters.base import ProgramAdapter, PythonAdapter


class FakePython(PythonAdapter):
    """A Python tool that returns 1.0 for every metric asked; subclasses misbehave."""

    name = "fake"
    label = "Fake"
    metrics = ("HD", "DSC")
    module = "numpy"
    distribution = "numpy"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {metric: 1.0 for metric in metrics}


class WhereAmI(FakePython):
    """HD = the id of the process the call ran in; DSC = the voxels of a it was given."""

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {"HD": float(os.getpid()), "DSC": float(a.sum())}


class InProcess(WhereAmI):
    """The same, marked as code of the project's own: called in the caller's process."""

    in_process = True


class Broken(FakePython):
    def _compute(self, a, b, spacing, metrics, percentile, tau):
        raise ZeroDivisionError("no boundary")


class Hangs(FakePython):
    """Loops forever and swallows every Exception, as a tool's own catch-all would."""

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001, S110 - the point of the fake
                pass


class Segfaults(FakePython):
    """Kills its interpreter with SIGSEGV, as a C extension's bad pointer does."""

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(5)


class Dereferences(FakePython):
    """A real segmentation fault: reads address 0."""

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {"HD": float(ctypes.string_at(0))}


class Panic(BaseException):
    """Stands for pyo3_runtime.PanicException: a BaseException, not an Exception."""


class Panics(FakePython):
    def _compute(self, a, b, spacing, metrics, percentile, tau):
        raise Panic("called `Option::unwrap()` on a `None` value")


class EatsMemory(FakePython):
    """Allocates without bound: 1 GB more per step, every byte touched."""

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        held = []
        while True:
            held.append(np.ones(2**27))


class Chatty(FakePython):
    def _compute(self, a, b, spacing, metrics, percentile, tau):
        warnings.warn("empty reference mask", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        logging.getLogger("tool").warning("Note: prediction all 0")
        print("WARNING: printed by the tool")
        os.write(1, b"written to file descriptor 1 by C code\n")
        return {"HD": 1.0, "DSC": 0.5}


class Echoes(FakePython):
    """Returns the spacing it was given as HD (its first entry) and the metrics as DSC."""

    metrics = ("HD", "HD95", "DSC")

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {metric: float(spacing[0]) for metric in metrics}


class FakeProgram(ProgramAdapter):
    """A program tool backed by a shell script written by the test."""

    name = "fakeprogram"
    label = "Fake program"
    metrics = ("HD", "DSC")
    binary = "fake-metric-program"
    env_var = "FAKE_METRIC_PROGRAM"

    def version(self):
        return "0"

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        said = self.run([str(path_a), str(path_b)], timeout=timeout)
        return {"HD": float(said.split()[-1])}


class FakeXmlProgram(FakeProgram):
    """A program tool that reads an XML report, as Anima and EvaluateSegmentation do."""

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        report = Path(folder) / "report.xml"
        self.run([str(report)], timeout=timeout)
        root = self.read_xml_report(report)
        return {"HD": float(root.find("hd").get("value"))}


class AsksItsHome(FakePython):
    """A tool whose every process takes its home for another environment and asks it, as
    panoptica did when .envs/panoptica was a symbolic link: the home here is the study's own
    Python, so each describe process would start the next. Each process that asks appends its
    id to the file named by $ASKS_ITS_HOME_LOG."""

    def unavailable(self):
        from adapters.environments import environment

        with open(os.environ["ASKS_ITS_HOME_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
        return environment("study").describe([self], {}, build=False)[0]["unavailable"]
