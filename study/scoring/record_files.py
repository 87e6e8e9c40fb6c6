"""Reading the scoring stage's record files back: one reader for every kind of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def read_parquet(path: str | Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """One parquet file, read on the calling thread.

    Arrow's own thread pool is left out: a process that has read parquet with it can abort
    at exit ("terminate called without an active exception", a worker thread still joinable
    while the interpreter shuts down; apache/arrow issues 34314 and 39862, open), which in a
    Snakemake job fails a job whose work was done. The record files are small, so threads
    gain nothing here."""
    columns = None if columns is None else list(columns)
    return pd.read_parquet(path, columns=columns, use_threads=False, pre_buffer=False)


def read_record_files(paths: Sequence[str | Path], what: str) -> list[pd.DataFrame]:
    """Each parquet file of `paths`, in order; a missing one is an error naming the file and
    `what` it should hold ("timing records")."""
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        raise FileNotFoundError(f"{missing[0]}: {what} not found")
    return [read_parquet(path) for path in paths]
