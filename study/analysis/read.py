"""Reading a run's files: the one place the analysis opens them.

The scores table, the timing, grid-check and edge-case records, the Wilcoxon table written by
its rule, the dataset manifest and the voxelization's pairs files (with their masks). Each
reader checks what the analysis needs and names the file when it cannot; what is derived
from these frames lives in the modules above (delta, significance, timing, advice, claims).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from adapters.environments import STUDY_ENVIRONMENT
from maskio import load_mask
from study.analysis.settings import AnalysisSettings
from study.records import EDGE_CASES, EDGE_OUTPUTS, SCORE_COLUMNS, VERDICT_TEXT_COLUMNS
from study.scoring import grid_check
from study.scoring.record_files import read_record_files

# --------------------------------------------------------------------------------------------
# The scores table
# --------------------------------------------------------------------------------------------


def check_scores(scores: pd.DataFrame, source: str = "scores table") -> None:
    """Fail early when a scores table lacks columns of `SCORE_COLUMNS` the analysis needs."""
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns and c != "seconds"]
    if missing:
        raise ValueError(f"{source} lacks columns {missing}; expected {list(SCORE_COLUMNS)}")


def read_scores(path: str | Path, environment: str | None = STUDY_ENVIRONMENT) -> pd.DataFrame:
    """The scores table at `path`, checked for the columns the analysis needs: the rows of
    `environment` (every table and figure is of today's versions), or all rows (None)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: scores table not found (run the collect rule first)")
    scores = pd.read_parquet(path)
    check_scores(scores, str(path))
    if environment is not None:
        scores = scores.loc[scores["environment"] == environment].reset_index(drop=True)
    if scores.empty:
        raise ValueError(f"{path}: scores table has no rows")
    return scores


def read_wilcoxon(path: str | Path) -> pd.DataFrame:
    """The Wilcoxon table written by rule table_wilcoxon (spacing labels kept as text)."""
    return pd.read_csv(path, dtype={"spacing": str})


# --------------------------------------------------------------------------------------------
# Timing, grid-check and edge-case records
# --------------------------------------------------------------------------------------------


def read_timing(paths: Sequence[str | Path]) -> pd.DataFrame:
    """All timing records in one table; a missing file is an error naming it."""
    frames = read_record_files(paths, "timing records")
    if not frames:
        raise ValueError("no timing files given")
    return pd.concat(frames, ignore_index=True)


def read_grid_check(paths: Sequence[str | Path]) -> pd.DataFrame:
    """All grid-check records in one table (the scoring stage owns their format)."""
    return grid_check.read_grid_check(paths)


def load_edge_cases(paths: Sequence[str | Path]) -> list[dict]:
    """Read edge-case JSON files, checking the fields Table A3 needs."""
    documents = []
    for path in paths:
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: cannot read edge-case record: {error}") from error
        for key in ("tool", "version", "records"):
            if key not in document:
                raise ValueError(f"{path}: edge-case record lacks {key!r}")
        for record in document["records"]:
            if record.get("case") not in EDGE_CASES or record.get("output") not in EDGE_OUTPUTS:
                raise ValueError(
                    f"{path}: bad edge-case record {record}: case must be in "
                    f"{EDGE_CASES}, output in {EDGE_OUTPUTS}"
                )
        documents.append(document)
    return documents


EDGE_RECORD_COLUMNS: tuple[str, ...] = (
    "tool",
    "version",
    "metric",
    "case",
    "output",
    "value",
    "warned",
    "message",
)
"""One edge-case record per row: the tool's output class (and value) on one case and metric."""


def edge_case_records(documents: Sequence[Mapping]) -> pd.DataFrame:
    """The edge-case documents (`load_edge_cases`) as one frame of `EDGE_RECORD_COLUMNS`."""
    rows = [
        {
            "tool": document["tool"],
            "version": document["version"],
            "metric": record["metric"],
            "case": record["case"],
            "output": record["output"],
            "value": record.get("value", ""),
            "warned": bool(record.get("warned")),
            "message": record.get("message", ""),
        }
        for document in documents
        for record in document["records"]
    ]
    return pd.DataFrame(rows, columns=list(EDGE_RECORD_COLUMNS))


# --------------------------------------------------------------------------------------------
# The dataset: manifest, pairs and masks
# --------------------------------------------------------------------------------------------


def read_manifest(path: str | Path) -> pd.DataFrame:
    """The dataset manifest (one row per case, OAR and observer, with its volume)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: dataset manifest not found")
    return pd.read_csv(path)


def read_verdicts(path: str | Path) -> pd.DataFrame:
    """The verdict table a run wrote (tables/recommendations.csv,
    `study.analysis.verdicts.verdict_table`)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: verdict table not found")
    table = pd.read_csv(path, dtype={c: str for c in VERDICT_TEXT_COLUMNS})
    present = [c for c in VERDICT_TEXT_COLUMNS if c in table]
    table[present] = table[present].fillna("")
    return table


PAIR_COLUMNS: tuple[str, ...] = ("case", "oar", "category", "spacing")
"""What names a mask pair in a pairs.csv file (besides the masks' paths path_a, path_b)."""


def read_pairs(pairs_file: str | Path) -> pd.DataFrame:
    """A voxelization's pairs.csv: `PAIR_COLUMNS` and the masks' paths (relative to it)."""
    pairs_file = Path(pairs_file)
    if not pairs_file.is_file():
        raise FileNotFoundError(f"{pairs_file}: pairs file not found")
    table = pd.read_csv(pairs_file, dtype={"spacing": str}, keep_default_na=False)
    missing = {*PAIR_COLUMNS, "path_a", "path_b"} - set(table.columns)
    if missing:
        raise ValueError(f"{pairs_file}: missing columns {sorted(missing)}")
    return table


def read_mask(folder: Path, path) -> np.ndarray | None:
    """The mask at folder/path, or None for an observer who drew nothing (empty path)."""
    if not isinstance(path, str) or not path:
        return None
    return load_mask(folder / path).array


# --------------------------------------------------------------------------------------------
# Everything the findings and the cards stand on
# --------------------------------------------------------------------------------------------


@dataclass
class AnalysisInputs:
    """Everything the findings and the cards are computed from."""

    scores: pd.DataFrame
    wilcoxon: pd.DataFrame
    settings: AnalysisSettings = field(default_factory=AnalysisSettings)
    timing: pd.DataFrame | None = None
    grid_check: pd.DataFrame | None = None
    edge_cases: pd.DataFrame | None = None
    """Table A3's records (`EDGE_RECORD_COLUMNS`)."""


def read_inputs(
    scores_path,
    timing_paths=(),
    grid_check_paths=(),
    edge_case_paths=(),
    wilcoxon: pd.DataFrame | None = None,
    settings: AnalysisSettings | None = None,
) -> AnalysisInputs:
    """The analysis inputs from the workflow's files (or any user's): the scores table, and
    the timing, grid-check and edge-case records when given."""
    return AnalysisInputs(
        read_scores(scores_path),
        pd.DataFrame() if wilcoxon is None else wilcoxon,
        settings or AnalysisSettings(),
        read_timing(timing_paths) if timing_paths else None,
        read_grid_check(grid_check_paths) if grid_check_paths else None,
        edge_case_records(load_edge_cases(edge_case_paths)) if edge_case_paths else None,
    )
