"""The verdict table (`verdicts.verdict_table`) in words and display tables: the rule, a
sentence per metric and grid with the reason beside every verdict, the answer table that opens
a page (metric × grid: the tools to use with their share within, 95 % interval and worst Δ,
beside the readers' own scale), the strata, and each metric's full table. Nothing here
computes a verdict: every word comes from the table's rows, so a page read from
tables/recommendations.csv says what the run decided.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from study.analysis import advice, verdicts
from study.analysis.labels import format_number, ordered_tools, signed, tool_label

SHOWN = 3
"""Tools named per verdict in a sentence or a cell; the rest are counted."""


def twins_of(row) -> list[str]:
    """The tools sharing a verdict row with its `tool` (identical scores)."""
    identical = row.identical if isinstance(row.identical, str) else ""
    return [t for t in identical.split(", ") if t]


def tool_names(row) -> str:
    """ "Google DeepMind = pymia": a row's tool and those with identical scores."""
    return " = ".join(tool_label(t) for t in [row.tool, *twins_of(row)])


def recommended_tools(table: pd.DataFrame) -> list[str]:
    """Every tool of the verdict table, those sharing a row with a twin included."""
    return ordered_tools([t for row in table.itertuples() for t in [row.tool, *twins_of(row)]])


def listed(names: Sequence[str], shown: int = SHOWN) -> str:
    """ "A, B, C and 2 more" ("none" for no name)."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more if names else "none"


def seconds_text(seconds: float) -> str:
    """ "0.42 s" or "1.3 min" (a time per pair)."""
    if not np.isfinite(seconds):
        return "time not recorded"
    return f"{seconds:.2g} s" if seconds < 90 else f"{seconds / 60:.2g} min"


def tolerance_of(row) -> str:
    """ "±0.11 mm (a quarter of the readers' median)" or "±0.5 mm"."""
    text = f"±{row.tolerance:.2g} {row.unit}"
    if row.tolerance_basis == "readers":
        text += f" ({verdicts.READERS_SHARE:g} of the readers' median disagreement)"
    return text


def readers_text(row) -> str:
    """The readers' own scale on a grid: "0.45 [0.33, 0.63] mm" (median [IQR])."""
    if not np.isfinite(row.readers_median):
        return "–"
    unit = "%" if row.unit == "%pt" else row.unit
    return (
        f"{format_number(row.readers_median)} [{format_number(row.readers_q1)}, "
        f"{format_number(row.readers_q3)}] {unit}"
    )


def interval(row) -> str:
    """ "[-0.05, +0.59]" (the `advice.INTERVAL` of Δ) or "–"."""
    return f"[{signed(row.lo)}, {signed(row.hi)}]" if np.isfinite(row.lo) else "–"


def exact_route(row) -> str:
    """The reference as the exact route, with its measured time per pair on the grid."""
    return (
        f"the exact value: `python -m reference A B` (median {seconds_text(row.reference_seconds)}"
        f", at most {seconds_text(row.reference_max_seconds)} per pair on this grid)"
    )


def rule_text() -> str:
    """The verdict rule in words, from the constants that decide it (one statement)."""
    low, high = advice.INTERVAL
    return (
        "**The rule.** Each metric on each grid is judged on its own, never pooled, on the "
        "pairs the reference defines (a finite value; where it is inf or NaN, an empty mask, "
        "each tool's answer is a caution, not a failed Δ). The tolerance is the smaller of "
        f"{advice.tolerance_text('mm')} ({advice.tolerance_text('%pt')} for NSD) and "
        f"{verdicts.READERS_SHARE:g} of the readers' median disagreement on that grid (the "
        "reference's median value; 100 − the median NSD in %pt), so that a tool's error is "
        "small next to what the study measures. **use**: at least "
        f"{advice.MOST_PAIRS:.0%} of those pairs within the tolerance, no failure, and not "
        "measured to ignore the voxel size or to depend on the field of view; ranked by worst "
        "|Δ|, with the pairs outside the tolerance counted. **not measured**: the tool fails on "
        "every pair (it takes part in no comparison). **avoid**: every other tool, each with "
        "its measured reason. **closest**, where no tool is to be used: the "
        f"{verdicts.CLOSEST} with the narrowest interval holding {high - low:g} % of Δ (a "
        "published value is corrected by it), tools with a failure or a measured dependence "
        "after those without. Tools with identical scores on a grid share a row, or their "
        f"rows say what tells them apart. **no verdict**: fewer than {verdicts.MIN_PAIRS} "
        "pairs. Verdicts are given for the paper's five distance-based "
        "metrics and BIoU (DSC, the same voxel count in every tool, gets none)."
    )


