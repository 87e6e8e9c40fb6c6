"""HD execution time per pair and tool (paper, Fig. A5).

Each repeat is one `adapters.invoke_files` call asking for HD only; `seconds` is the wall time
of the tool call, measured inside the tool's worker after it has read the mask files (for
program tools the whole process, reading its files included). Before the first pair, one
untimed call (on the first pair cut to its masks' box) lets the worker import the tool's
libraries (MONAI and torch take seconds to import), so every recorded repeat measures the call
itself, as in a study that scores thousands of pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from adapters import Adapter, CallSettings, invoke, invoke_files
from adapters.calls import DEFAULT_SETTINGS
from maskio import read_mask
from study.oars import first_of_each_category
from study.records import TIMING_COLUMNS, shape_label, spacing_label, status_of
from study.scoring.score import tool_version

PAIR_FIELDS = ("case", "oar", "category", "spacing", "path_a", "path_b")


def _checked(pair: Mapping, base: Path | None) -> dict:
    missing = [name for name in PAIR_FIELDS if name not in pair]
    if missing:
        raise ValueError(f"pair row {dict(pair)} lacks the fields {missing}")
    row = dict(pair)
    for key in ("path_a", "path_b"):
        path = Path(str(row[key]))
        row[key] = base / path if base is not None and not path.is_absolute() else path
    return row


def cropped_to_masks(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both masks cut to the box of a | b plus one voxel (whole masks if both are empty): the
    warm-up call, which only has to import the tool, costs little even on a scan-sized grid."""
    either = np.argwhere(a | b)
    if not len(either):
        return a, b
    low = np.maximum(either.min(axis=0) - 1, 0)
    box = tuple(slice(lo, hi + 2) for lo, hi in zip(low, either.max(axis=0), strict=True))
    return a[box], b[box]


def timed_pairs(pairs: pd.DataFrame, per_category: int | None) -> pd.DataFrame:
    """Of each case's rows of pairs.csv, the first `per_category` OARs of each category (all
    rows if None)."""
    if per_category is None:
        return pairs
    keep = {
        (name, oar)
        for name, case in pairs.groupby("case", sort=False)
        for oar in first_of_each_category(case["oar"], case["category"], per_category)
    }
    return pairs.loc[[key in keep for key in zip(pairs["case"], pairs["oar"], strict=True)]]


def time_hd(
    adapter: Adapter,
    pairs: Iterable[Mapping],
    repeats: int,
    *,
    base: Path | None = None,
    settings: CallSettings = DEFAULT_SETTINGS,
    dataset: str = "",
    grid: str = "",
) -> pd.DataFrame:
    """One row per pair and repeat with `TIMING_COLUMNS`; tool failures become error rows.

    `pairs` holds rows of pairs.csv (case, oar, category, spacing, path_a, path_b); relative
    paths are taken relative to `base`. `grid` names the field of view the masks were
    voxelized with (recorded as given); each row records the masks' shape as read. Of
    `settings`, HD needs neither the percentile nor tau.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    environment = settings.environment
    version = tool_version(adapter, environment)
    rows = []
    warmed_up = False
    for pair in pairs:
        row = _checked(pair, base)
        a, spacing, _ = read_mask(row["path_a"])
        if not warmed_up:
            _warm_up(adapter, a, read_mask(row["path_b"])[0], spacing, settings)
            warmed_up = True
        for repeat in range(repeats):
            outcome = invoke_files(
                adapter, row["path_a"], row["path_b"], metrics=("HD",), settings=settings
            )
            if outcome.unavailable is not None:
                status, message = "unavailable", outcome.unavailable
            elif outcome.error is not None:
                status, message = "error", outcome.error
            elif "HD" not in outcome.values:
                status, message = "error", "the tool returned no HD"
            else:
                status, message = status_of(outcome.values["HD"]), "; ".join(outcome.warnings)
            rows.append(
                {
                    "dataset": row.get("dataset", dataset),
                    "case": row["case"],
                    "oar": row["oar"],
                    "category": row["category"],
                    "spacing": row.get("spacing") or spacing_label(spacing),
                    "grid": grid,
                    "shape": shape_label(a.shape),
                    "tool": adapter.name,
                    "tool_version": version,
                    "environment": environment,
                    "repeat": repeat,
                    "seconds": outcome.seconds,
                    "status": status,
                    "message": message,
                }
            )
    return pd.DataFrame(rows, columns=list(TIMING_COLUMNS))


def _warm_up(adapter: Adapter, a, b, spacing, settings: CallSettings) -> None:
    """One untimed call on the first pair cut to its masks' box: the worker imports the tool."""
    invoke(adapter, *cropped_to_masks(a, b), spacing, metrics=("HD",), settings=settings)


def timed_pair_count(config: Mapping) -> int:
    """Pairs the HD timing of a validated synthetic-data config times: its timed cases times
    the OARs kept of each (`timed_pairs`)."""
    from study.oars import OARS, selected_oars

    timing = config["timing"]
    cases = min(timing["cases"] or config["dataset"]["cases"], config["dataset"]["cases"])
    oars = selected_oars(config["dataset"]["oars"])
    if timing["pairs_per_category"] is not None:
        oars = first_of_each_category(
            oars, [OARS[oar] for oar in oars], timing["pairs_per_category"]
        )
    return cases * len(oars)
