"""Logging for Snakemake jobs: everything a job says goes to its log file."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def log_to(path: str | Path) -> Iterator[None]:
    """Send logging records and stderr to `path` for the duration of a job.

    Tools print warnings on stderr; keeping them in the job's log keeps the terminal readable
    while the scores table records them row by row.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            with contextlib.redirect_stderr(stream):
                yield
        except BaseException:
            logging.getLogger(__name__).exception("job failed")
            raise
        finally:
            root.removeHandler(handler)
