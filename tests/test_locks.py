"""A run killed hard leaves Snakemake's lock behind; the next `make run` releases it, but never
the lock of a run that is alive (`study.pipeline.locks`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from study.pipeline.locks import LOCKS, is_snakemake, live_runs, main, release_stale_lock

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")

SLOW_SNAKEFILE = """
rule all:
    input: "done.txt"

rule slow:
    output: "done.txt"
    shell: "sleep {wait} && touch {{output}}"
"""


def test_snakemake_command_lines_are_told_from_others():
    assert is_snakemake(["/x/.venv/bin/python", "/x/.venv/bin/snakemake", "--cores", "2"])
    assert is_snakemake(["snakemake", "-n"])
    assert is_snakemake(["python3", "-m", "snakemake", "--cores", "1"])
    assert not is_snakemake(["python", "/x/.snakemake/scripts/tmpab.score_case.py"])
    assert not is_snakemake(["python", "-m", "adapters.worker"])


def test_a_lock_without_a_run_is_released_and_a_live_runs_lock_kept(tmp_path):
    (tmp_path / LOCKS).mkdir(parents=True)
    (tmp_path / LOCKS / "0.input.lock").write_text("results/x\n")
    released = []
    program = tmp_path / "bin" / "snakemake"  # a process that looks like a run, here
    program.parent.mkdir()
    program.write_text("import time\ntime.sleep(60)\n")
    alive = subprocess.Popen([sys.executable, str(program)], cwd=tmp_path)
    try:
        for _ in range(50):  # until /proc shows it
            if alive.pid in live_runs(tmp_path):
                break
            time.sleep(0.1)
        assert live_runs(tmp_path) == [alive.pid]
        assert not release_stale_lock(tmp_path, released.append)
    finally:
        alive.kill()
        alive.wait()
    assert live_runs(tmp_path) == []
    assert release_stale_lock(tmp_path, released.append)
    assert released == [tmp_path]


def test_no_lock_nothing_to_release(tmp_path):
    assert not release_stale_lock(tmp_path, lambda _: pytest.fail("unlocked anyway"))


def test_a_run_killed_hard_resumes_with_the_same_command(tmp_path):
    """A real Snakemake run killed with SIGKILL mid-job: its lock stays and the same command
    is refused; after `main` (what make run calls first) the same command completes."""
    (tmp_path / "Snakefile").write_text(SLOW_SNAKEFILE.format(wait=30))
    command = [sys.executable, "-m", "snakemake", "--cores", "1"]
    run = subprocess.Popen(command, cwd=tmp_path, start_new_session=True)
    try:
        for _ in range(300):
            if any((tmp_path / LOCKS).glob("*.lock")):
                break
            time.sleep(0.1)
        assert any((tmp_path / LOCKS).glob("*.lock")), "the run never locked its directory"
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the run and its job, as the OOM killer would
        run.wait()
    (tmp_path / "Snakefile").write_text(SLOW_SNAKEFILE.format(wait=0))
    refused = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert refused.returncode != 0 and "--unlock" in refused.stdout + refused.stderr
    assert main([str(tmp_path)]) == 0
    resumed = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "done.txt").is_file()
