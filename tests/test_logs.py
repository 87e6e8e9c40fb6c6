"""study.pipeline.logs.log_to, which every workflow script runs its job in: logging records and
stderr go to the job's log file, and a failure is logged there before it propagates."""

from __future__ import annotations

import logging
import sys

import pytest

from study.pipeline.logs import log_to


@pytest.fixture
def root_level():
    """log_to sets the root logger's level for its process (a job's): put it back."""
    level = logging.getLogger().level
    yield
    logging.getLogger().setLevel(level)


def test_records_and_stderr_go_to_the_log_and_a_failure_is_logged(tmp_path, root_level):
    log = tmp_path / "logs/job.log"
    with log_to(log):
        logging.getLogger("a.tool").warning("spacing ignored")
        print("a tool's own warning", file=sys.stderr)
    text = log.read_text()
    assert "WARNING spacing ignored" in text and "a tool's own warning" in text
    with pytest.raises(ValueError, match="bad pair"), log_to(log):
        raise ValueError("bad pair")
    assert "job failed" in log.read_text() and "ValueError: bad pair" in log.read_text()
    logging.getLogger("a.tool").warning("after the job")
    assert "after the job" not in log.read_text()