def verdict_phrase(row) -> str:
    """One row in a sentence, its reason beside it: "MONAI (96% of 314 pairs within ...)"."""
    return f"{tool_names(row)} ({row.reason})"


def grid_verdict(group: pd.DataFrame) -> str:
    """One metric on one grid and stratum in a sentence, every verdict with its reason."""
    by = {v: list(group.loc[group["verdict"] == v].itertuples()) for v in verdicts.VERDICTS}
    parts = []
    if by["use"]:
        parts.append("use " + listed([verdict_phrase(r) for r in by["use"]]))
    elif by["closest"]:
        parts.append(
            "no tool passes; closest "
            + listed([verdict_phrase(r) for r in by["closest"]])
            + f"; {exact_route(by['closest'][0])}"
        )
    if by["avoid"]:
        parts.append("avoid " + "; ".join(verdict_phrase(r) for r in by["avoid"]))
    if by["not measured"]:
        parts.append("not measured: " + "; ".join(verdict_phrase(r) for r in by["not measured"]))
    if by["no verdict"] and not (by["use"] or by["avoid"] or by["closest"]):
        parts.append(f"no verdict ({by['no verdict'][0].reason})")
    return " · ".join(parts)


def of_stratum(table: pd.DataFrame, stratum: str = verdicts.ALL) -> pd.DataFrame:
    """The rows of one stratum (every grid's pairs by default)."""
    return table.loc[table["stratum"] == stratum]


def summary_lines(table: pd.DataFrame) -> list[str]:
    """One short line per metric: per grid the tools to use, or the closest, by name only
    (the reasons are in the verdict table)."""
    lines = []
    for metric, rows in of_stratum(table).groupby("metric", sort=False):
        parts = []
        for _, group in rows.groupby("spacing", sort=False):
            used = [tool_names(r) for r in group.itertuples() if r.verdict == "use"]
            closest = [tool_names(r) for r in group.itertuples() if r.verdict == "closest"]
            told = (
                f"use {listed(used)}"
                if used
                else f"none passes, closest {listed(closest)}"
                if closest
                else "no verdict"
            )
            parts.append(f"{group['grid'].iloc[0]}: {told}")
        lines.append(f"**{metric}** — " + " · ".join(parts) + ".")
    return lines


def answer_cell(group: pd.DataFrame) -> str:
    """The "use" cell of the answer table: each tool with its share within, interval and
    worst Δ; where none passes, the closest with theirs."""
    used = group.loc[group["verdict"] == "use"]
    rows = used if not used.empty else group.loc[group["verdict"] == "closest"]
    if rows.empty:
        return "no verdict"
    shown = [
        f"{tool_names(r)}: {verdicts.share(r.within)}, {interval(r)}, worst {signed(r.worst)}"
        for r in rows.itertuples()
    ]
    text = "; ".join(shown[:SHOWN]) + (
        f"; and {len(shown) - SHOWN} more" if len(shown) > SHOWN else ""
    )
    return text if not used.empty else f"none passes; closest {text}"


