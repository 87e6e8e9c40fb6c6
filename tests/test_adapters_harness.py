"""The call harness: failures of a tool become records, bad input fails early."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import SimpleITK
from fake_tools import (
    Broken,
    Chatty,
    Dereferences,
    EatsMemory,
    Echoes,
    FakeProgram,
    FakePython,
    FakeXmlProgram,
    Hangs,
    InProcess,
    Panics,
    Segfaults,
    WhereAmI,
)

from adapters import REGISTRY, CallSettings, invoke, invoke_files
from adapters.base import configure
from maskio import write_mask


def masks():
    a = np.zeros((6, 6, 6), dtype=bool)
    a[1:4, 1:4, 1:4] = True
    return a, np.roll(a, 1, axis=0)


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-metric-program"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_tool_runs_in_a_worker_and_the_reference_here():
    a, b = masks()
    isolated = invoke(WhereAmI(), a, b, (1, 1, 1))
    here = invoke(InProcess(), a, b, (1, 1, 1))
    assert isolated.error is None and isolated.values["DSC"] == a.sum()
    assert isolated.values["HD"] != os.getpid() and here.values["HD"] == os.getpid()
    again = invoke(WhereAmI(), a, b, (1, 1, 1))
    assert again.values["HD"] == isolated.values["HD"]  # one worker serves the calls


def test_python_exception_becomes_error():
    outcome = invoke(Broken(), *masks(), (1, 1, 1))
    assert outcome.values == {} and outcome.error == "ZeroDivisionError: no boundary"
    assert outcome.seconds >= 0


@pytest.mark.parametrize("tool", [Segfaults, Dereferences])
def test_a_crash_kills_only_the_worker_and_the_next_call_runs(tool):
    outcome = invoke(tool(), *masks(), (1, 1, 1))
    assert outcome.values == {} and outcome.error.startswith("worker killed by SIGSEGV")
    after = invoke(WhereAmI(), *masks(), (1, 1, 1))
    assert after.error is None and after.values["HD"] != os.getpid()
    assert invoke(tool(), *masks(), (1, 1, 1)).error.startswith("worker killed by SIGSEGV")


def test_a_panic_a_base_exception_becomes_error():
    outcome = invoke(Panics(), *masks(), (1, 1, 1))
    assert outcome.error == "Panic: called `Option::unwrap()` on a `None` value"


def test_hanging_python_tool_is_killed_at_the_timeout_and_the_next_call_runs():
    """A loop that swallows every Exception cannot outlast the timeout: its worker is killed."""
    started = time.monotonic()
    outcome = invoke(Hangs(), *masks(), (1, 1, 1), settings=CallSettings(timeout=0.3))
    assert outcome.values == {} and outcome.error.startswith("timed out after")
    assert "worker killed" in outcome.error
    assert time.monotonic() - started < 30
    quick = invoke(FakePython(), *masks(), (1, 1, 1), settings=CallSettings(timeout=0.3))
    assert quick.error is None and quick.values == {"HD": 1.0, "DSC": 1.0}


def test_the_memory_limit_stops_a_runaway_tool():
    started = time.monotonic()
    outcome = invoke(EatsMemory(), *masks(), (1, 1, 1), settings=CallSettings(memory_gb=2))
    assert outcome.error.startswith("MemoryError"), outcome.error
    assert "exceeded the worker's memory limit of 2 GB" in outcome.error
    assert time.monotonic() - started < 60
    assert (
        invoke(FakePython(), *masks(), (1, 1, 1), settings=CallSettings(memory_gb=2)).error is None
    )


def test_warnings_logging_and_prints_are_recorded():
    outcome = invoke(Chatty(), *masks(), (1, 1, 1))
    assert outcome.error is None and outcome.values == {"HD": 1.0, "DSC": 0.5}
    assert outcome.warnings == [
        "empty reference mask",
        "Note: prediction all 0",
        "WARNING: printed by the tool",
    ]


def test_metrics_are_filtered_to_what_the_tool_supports():
    outcome = invoke(FakePython(), *masks(), (1, 1, 1), metrics=("DSC", "NSD"))
    assert outcome.values == {"DSC": 1.0}


def test_the_worker_reads_the_files_grid_and_labels(tmp_path):
    a, b = masks()
    files = [write_mask(tmp_path / f"{n}.nii.gz", m, (0.5, 1, 2)) for n, m in (("a", a), ("b", b))]
    outcome = invoke_files(Echoes(), *files, metrics=("HD",))
    assert outcome.values == {"HD": 0.5}
    labels = []
    for name, mask in (("a", a), ("b", b)):
        image = SimpleITK.GetImageFromArray(mask.astype(np.uint8).T * 3)  # sitk: z, y, x
        image.SetSpacing((0.5, 1, 2))
        labels.append(tmp_path / f"labels_{name}.nii.gz")
        SimpleITK.WriteImage(image, str(labels[-1]))
    assert invoke_files(Echoes(), *labels, label=3, metrics=("HD",)).values == {"HD": 0.5}
    with pytest.raises(ValueError, match="not binary"):
        invoke_files(Echoes(), *labels)


def test_files_that_are_not_a_pair_fail_early_naming_the_file(tmp_path):
    a, b = masks()
    first = write_mask(tmp_path / "a.nii.gz", a, (1, 1, 1))
    other = write_mask(tmp_path / "b.nii.gz", b, (1, 1, 2))
    with pytest.raises(ValueError, match="not on the same grid: spacing"):
        invoke_files(FakePython(), first, other)
    with pytest.raises(ValueError, match="gone.nii.gz"):
        invoke_files(FakePython(), first, tmp_path / "gone.nii.gz")


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
        invoke(FakePython(), a, b, spacing)


def test_non_binary_and_unknown_names_fail_early():
    a, b = masks()
    with pytest.raises(ValueError, match="not binary"):
        invoke(FakePython(), a.astype(int) * 2, b, (1, 1, 1))
    with pytest.raises(ValueError, match="unknown tool"):
        invoke("no-such-tool", a, b, (1, 1, 1))
    with pytest.raises(ValueError, match="unknown metric"):
        invoke(FakePython(), a, b, (1, 1, 1), metrics=("HD100",))


def test_program_timeout_becomes_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_METRIC_PROGRAM", script(tmp_path, "sleep 30"))
    outcome = invoke(FakeProgram(), *masks(), (1, 1, 1), settings=CallSettings(timeout=0.5))
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


def test_a_tools_build_key_follows_its_adapters_code(tmp_path, monkeypatch):
    """An edit to how a tool is called (its adapter's module) changes the identity its outputs
    are keyed on, so the workflow reruns them; the same code gives the same key."""
    import importlib.util

    adapter_code = (
        "from fake_tools import FakePython\n\nclass Edited(FakePython):\n    name = 'edited'\n"
    )
    builds = []
    for copy, extra in (("first", ""), ("same", ""), ("edited", "# fix\n")):
        path = tmp_path / copy / "edited_tool.py"
        path.parent.mkdir()
        path.write_text(adapter_code + extra)
        spec = importlib.util.spec_from_file_location(f"edited_tool_{copy}", path)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)  # where inspect finds its file
        spec.loader.exec_module(module)
        builds.append(module.Edited().build())
    assert builds[0] == builds[1] != builds[2]


def test_describe_hashes_no_build_identify_does(monkeypatch):
    """A tool's version is asked by every scoring, probing and timing job (`describe`); only
    the workflow's plan keys outputs on the build (`identify`), so only it hashes files."""
    from adapters import describe, identify

    builds = []
    monkeypatch.setattr(InProcess, "build", lambda self: builds.append(self.name) or "b1")
    tool = InProcess()
    assert describe([tool])[tool.name][1] is None
    assert builds == []
    assert identify([tool])[tool.name].build == "b1"
    assert builds == [tool.name]
