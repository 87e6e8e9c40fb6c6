"""Table A3 against the paper's, cell by cell, and why a cell differs where the data can say.

A cell is one tool, metric and case (O1, O2, O3, S); it matches when our output class
(study.records.EDGE_OUTPUTS) is the paper's. The W mark is compared but does not decide a
match. A differing cell gets one cause, by the first rule that applies (`cause`):

1. the environment: our output is an error whose message says the installed libraries lack
   something the tool calls (`ENVIRONMENT_ERRORS`), not the tool's designed handling;
2. another tool version than the paper's (Table 1);
3. otherwise the tool's own handling, in the paper's version, of our probe's call.

Add a pattern to `ENVIRONMENT_ERRORS` to recognise another environment failure; the table's
marking (tables.edge_cell) and the findings both read it from here.
"""

from __future__ import annotations

import re

import pandas as pd

from study.analysis import paper
from study.analysis.labels import tool_list

ENVIRONMENT_ERRORS: tuple[tuple[re.Pattern, str], ...] = (
    (
        re.compile(r"`?np\.(\w+)`? was removed in the NumPy 2\.0 release"),
        "NumPy 2 removed np.{0}, which the tool calls",
    ),
    (
        re.compile(r"module 'numpy' has no attribute '(\w+)'"),
        "the installed NumPy has no np.{0}, which the tool calls",
    ),
)
"""Error messages that come from the environment (a library API the tool calls is missing),
each with the cause to print ({0} is the pattern's first group)."""

CELL_COLUMNS = (
    "tool",
    "metric",
    "case",
    "paper_output",
    "paper_warned",
    "recorded",
    "output",
    "warned",
    "version",
    "paper_version",
    "message",
    "match",
    "cause",
)


def environment_error(message: object) -> str | None:
    """The cause when an error message says the environment lacks what the tool calls."""
    for pattern, cause in ENVIRONMENT_ERRORS:
        found = pattern.search(str(message or ""))
        if found:
            return cause.format(*found.groups())
    return None


def cause(output: str, message: object, version: object, paper_version: str | None) -> str:
    """Why a cell differs from the paper's (module docstring, rules 1 to 3)."""
    environment = environment_error(message) if output == "error" else None
    if environment:
        return f"environment: {environment}"
    if paper_version is None:
        return f"tool version {version} (the paper gives a commit, not a version)"
    if str(version) != paper_version:
        return f"tool version {version} (paper {paper_version})"
    return f"the tool's own handling in the paper's version {paper_version}"


def compare(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """Every cell of the paper's Table A3 (`theirs`, as `paper.table_a3`) beside ours (rows
    tool, version, metric, case, output, warned, message); `recorded` is False where we have
    no record (a tool not available here), and then the cell is neither a match nor not."""
    keys = ["tool", "metric", "case"]
    mine = ours.drop_duplicates(keys).set_index(keys)
    versions = paper.versions()
    rows = []
    for cell in theirs.itertuples():
        key = (cell.tool, cell.metric, cell.case)
        recorded = key in mine.index
        row = mine.loc[key] if recorded else None
        output = str(row["output"]) if recorded else ""
        match = recorded and output == cell.output
        rows.append(
            {
                "tool": cell.tool,
                "metric": cell.metric,
                "case": cell.case,
                "paper_output": cell.output,
                "paper_warned": bool(cell.warned),
                "recorded": recorded,
                "output": output,
                "warned": bool(row["warned"]) if recorded else False,
                "version": str(row["version"]) if recorded else "",
                "paper_version": versions.get(cell.tool),
                "message": str(row.get("message", "") or "") if recorded else "",
                "match": match,
                "cause": ""
                if match or not recorded
                else cause(output, row.get("message"), row["version"], versions.get(cell.tool)),
            }
        )
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))


def tools_text(cells: pd.DataFrame) -> str:
    """ "9 tools; not recorded here: Anima, EvaluateSegmentation" for a `compare` result."""
    recorded = set(cells.loc[cells["recorded"], "tool"])
    missing = set(cells["tool"]) - recorded
    text = f"{len(recorded)} tools"
    return text + (f"; not recorded here: {tool_list(missing)}" if missing else "")