def answer_table(table: pd.DataFrame, stratum: str = verdicts.ALL) -> pd.DataFrame:
    """The answer first: per metric and grid, the readers' scale, the tolerance, the tools to
    use (share within, 95 % interval of Δ, worst Δ) or the closest, and the tools avoided or
    not measured, by name."""
    rows = []
    chosen = of_stratum(with_grid_pairs(table), stratum)
    for (metric, _), group in chosen.groupby(["metric", "spacing"], sort=False):
        first = next(group.itertuples())
        avoided = [tool_names(r) for r in group.itertuples() if r.verdict == "avoid"]
        missing = [tool_names(r) for r in group.itertuples() if r.verdict == "not measured"]
        rows.append(
            {
                "Metric": metric,
                "Grid": first.grid,
                "Pairs": f"{first.n_defined_grid:,}",
                "Readers' median [IQR]": readers_text(first),
                "Tolerance": f"±{first.tolerance:.2g} {first.unit}"
                + (
                    f" ({verdicts.READERS_SHARE:g} of the readers')"
                    if first.tolerance_basis == "readers"
                    else ""
                ),
                "Use (within, Δ on 95 % of pairs, worst Δ)": answer_cell(group),
                "Avoid": listed(avoided, 4),
                "Not measured": listed(missing, 4),
            }
        )
    return pd.DataFrame(rows)


def with_grid_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """`n_defined_grid`: the most pairs any tool's row counts on the metric, grid and stratum
    (the pairs the reference defines there)."""
    keys = ["metric", "spacing", "stratum"]
    return table.assign(n_defined_grid=table.groupby(keys)["n"].transform("max"))


def strata_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric, stratum and grid the tools to use (or the closest, marked), in one cell;
    the `ALL` stratum left out (the answer table has it)."""
    rows = table.loc[table["stratum"] != verdicts.ALL]
    if rows.empty:
        return pd.DataFrame()
    grids = list(dict.fromkeys(table.sort_values("spacing", key=_grid_key)["grid"]))
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for (metric, stratum, grid), group in rows.groupby(["metric", "stratum", "grid"], sort=False):
        n = int(group["n"].max())
        used = [tool_names(r) for r in group.itertuples() if r.verdict == "use"]
        closest = [tool_names(r) for r in group.itertuples() if r.verdict == "closest"]
        text = listed(used) if used else f"closest: {listed(closest)}" if closest else "no verdict"
        cells.setdefault((metric, stratum), {})[grid] = f"{text} (n = {n})"
    order = verdicts.stratum_order(rows["stratum"])
    keys = sorted(
        cells, key=lambda k: (list(dict.fromkeys(rows["metric"])).index(k[0]), order.index(k[1]))
    )
    return pd.DataFrame(
        [
            {"Metric": m, "Stratum": s, **{g: cells[m, s].get(g, "–") for g in grids}}
            for m, s in keys
        ]
    )


def _grid_key(spacings: pd.Series) -> pd.Series:
    """`advice.grid_order` of each spacing label, for `sort_values(key=...)`."""
    return spacings.map(advice.grid_order)


def verdicts_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Every tool's row of one metric on one grid and stratum: verdict (its word first), rank,
    tool(s), the numbers, the 95 % interval, and the reason beside the verdict, then the
    cautions."""
    low, high = advice.INTERVAL
    return pd.DataFrame(
        {
            "Verdict": rows["verdict"].str.upper(),
            "Rank": rows["rank"].map(lambda r: str(r) if r else "–"),
            "Tool": [tool_names(r) for r in rows.itertuples()],
            "Pairs": rows["n"],
            "Within": rows["within"].map(verdicts.share),
            "Median Δ": rows["median"].map(signed),
            "Worst Δ": rows["worst"].map(signed),
            f"Δ on {high - low:g} % of pairs": [interval(r) for r in rows.itertuples()],
            "Why": rows["reason"].fillna(""),
            "Cautions": rows["cautions"].fillna(""),
        }
    )
