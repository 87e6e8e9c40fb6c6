"""Today's tool versions against the paper's: the same pairs and edge cases in two environments.

With `environments: [study, paper]` every tool is scored and probed in both (the adapter code
is the same). Two tables come of it:

- Table A3 of the other environment (`table_a3_<environment>`), made as today's is;
- the drift table (`table_drift`): per tool, metric and voxel size, over the pairs both
  environments scored, how many values are identical (the same float, or the same non-finite
  status) and the largest |paper − study| of the others; and every edge-case cell whose
  output differs, with what the data can say of why.

Why a cell changed, told from the versions the records carry: when the tool's own version is
the same in both environments, only the environment changed (numpy, scipy: DeepMind 0.1 under
numpy 2 raises where numpy 1 gave ∞), so the difference is the environment's, not the tool's
designed handling; when the versions differ, the tool changed (and its environment with it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from adapters.environments import STUDY_ENVIRONMENT
from study.analysis.labels import ordered_tools, paper_rows, tool_label
from study.analysis.read import load_edge_cases, read_scores
from study.analysis.rendering import Table, write_table
from study.analysis.tables import edge_cell, table_a3
from study.records import spacing_title
from study.scoring.score import split_scored_name

PAIR_KEYS = ["tool", "case", "oar", "spacing", "metric"]


def table_a3_of(documents: Sequence[Mapping], environment: str) -> Table:
    """Table A3 of the edge-case records of one environment other than the study's."""
    table = table_a3(documents)
    return replace(
        table,
        name=f"table_a3_{environment}",
        title=f"Table A3 ({environment} environment): edge-case handling",
        notes=[*table.notes, f"Tools run in the {environment} environment's versions."],
    )


def _same(first: float, second: float) -> bool:
    return first == second or (math.isnan(first) and math.isnan(second))


def score_drift(scores: pd.DataFrame, environment: str) -> pd.DataFrame:
    """Per tool, metric and voxel size: pairs both environments scored, identical values,
    the largest |environment − study| of the rest, and the versions on either side.

    `scores` holds the rows of both environments (`read_scores(path, None)`). Error rows
    count as values of NaN, so a pair that fails in one environment only is "not identical"
    with an infinite difference, and is counted apart as `status_changed`.
    """
    scored = scores.loc[scores["status"] != "unavailable"]  # a tool missing has no pairs
    today = scored.loc[scored["environment"] == STUDY_ENVIRONMENT]
    other = scored.loc[scored["environment"] == environment]
    merged = today.merge(other, on=PAIR_KEYS, suffixes=("_study", "_other"))
    if merged.empty:
        return pd.DataFrame(
            columns=["tool", "metric", "spacing", "version_study", "version_other", "pairs"]
            + ["identical", "status_changed", "max_abs_difference"]
        )
    merged["identical"] = [
        _same(a, b) and s == t
        for a, b, s, t in zip(
            merged["value_study"],
            merged["value_other"],
            merged["status_study"],
            merged["status_other"],
            strict=True,
        )
    ]
    merged["status_changed"] = merged["status_study"] != merged["status_other"]
    both_finite = merged["status_study"].eq("ok") & merged["status_other"].eq("ok")
    merged["difference"] = (merged["value_other"] - merged["value_study"]).abs().where(both_finite)
    grouped = merged.groupby(["tool", "metric", "spacing"], sort=False)
    return grouped.agg(
        version_study=("tool_version_study", "first"),
        version_other=("tool_version_other", "first"),
        pairs=("identical", "size"),
        identical=("identical", "sum"),
        status_changed=("status_changed", "sum"),
        max_abs_difference=("difference", "max"),
    ).reset_index()


def _records(documents: Sequence[Mapping]) -> dict[tuple[str, str, str], tuple[Mapping, str]]:
    """(tool, metric, case) -> (record, the tool's version) of edge-case documents."""
    return {
        (document["tool"], record["metric"], record["case"]): (record, document["version"])
        for document in documents
        for record in document["records"]
    }


def edge_changes(
    today: Sequence[Mapping], other: Sequence[Mapping], environment: str
) -> pd.DataFrame:
    """Every edge-case cell whose output differs between the two environments, and why."""
    ours, theirs = _records(today), _records(other)
    rows = []
    for key in [key for key in ours if key in theirs]:
        (record, version), (then, version_then) = ours[key], theirs[key]
        if edge_cell(record) == edge_cell(then):
            continue
        why = (
            f"the environment (the same {version} in both): not the tool's designed handling"
            if version == version_then
            else f"the tool's version ({version_then} → {version})"
        )
        rows.append(
            {
                "tool": key[0],
                "metric": key[1],
                "case": key[2],
                environment: edge_cell(then),
                STUDY_ENVIRONMENT: edge_cell(record),
                "why": why,
                "message": record.get("message", "")[:160],
            }
        )
    columns = ["tool", "metric", "case", environment, STUDY_ENVIRONMENT, "why", "message"]
    return pd.DataFrame(rows, columns=columns)


def _difference_cell(row: Mapping) -> str:
    if row["identical"] == row["pairs"]:
        return "identical"
    if math.isnan(row["max_abs_difference"]):
        return "—"
    return f"{row['max_abs_difference']:.2g}"  # round-off shows as such, not as 0.00


@dataclass
class Comparison:
    """One environment's scores and edge cases against the study's."""

    environment: str
    drift: pd.DataFrame  # score_drift, in the tables' tool order
    changes: pd.DataFrame  # edge_changes


