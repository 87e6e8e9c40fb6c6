"""The scoring loop: one implementation (a tool or a reference variant) on every mask pair.

Every call goes through `adapters.invoke_files`, which runs a tool in a worker process of its
environment on the voxelizer's own files, times it, and turns a tool's failure (a crash or a
hang included) into an error instead of an exception, so one misbehaving tool never stops the
study. The reference is wrapped in the same adapter interface and runs in this process.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

import maskio
import reference
from adapters import REGISTRY, Adapter, CallSettings, describe, invoke_files
from adapters.base import Bracketed
from adapters.environments import STUDY_ENVIRONMENT
from study.records import (
    BRACKET_COLUMNS,
    NATIVE,
    REFERENCE_LABELS,
    REFERENCE_VARIANTS,
    SCORE_COLUMNS,
    parse_spacing_label,
    status_of,
)
from vocabulary import METRIC_KEYS

log = logging.getLogger(__name__)

REFERENCE_PACKAGE = Path(reference.__file__).resolve().parent
"""The reference's code, whose digest keys its outputs (`ReferenceImplementation.build`)."""

MESSAGE_LIMIT = 500
"""Longest tool message kept per row: enough for an error's last line and its cause."""


class ReferenceImplementation(Adapter):
    """The mesh-based reference behind the adapter interface, for one meshing method; with
    `brackets`, each value comes with its proven bracket (the reference's default call),
    without, the plain call's values alone (`bounds=False`)."""

    metrics = METRIC_KEYS
    in_process = True

    def __init__(self, name: str, meshing: str, brackets: bool = False) -> None:
        self.name = name
        self.meshing = meshing
        self.label = REFERENCE_LABELS[name]
        self.brackets = brackets

    def version(self) -> str:
        return f"{reference.__version__} ({self.meshing})"

    def built_from(self) -> list[Path]:
        """This module (how the study calls the reference) and the reference package's source
        files: any change to its code, not only a new `__version__`, makes its outputs stale."""
        return super().built_from() + sorted(REFERENCE_PACKAGE.rglob("*.py"))

    def unavailable(self) -> str | None:
        return None

    def _compute(self, a, b, spacing, metrics, percentile, tau) -> dict[str, float]:
        import warnings

        from reference import bounds, compute_metrics

        # Only what is asked: HD timing then measures HD, not the dense BIoU grid.
        options = {"percentile": percentile, "tau": tau, "meshing": self.meshing}
        # A bracket wider than its aim is recorded with its width, not repeated as a warning
        # in every row's message.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bounds.WideBracket)
            scores = compute_metrics(
                a, b, spacing, metrics=list(metrics), bounds=self.brackets, **options
            )
        if not self.brackets:
            return scores
        proven = {key: (one.lower, one.upper) for key, one in scores.brackets.items()}
        return Bracketed(scores, proven)


ENVIRONMENT_MARK = "@"
"""Joins a tool and an environment other than the study's in job and file names: deepmind@paper."""


def scored_name(tool: str, environment: str = STUDY_ENVIRONMENT) -> str:
    """The name of a tool's jobs and files in `environment` ("deepmind", "deepmind@paper")."""
    return tool if environment == STUDY_ENVIRONMENT else f"{tool}{ENVIRONMENT_MARK}{environment}"


def split_scored_name(name: str) -> tuple[str, str]:
    """Inverse of `scored_name`: (tool, environment)."""
    tool, _, environment = name.partition(ENVIRONMENT_MARK)
    return tool, environment or STUDY_ENVIRONMENT


def implementation(name: str, *, brackets: bool = False):
    """The adapter-like object scoring `name`: a registry tool or a reference variant (with
    its proven brackets if `brackets`; only the reference proves any)."""
    if name in REFERENCE_VARIANTS:
        return ReferenceImplementation(name, REFERENCE_VARIANTS[name], brackets)
    if brackets:
        raise ValueError(f"{name!r} proves no brackets: only the reference does")

    if name not in REGISTRY:
        known = ", ".join(sorted([*REGISTRY, *REFERENCE_VARIANTS]))
        raise ValueError(f"unknown tool {name!r}; known tools: {known}")
    return REGISTRY[name]


def tool_version(impl: Adapter, environment: str = STUDY_ENVIRONMENT) -> str:
    """The version recorded with an implementation's scores in `environment` ("" if none)."""
    return describe([impl], environment)[impl.name][0]


NOT_OFFERED_2D = "not offered in 2D"
"""Begins the message of a 2D pair's error row for a metric the tool declares it does not
offer in 2D (`Adapter.not_offered_2d`), before the tool's own words."""


