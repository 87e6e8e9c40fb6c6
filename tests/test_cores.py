"""claim_cores: jobs side by side get disjoint cores; a job asking for all of them is left alone.

Each claim runs in a child process, so the test process itself is never pinned; a child keeps
its claim until the test closes its stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CLAIM = """
import json, os, sys
from study.scoring.cores import claim_cores
claimed = claim_cores(int(sys.argv[1]))
print(json.dumps({"claimed": sorted(claimed) if claimed else None,
                  "affinity": sorted(os.sched_getaffinity(0))}), flush=True)
sys.stdin.read()
"""

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity"), reason="CPU affinity is a Linux feature"
)


def start_claim(count: int, tmp_path: Path) -> tuple[subprocess.Popen, dict]:
    child = subprocess.Popen(
        [sys.executable, "-c", CLAIM, str(count)],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return child, json.loads(child.stdout.readline())


def release(*children: subprocess.Popen) -> None:
    for child in children:
        child.communicate("", timeout=30)


@pytest.fixture
def allowed() -> list[int]:
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("needs at least two usable cores")
    return cores


def test_jobs_side_by_side_get_disjoint_cores(tmp_path, allowed):
    first, said_first = start_claim(1, tmp_path)
    second, said_second = start_claim(1, tmp_path)
    try:
        for said in (said_first, said_second):
            assert len(said["claimed"]) == 1 and said["affinity"] == said["claimed"]
            assert set(said["claimed"]) <= set(allowed)
        assert said_first["claimed"] != said_second["claimed"]
    finally:
        release(first, second)


def test_a_core_is_free_again_once_its_job_ends(tmp_path, allowed):
    first, said_first = start_claim(len(allowed) - 1, tmp_path)
    second, said_second = start_claim(1, tmp_path)
    third, said_third = start_claim(1, tmp_path)  # every core is held: left unpinned
    release(second)
    fourth, said_fourth = start_claim(1, tmp_path)
    try:
        assert said_third == {"claimed": None, "affinity": allowed}
        assert said_fourth["claimed"] == said_second["claimed"]
    finally:
        release(first, third, fourth)


def test_a_job_asking_for_every_core_is_left_alone(tmp_path, allowed):
    child, said = start_claim(len(allowed), tmp_path)
    release(child)
    assert said == {"claimed": None, "affinity": allowed}