def compare(
    scores: pd.DataFrame, today: Sequence[Mapping], other: Sequence[Mapping], environment: str
) -> Comparison:
    """Score drift and edge-case changes of `environment` against the study's environment;
    `scores` holds both environments' rows, `today` and `other` their edge-case records.

    Of the paper's tools only: the other environments hold the paper's versions, which a tool
    added since does not have (the scoring plan scores none there; a table from elsewhere
    that did is not compared either)."""
    drift = score_drift(paper_rows(scores, "tool"), environment)
    order = ordered_tools(list(drift["tool"].unique()))
    drift = drift.sort_values(
        "tool", key=lambda tools: tools.map(order.index), kind="stable", ignore_index=True
    )
    changes = paper_rows(edge_changes(today, other, environment), "tool")
    return Comparison(environment, drift, changes.reset_index(drop=True))


def _changed_cells(comparison: Comparison) -> list[str]:
    """One sentence per tool: which edge-case cells changed, and why."""
    env, changes = comparison.environment, comparison.changes
    return [
        f"{tool_label(tool)}, {rows['why'].iloc[0]}: "
        + ", ".join(
            f"{r.metric} {r.case} {r[env]} → {r[STUDY_ENVIRONMENT]}" for _, r in rows.iterrows()
        )
        for tool, rows in changes.groupby("tool", sort=False)
    ]


def drift_table(comparison: Comparison) -> Table:
    """The drift table: score drift per tool, metric and voxel size; under it, the edge-case
    cells that changed."""
    env, drift = comparison.environment, comparison.drift
    display = pd.DataFrame(
        {
            "Tool": [tool_label(tool) for tool in drift["tool"]],
            f"Version ({env} → {STUDY_ENVIRONMENT})": [
                f"{a} → {b}"
                for a, b in zip(drift["version_other"], drift["version_study"], strict=True)
            ],
            "Metric": drift["metric"],
            "Voxel size": [spacing_title(label) for label in drift["spacing"]],
            "Identical / pairs": [
                f"{i} / {n}" for i, n in zip(drift["identical"], drift["pairs"], strict=True)
            ],
            "Status changed": drift["status_changed"].astype(int),
            "Largest |Δ| of finite values": [_difference_cell(r) for _, r in drift.iterrows()],
        }
    )
    notes = [
        f"Each tool scored on the same pairs in the {env} environment's versions and in "
        f"today's ({STUDY_ENVIRONMENT}); identical = the same float or the same non-finite "
        "status. Status changed: pairs with a value in one environment and a non-finite "
        "value or an error in the other.",
        f"Edge-case cells that changed, {env} → {STUDY_ENVIRONMENT} "
        f"({len(comparison.changes)}; O1: A empty, O2: B empty, O3: both, S: swapped):",
        *_changed_cells(comparison),
    ]
    return Table(
        "table_drift", f"Drift since the {env} environment's versions", drift, display, notes
    )


def findings_section(comparison: Comparison) -> tuple[str, list[str]]:
    """Title and sentences of the findings' section on the versions since the other
    environment's."""
    title = f"Since the {comparison.environment} environment's versions"
    drift, changes = comparison.drift, comparison.changes
    if drift.empty:
        return title, ["No tool was scored in both environments."]
    steady = {
        tool: bool((rows["identical"] == rows["pairs"]).all())
        for tool, rows in drift.groupby("tool", sort=False)
    }
    lines = []
    same = [tool_label(tool) for tool, is_same in steady.items() if is_same]
    if same:
        lines.append(f"Identical on every scored pair, metric and voxel size: {', '.join(same)}.")
    for tool in [tool for tool, is_same in steady.items() if not is_same]:
        rows = drift.loc[drift["tool"] == tool]
        worst = rows.loc[rows["max_abs_difference"].fillna(0).idxmax()]
        lines.append(
            f"{tool_label(tool)} ({rows['version_other'].iloc[0]} → "
            f"{rows['version_study'].iloc[0]}): {int(rows['identical'].sum())} of "
            f"{int(rows['pairs'].sum())} values identical, {int(rows['status_changed'].sum())} "
            f"changed status; largest |Δ| {_difference_cell(worst)} ({worst['metric']}, "
            f"{spacing_title(worst['spacing'])})."
        )
    by_environment = changes["why"].str.startswith("the environment").sum()
    lines.append(
        f"Edge cases: {len(changes)} cells changed, {by_environment} of them with the tool's "
        "version unchanged, so by the environment (numpy, scipy), not by the tool's designed "
        "handling."
    )
    lines += _changed_cells(comparison)
    return title, lines


def compare_files(paths: Sequence[str], environment: str) -> Comparison:
    """`compare` from the scores table and both environments' edge-case files."""
    scores = [path for path in paths if path.endswith(".parquet")]
    today, other = _split_edge_files([path for path in paths if path.endswith(".json")])
    return compare(
        read_scores(scores[0], None), load_edge_cases(today), load_edge_cases(other), environment
    )


# --- entry points of the workflow rules (paths in, files out) -------------------------------


def _split_edge_files(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Edge-case files of the study's environment and of others, told by their names."""
    stems = {path: split_scored_name(Path(path).stem)[1] for path in paths}
    today = [path for path, env in stems.items() if env == STUDY_ENVIRONMENT]
    return today, [path for path in paths if path not in today]


def make_environment_a3(
    paths: Sequence[str], outputs: Mapping[str, str], environment: str
) -> Table:
    """Table A3 of `environment` from its edge-case files; writes csv/md/tex/html outputs."""
    table = table_a3_of(load_edge_cases(paths), environment)
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table


def make_drift_table(paths: Sequence[str], outputs: Mapping[str, str], environment: str) -> Table:
    """The drift table from the scores and edge-case files; writes csv/md/tex/html outputs."""
    table = drift_table(compare_files(paths, environment))
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table
