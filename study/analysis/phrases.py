"""Short texts about one tool that both the findings and the cards print: its Table A3 row
and its HD time beside the others'."""

from __future__ import annotations

import pandas as pd

from study.analysis.labels import tool_group, tool_label
from study.analysis.tables import EDGE_METRICS, edge_cell
from study.records import EDGE_CASES, REFERENCE


def milliseconds(seconds: float) -> str:
    """ "12.3 ms": a time in seconds, in milliseconds to three significant digits."""
    return f"{seconds * 1000:.3g} ms"


def edge_row(edge_cases: pd.DataFrame | None, tool: str) -> str:
    """A tool's row of Table A3 as text: "HD O1 ∞, O2 ∞, O3 NaN, S ✓; DSC ..."."""
    rows = None if edge_cases is None else edge_cases.loc[edge_cases["tool"] == tool]
    if rows is None or rows.empty:
        return "no edge-case record"
    parts = []
    for metric, cells in sorted(rows.groupby("metric"), key=lambda mc: EDGE_METRICS.index(mc[0])):
        by_case = {r["case"]: edge_cell(r) for r in cells.to_dict("records")}
        parts.append(
            f"{metric} " + ", ".join(f"{c} {by_case[c]}" for c in EDGE_CASES if c in by_case)
        )
    return "; ".join(parts)


def timing_of(medians: pd.Series, tool: str) -> str:
    """A tool's median HD time per case beside the reference's and the paper's tools'."""
    if tool not in medians.index:
        return "not timed (or every timing run failed)"
    text = f"median {milliseconds(medians[tool])} per case"
    if REFERENCE in medians.index:
        text += f" (the reference {milliseconds(medians[REFERENCE])})"
    tools = medians.drop(REFERENCE, errors="ignore").sort_values()
    text += f"; {list(tools.index).index(tool) + 1} of {len(tools)} timed tools by speed"
    paper_tools = tools.loc[[tool_group(t) == "paper" for t in tools.index]]
    if not paper_tools.empty:
        text += (
            f"; the paper's tools from {milliseconds(paper_tools.iloc[0])} "
            f"({tool_label(paper_tools.index[0])}) to {milliseconds(paper_tools.iloc[-1])} "
            f"({tool_label(paper_tools.index[-1])})"
        )
    return text
