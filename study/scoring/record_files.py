"""Reading the scoring stage's record files back: one reader for every kind of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def read_record_files(paths: Sequence[str | Path], what: str) -> list[pd.DataFrame]:
    """Each parquet file of `paths`, in order; a missing one is an error naming the file and
    `what` it should hold ("timing records")."""
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        raise FileNotFoundError(f"{missing[0]}: {what} not found")
    return [pd.read_parquet(path) for path in paths]