def outcome_rows(
    outcome,
    metrics: Iterable[str],
    context: Mapping[str, object],
    not_offered: Mapping[str, str] | None = None,
) -> list[dict]:
    """Tidy rows for one call's outcome: one row per metric the tool supports.

    A failed call gives every metric an error row with the tool's message, a metric that
    failed on its own (`Outcome.failed`) its own message; a metric the tool did not return is
    an error row too ("no value"), so nothing is silently missing. not_offered: the metrics
    the tool does not offer for these masks (2D); their error rows say so first.
    """
    warning_text = " | ".join(outcome.warnings)
    rows = []
    for metric in metrics:
        value = outcome.values.get(metric)
        error = outcome.error_of(metric)
        if error is not None:
            status, message, value = "error", error, math.nan
            if metric in (not_offered or {}):
                message = f"{NOT_OFFERED_2D}: {error}"
        elif value is None:
            status, message, value = "error", "the tool returned no value", math.nan
        else:
            value = float(value)
            status, message = status_of(value), warning_text
        low, high = outcome.brackets.get(metric, (math.nan, math.nan))
        rows.append(
            {
                **context,
                "metric": metric,
                "value": value,
                "status": status,
                "message": message[-MESSAGE_LIMIT:],
                "seconds": outcome.seconds,
                BRACKET_COLUMNS[0]: low,
                BRACKET_COLUMNS[1]: high,
            }
        )
    return rows


def score_pairs(
    tool: str,
    pairs: pd.DataFrame,
    *,
    dataset: str,
    settings: CallSettings,
    metrics: Sequence[str] = METRIC_KEYS,
    progress_every: int = 10,
    brackets: bool = False,
) -> pd.DataFrame:
    """Score every pair in `pairs` (rows of pairs.csv) with one tool; tidy rows out.

    The tool reads both mask files on the grid they were voxelized on, uncropped, exactly as
    a user's call would. Of `metrics`, the tool is asked for those it supports, all in one
    call, with `settings` (its environment among them). brackets: the reference's values
    with their proven brackets (BRACKET_COLUMNS; NaN without).
    """
    impl = implementation(tool, brackets=brackets)
    metrics = [m for m in METRIC_KEYS if m in impl.metrics and m in metrics]
    environment = settings.environment
    version = tool_version(impl, environment)
    rows: list[dict] = []
    started = time.perf_counter()
    for done, pair in enumerate(pairs.itertuples(index=False), start=1):
        outcome = invoke_files(impl, pair.path_a, pair.path_b, metrics=metrics, settings=settings)
        # Only a tool that declines a 2D metric needs the pair's dimension (a header read).
        two_d = bool(impl.not_offered_2d) and mask_dimension(pair.spacing, pair.path_a) == 2
        context = {
            "dataset": dataset,
            "case": pair.case,
            "oar": pair.oar,
            "category": pair.category,
            "spacing": pair.spacing,
            "tool": tool,
            "tool_version": version,
            "environment": environment,
        }
        rows.extend(outcome_rows(outcome, metrics, context, impl.not_offered_2d if two_d else None))
        if done % progress_every == 0 or done == len(pairs):
            log.info(
                "%s: %d/%d pairs scored, %.1f s elapsed",
                tool,
                done,
                len(pairs),
                time.perf_counter() - started,
            )
    return pd.DataFrame(rows, columns=[*SCORE_COLUMNS, *BRACKET_COLUMNS])


def mask_dimension(spacing: str, path: str | Path) -> int:
    """A pair's dimension: its voxel size's entries, or on the native grid the mask file's
    header's (the pixels are not read)."""
    if spacing != NATIVE:
        return len(parse_spacing_label(spacing))
    return len(maskio.array_shape(path))


def unavailable_rows(
    tool: str, reason: str, *, dataset: str, environment: str = STUDY_ENVIRONMENT
) -> pd.DataFrame:
    """The single row that records an unavailable tool once per run, not once per pair."""
    row = {c: "" for c in SCORE_COLUMNS} | {
        "dataset": dataset,
        "tool": tool,
        "tool_version": "",
        "environment": environment,
        "metric": "",
        "value": math.nan,
        "status": "unavailable",
        "message": reason,
        "seconds": math.nan,
    }
    return pd.DataFrame([row], columns=list(SCORE_COLUMNS))


def read_pairs(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate pairs.csv files; mask paths become absolute (they are relative to the CSV)."""
    frames = []
    for path in map(Path, paths):
        frame = pd.read_csv(path, dtype={"case": str})
        for column in ("path_a", "path_b"):
            frame[column] = [str((path.parent / p).resolve()) for p in frame[column]]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def collect(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One long table from the per-job score files, in a stable order, with the bracket
    columns last (NaN in the one-row records of tools not installed)."""
    frames = [pd.read_parquet(p) for p in paths]
    table = pd.concat([f for f in frames if len(f)], ignore_index=True)
    table = table.reindex(columns=[*SCORE_COLUMNS, *BRACKET_COLUMNS])
    return table.sort_values(
        ["tool", "environment", "spacing", "case", "oar", "metric"],
        kind="stable",
        ignore_index=True,
    )
