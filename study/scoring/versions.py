"""One version per tool: the records of a study are checked before any table is made.

Scores, edge-case records, timing and the grid check of one tool in one environment must come
from one version of it, or a table would put two versions side by side under one name. The
workflow keys every job on its tool's identity, so a new version reruns them all; a mix means
records made outside the workflow, copied in, or kept by `--rerun-triggers mtime`.
`check_one_version` stops on a mix with the tool, its versions and the files of each.
An unavailable tool counts as the version "unavailable": its edge-case record saying "not
installed" beside scores of an installed version is a mix too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

UNAVAILABLE = "unavailable"
"""The version an unavailable tool's records count as."""

_TABLE_COLUMNS = ["tool", "environment", "tool_version", "status"]
"""Columns that say who made a row, in score, timing and grid-check files alike."""


class MixedVersions(ValueError):
    """Records of one tool in one environment come from more than one version."""


def versions_in(path: str | Path) -> set[tuple[str, str, str]]:
    """(tool, environment, version) of every record in one file: a parquet of rows
    (scores, timing, grid check) or an edge-case JSON record."""
    path = Path(path)
    if path.suffix == ".json":
        record = json.loads(path.read_text(encoding="utf-8"))
        ok = record["status"] != UNAVAILABLE
        return {(record["tool"], record["environment"], record["version"] if ok else UNAVAILABLE)}
    table = pd.read_parquet(path, columns=_TABLE_COLUMNS)
    version = table["tool_version"].where(table["status"] != UNAVAILABLE, UNAVAILABLE)
    return set(zip(table["tool"], table["environment"], version.astype(str), strict=True))


def check_one_version(paths: Iterable[str | Path]) -> None:
    """Raise `MixedVersions` naming every (tool, environment) recorded in more than one
    version across `paths`, with the files of each version."""
    files: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in paths:
        for tool, environment, version in versions_in(path):
            files[tool, environment][version].append(str(path))
    mixes = [
        f"{tool} (environment {environment}) in {len(by_version)} versions: "
        + "; ".join(f"{version} in {', '.join(names)}" for version, names in by_version.items())
        for (tool, environment), by_version in files.items()
        if len(by_version) > 1
    ]
    if mixes:
        raise MixedVersions(
            "records of different versions of one tool would be mixed in one table:\n  "
            + "\n  ".join(mixes)
            + "\ndelete the stale files and run the workflow again"
        )
