"""The paper's tables, built from the scores table and the edge-case records.

Each table has a numeric form (written as CSV, one row per statistic group, for re-analysis)
and a display form (strings laid out as in the paper) rendered to Markdown, LaTeX and HTML
(the HTML goes into the Snakemake report).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from adapters.environments import STUDY_ENVIRONMENT
from study.analysis import statistics as st
from study.analysis.edge_comparison import environment_error
from study.oars import ordered_categories
from study.records import EDGE_CASES, EDGE_OUTPUTS, grid_labels, spacing_title
from vocabulary import METRIC_KEYS, TESTED_KEYS


@dataclass
class Table:
    """One table: numeric rows for the CSV, a display frame, a title and notes."""

    name: str
    title: str
    numeric: pd.DataFrame
    display: pd.DataFrame
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Number formatting
# --------------------------------------------------------------------------------------------


def format_number(value: float) -> str:
    """About three significant digits, as in the paper: 0.09, 4.25, 34.8, 115; "–" if NaN."""
    if value is None or not np.isfinite(value):
        return "–" if value is None or np.isnan(value) else ("∞" if value > 0 else "−∞")
    magnitude = abs(value)
    text = (
        f"{value:.0f}"
        if magnitude >= 100
        else f"{value:.1f}"
        if magnitude >= 10
        else f"{value:.2f}"
    )
    return text.replace("-", "−")


def range_cell(row: Mapping) -> str:
    """ "min | max" of one summary row."""
    return f"{format_number(row['min'])} | {format_number(row['max'])}"


def mean_cell(row: Mapping) -> str:
    """ "mean ± SD" of one summary row; SD is "–" when only one finite Δ exists."""
    return f"{format_number(row['mean'])} ± {format_number(row['sd'])}"


def excluded_cell(row: Mapping) -> str:
    """Counts of Δ left out of the statistics, by reason; "0" when none was left out."""
    parts = []
    if row["n_nonfinite"]:
        parts.append(f"{int(row['n_nonfinite'])} non-finite")
    if row["n_failed"]:
        parts.append(f"{int(row['n_failed'])} failed")
    if row["n_no_reference"]:
        parts.append(f"{int(row['n_no_reference'])} no ref.")
    return ", ".join(parts) or "0"


# --------------------------------------------------------------------------------------------
# Δ tables (A1, A2, A4)
# --------------------------------------------------------------------------------------------


def _delta_display(
    summary: pd.DataFrame,
    column_key: str,
    column_order: Sequence[str],
    metrics: Sequence[str],
    column_title,
) -> pd.DataFrame:
    """Rows (metric, tool), columns per value of `column_key`: range, mean ± SD, excluded."""
    tools = st.ordered_tools(summary["tool"])
    grouped = st.shows_groups(tools)
    indexed = summary.set_index(["metric", "tool", column_key])
    rows = []
    for metric in metrics:
        for tool in tools:
            if not any((metric, tool, c) in indexed.index for c in column_order):
                continue
            row = {
                "Δ metric": f"Δ{metric} ({st.display_unit(metric)})",
                **({"Group": st.group_title(tool)} if grouped else {}),
                "Tool": st.tool_label(tool),
            }
            for column in column_order:
                title = column_title(column)
                if (metric, tool, column) not in indexed.index:
                    row.update(
                        {
                            f"{title}: min | max": "",
                            f"{title}: mean ± SD": "",
                            f"{title}: excluded": "n/a",
                        }
                    )
                    continue
                stats = indexed.loc[(metric, tool, column)]
                row.update(
                    {
                        f"{title}: min | max": range_cell(stats),
                        f"{title}: mean ± SD": mean_cell(stats),
                        f"{title}: excluded": excluded_cell(stats),
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)


def with_group(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with a `group` column (a `statistics.TOOL_GROUPS` key) after its `tool` column:
    the CSV says which tools are the paper's and which came since, one row per statistic."""
    grouped = frame.copy()
    grouped.insert(grouped.columns.get_loc("tool") + 1, "group", grouped["tool"].map(st.tool_group))
    return grouped


def groups_note(tools: Sequence[str]) -> list[str]:
    """What the Group column means, for a table that shows one (`statistics.shows_groups`)."""
    if not st.shows_groups(tools):
        return []
    shown = {st.tool_group(t) for t in tools}
    meaning = {
        "paper": "the eleven tools of the paper",
        "later": "tools added since the paper (not in the paper's tables)",
        "cross-check": "a check of the reference, not a tool the paper compared",
        "other": "a tool without an adapter here",
    }
    return [
        "Group: "
        + "; ".join(f"{st.TOOL_GROUPS[g]}: {meaning[g]}" for g in meaning if g in shown)
        + "."
    ]


def _versions_note(scores: pd.DataFrame, tools: Sequence[str]) -> str:
    """ "Tool versions: MONAI 1.6.1; ..." for the tools of a table."""
    scores = st.measured(scores)
    return "Tool versions: " + st.tool_versions(scores.loc[scores["tool"].isin(list(tools))]) + "."


def _delta_notes(n_pairs: int) -> list[str]:
    return [
        "Δ = tool − reference on the same mask pair; positive Δ over-estimates the metric. "
        "NSD, BIoU and DSC in percentage points (%pt), distances in mm; SD with ddof = 1.",
        "Statistics use finite Δ only; 'excluded' counts the rest: non-finite (NaN or inf on "
        "either side), failed (tool error or unavailable), no ref. (reference missing).",
        f"Mask pairs: {n_pairs}.",
    ]


def _n_pairs(scores: pd.DataFrame) -> int:
    return int(st.measured(scores)[["dataset", "case", "oar"]].drop_duplicates().shape[0])


def unavailable_note(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> list[str]:
    """ "Not available here: Anima (why)." when configured tools have no scores at all."""
    missing = {t: m for t, m in st.unavailable_tools(scores).items() if tools is None or t in tools}
    if not missing:
        return []
    return [
        "Not available here (no scores): "
        + "; ".join(
            f"{st.tool_label(t)} ({shorten(missing[t])})" for t in st.ordered_tools(missing)
        )
        + "."
    ]


def shorten(message: str, limit: int = 90) -> str:
    """The first clause of a long message, so a table note stays readable."""
    first = message.split(" (")[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _metrics_present(frame: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    present = set(frame["metric"])
    return [m for m in metrics if m in present]


def table_a1(
    scores: pd.DataFrame, tools: Sequence[str] | None = None, spacings: Sequence[str] | None = None
) -> Table:
    """Table A1: Δ per voxel size, metric and tool (min | max, mean ± SD, excluded counts)."""
    delta = st.deltas(scores, tools)
    summary = st.summarize_deltas(delta, ["metric", "spacing", "tool"])
    order = st.ordered_spacings(summary["spacing"], spacings)
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "spacing", order, metrics, spacing_title)
    notes = (
        _delta_notes(_n_pairs(scores))
        + groups_note(summary["tool"].unique())
        + [_versions_note(scores, delta["tool"].unique())]
        + unavailable_note(scores, tools)
    )
    return Table(
        "table_a1",
        "Table A1: Δ against the reference per voxel size",
        with_group(_sort_numeric(summary, ["metric", "tool", "spacing"], order)),
        display,
        notes,
    )


def table_a2(scores: pd.DataFrame, tools: Sequence[str] | None = None) -> Table:
    """Table A2: Δ over all voxel sizes, stratified by OAR category."""
    delta = st.deltas(scores, tools)
    summary = st.summarize_deltas(delta, ["metric", "category", "tool"])
    order = ordered_categories(summary["category"])
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "category", order, metrics, str)
    notes = _delta_notes(_n_pairs(scores)) + [
        "All voxel sizes pooled.",
        *groups_note(summary["tool"].unique()),
        _versions_note(scores, delta["tool"].unique()),
        *unavailable_note(scores, tools),
    ]
    return Table(
        "table_a2",
        "Table A2: Δ against the reference by OAR category",
        with_group(_sort_numeric(summary, ["metric", "tool", "category"], order)),
        display,
        notes,
    )


def table_a4(scores: pd.DataFrame, spacings: Sequence[str] | None = None) -> Table:
    """Table A4: Δ of the reference meshed with marching cubes / surface nets against the
    reference's discrete marching cubes."""
    variants = [v for v in st.REFERENCE_MESHING_VARIANTS if v in set(scores["tool"])]
    if not variants:
        raise ValueError(
            "scores table has no reference meshing variants "
            f"{list(st.REFERENCE_MESHING_VARIANTS)}; Table A4 needs them"
        )
    delta = st.deltas(scores, variants)
    summary = st.summarize_deltas(delta, ["metric", "spacing", "tool"])
    order = st.ordered_spacings(summary["spacing"], spacings)
    metrics = _metrics_present(summary, TESTED_KEYS)
    display = _delta_display(summary, "spacing", order, metrics, spacing_title)
    notes = [
        "Δ = variant − reference (discrete marching cubes) on the same mask pair; NSD and "
        "BIoU in percentage points.",
        f"Mask pairs: {_n_pairs(scores)}.",
    ]
    return Table(
        "table_a4",
        "Table A4: Δ of other meshing algorithms against discrete marching cubes",
        _sort_numeric(summary, ["metric", "tool", "spacing"], order),
        display,
        notes,
    )


def _sort_numeric(summary: pd.DataFrame, keys: Sequence[str], last_order: Sequence[str]):
    """Numeric table sorted by metric, tool (study order) and the last key's given order."""
    metric_rank = {m: i for i, m in enumerate(METRIC_KEYS)}
    tool_rank = {t: i for i, t in enumerate(st.ordered_tools(summary["tool"]))}
    last_rank = {v: i for i, v in enumerate(last_order)}
    ranked = summary.assign(
        _m=summary["metric"].map(metric_rank),
        _t=summary["tool"].map(tool_rank),
        _l=summary[keys[-1]].map(last_rank),
    )
    return (
        ranked.sort_values(["_m", "_t", "_l"])
        .drop(columns=["_m", "_t", "_l"])
        .reset_index(drop=True)
    )


# --------------------------------------------------------------------------------------------
# Wilcoxon table
# --------------------------------------------------------------------------------------------


def p_cell(row: Mapping) -> str:
    """Corrected p as text; marks identical and untestable pairs instead of a number."""
    if row["status"] == "untestable":
        return "no common finite scores"
    if row["status"] == "identical":
        return "identical (1)"
    return f"{row['p_corrected']:.3g}"


def table_wilcoxon(wilcoxon: pd.DataFrame, n_implementations: int) -> Table:
    """Pairwise Wilcoxon table: one row per voxel size, metric and pair, corrected p."""
    if wilcoxon.empty:
        raise ValueError("Wilcoxon table is empty: no implementations or voxel sizes")
    factor = int(wilcoxon["factor"].iloc[0])
    display = pd.DataFrame(
        {
            "Voxel size": wilcoxon["spacing"].map(spacing_title),
            "Metric": wilcoxon["metric"],
            "Implementation A": wilcoxon["tool_a"].map(st.tool_label),
            "Implementation B": wilcoxon["tool_b"].map(st.tool_label),
            "n": wilcoxon["n_common"].astype(int),
            "p (raw)": [("–" if not np.isfinite(p) else f"{p:.3g}") for p in wilcoxon["p_value"]],
            f"p × {factor:,} (capped at 1)": [p_cell(r) for r in wilcoxon.to_dict("records")],
            "Significant": np.where(wilcoxon["significant"], "yes", "no"),
        }
    )
    n_metrics = wilcoxon["metric"].nunique()
    n_spacings = wilcoxon["spacing"].nunique()
    notes = [
        f"Paired two-sided Wilcoxon signed-rank tests (scipy), Bonferroni factor {factor:,} = "
        f"{n_spacings} voxel sizes × {n_metrics} metrics × C({n_implementations}, 2) pairs; "
        f"significant when p × {factor:,} < {st.ALPHA}.",
        "n = mask pairs where both implementations gave a finite score. 'identical': every "
        "paired difference is 0. 'no common finite scores': not testable (e.g. a tool that "
        "lacks the metric).",
    ]
    return Table(
        "table_wilcoxon",
        "Pairwise Wilcoxon signed-rank tests, Bonferroni-corrected",
        wilcoxon,
        display,
        notes,
    )


# --------------------------------------------------------------------------------------------
# Table A3: edge cases
# --------------------------------------------------------------------------------------------

EDGE_SYMBOLS: dict[str, str] = {
    "0": "0",
    "1": "1",
    "nan": "NaN",
    "inf": "∞",
    "-inf": "−∞",
    "float_max": "∞*",
    "error": "E",
    "empty": "E*",
    "unchanged": "✓",
    "changed": "✗",
}
"""Display of each output class; "number" shows the value itself."""

EDGE_METRICS: tuple[str, ...] = ("DSC", *(m for m in METRIC_KEYS if m != "DSC"))
"""Table A3's metric order, as the paper's: DSC first."""

ENVIRONMENT_MARK = "†"
"""Appended to E when the error came from the environment, not the tool's handling."""

EDGE_LEGEND = (
    "NaN: not a number; ∞*: a very large number standing in for infinity; E: error; "
    f"E{ENVIRONMENT_MARK}: an error raised by the environment rather than by the tool's "
    "handling (a library function the tool calls is missing here, e.g. removed in NumPy 2); "
    "E*: empty output without an error message; W: warning printed; ✓/✗: score "
    "unchanged/changed when A and B are swapped; a number is the value returned; "
    "blank: metric not offered by the tool."
)


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


def edge_cell(record: Mapping) -> str:
    """Display of one edge-case record: the output class (or value) plus W if warned."""
    output = record["output"]
    if output == "number":
        text = format_number(float(record.get("value") or "nan"))
    else:
        text = EDGE_SYMBOLS[output]
    if output == "error" and environment_error(record.get("message")):
        text += ENVIRONMENT_MARK
    return text + ("W" if record.get("warned") else "")


def table_a3(documents: Sequence[Mapping]) -> Table:
    """Table A3: per tool and metric, O1 / O2 / O3 / S in the paper's layout (DSC included)."""
    rows = []
    for document in documents:
        for record in document["records"]:
            rows.append(
                {
                    "tool": document["tool"],
                    "version": document["version"],
                    "metric": record["metric"],
                    "case": record["case"],
                    "output": record["output"],
                    "value": record.get("value", ""),
                    "warned": bool(record.get("warned")),
                    "message": record.get("message", ""),
                    "cell": edge_cell(record),
                }
            )
    numeric = pd.DataFrame(
        rows,
        columns=[
            "tool",
            "version",
            "metric",
            "case",
            "output",
            "value",
            "warned",
            "message",
            "cell",
        ],
    )
    metrics = [m for m in EDGE_METRICS if m in set(numeric["metric"])]
    display_rows = []
    tool_order = st.ordered_tools([d["tool"] for d in documents])
    grouped = st.shows_groups(tool_order)
    for document in sorted(documents, key=lambda d: tool_order.index(d["tool"])):
        cells = numeric.loc[numeric["tool"] == document["tool"]].set_index(["metric", "case"])
        # A tool missing here has no version and no records: say so rather than print None.
        version = (
            document["version"] if document.get("status") != "unavailable" else "not installed"
        )
        row = {
            **({"Group": st.group_title(document["tool"])} if grouped else {}),
            "Tool": st.tool_label(document["tool"]),
            "Version": str(version),
        }
        for metric in metrics:
            for case in EDGE_CASES:
                key = (metric, case)
                row[f"{metric} {case}"] = cells.loc[key, "cell"] if key in cells.index else ""
        display_rows.append(row)
    notes = [
        "O1: A empty; O2: B empty; O3: both empty; S: A and B swapped.",
        EDGE_LEGEND,
        *groups_note(tool_order),
    ]
    return Table(
        "table_a3",
        "Table A3: edge-case handling",
        with_group(numeric),
        pd.DataFrame(display_rows),
        notes,
    )


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def pipe_table(frame: pd.DataFrame, numbers: bool = True) -> str:
    """A display frame as a Markdown pipe table ("(no rows)" when empty); `numbers` False
    keeps every cell as written ("+0.50" stays signed, not parsed as a number)."""
    # A bare "|" (as in "min | max") would split a cell of a pipe table.
    frame = frame.rename(columns=lambda c: str(c).replace("|", "\\|"))
    frame = frame.map(lambda v: str(v).replace("|", "\\|"))
    if frame.empty:
        return "(no rows)"
    return frame.to_markdown(index=False, disable_numparse=not numbers)


def render_markdown(table: Table) -> str:
    """Title, the display frame as a pipe table, and the notes."""
    notes = "\n".join(f"- {note}" for note in table.notes)
    return f"## {table.title}\n\n{pipe_table(table.display)}\n\n{notes}\n"


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "±": r"$\pm$",
    "∞": r"$\infty$",
    "−": r"$-$",
    "×": r"$\times$",
    "✓": r"\checkmark{}",
    "✗": r"$\times$",
    "–": "--",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX specials and map the tables' Unicode symbols to math mode."""
    return "".join(_LATEX_SPECIALS.get(char, char) for char in str(text))


def render_latex(table: Table) -> str:
    """A `table` float with a `tabular` of the display frame; notes below it.

    Uses only core LaTeX plus amssymb's \\checkmark, so it compiles in any journal template.
    """
    frame = table.display
    columns = list(frame.columns)
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\scriptsize",
        rf"\caption{{{latex_escape(table.title)}}}",
        r"\begin{tabular}{" + "l" * max(1, len(columns)) + "}",
        r"\hline",
        " & ".join(latex_escape(c) for c in columns) + r" \\",
        r"\hline",
    ]
    for record in frame.itertuples(index=False):
        lines.append(" & ".join(latex_escape(v) for v in record) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    lines += [r"\par\smallskip " + latex_escape(note) for note in table.notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def render_html(table: Table) -> str:
    """A self-contained HTML page of the table (what the Snakemake report embeds)."""
    body = table.display.to_html(index=False, border=0, classes="table", na_rep="")
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in table.notes)
    style = (
        "body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
        "th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;"
        "white-space:nowrap}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
        f"{html.escape(table.title)}</title><style>{style}</style></head><body>"
        f"<h2>{html.escape(table.title)}</h2>{body}<ul>{notes}</ul></body></html>\n"
    )


def write_table(
    table: Table,
    csv_path: str | Path,
    md_path: str | Path,
    tex_path: str | Path,
    html_path: str | Path | None = None,
) -> None:
    """Write the numeric CSV and the Markdown, LaTeX (and optionally HTML) renderings."""
    for path in (csv_path, md_path, tex_path, html_path):
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.numeric.to_csv(csv_path, index=False)
    Path(md_path).write_text(render_markdown(table), encoding="utf-8")
    Path(tex_path).write_text(render_latex(table), encoding="utf-8")
    if html_path is not None:
        Path(html_path).write_text(render_html(table), encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Entry points of the workflow rules (paths in, files out)
# --------------------------------------------------------------------------------------------


def read_scores(path: str | Path, environment: str | None = STUDY_ENVIRONMENT) -> pd.DataFrame:
    """The scores table at `path`, checked for the columns the analysis needs: the rows of
    `environment` (every table and figure is of today's versions), or all rows (None)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: scores table not found (run the collect rule first)")
    scores = pd.read_parquet(path)
    st.check_scores(scores, str(path))
    if environment is not None:
        scores = scores.loc[scores["environment"] == environment].reset_index(drop=True)
    if scores.empty:
        raise ValueError(f"{path}: scores table has no rows")
    return scores


def configured_spacings(config: Mapping) -> list[str]:
    """Grid labels of the configuration, in its order: its voxel sizes, then the native grid
    when it scores one."""
    return grid_labels(config)


def configured_tools(config: Mapping, scores: pd.DataFrame) -> list[str]:
    """Configured tools (and cross-checks) that appear in the scores table."""
    wanted = [*config.get("tools", []), *config.get("cross_checks", [])]
    present = set(scores["tool"])
    return [t for t in wanted if t in present]


def make_delta_table(which: str, scores_path, outputs: Mapping[str, str], config: Mapping) -> Table:
    """Build Table A1, A2 or A4 from the scores file and write csv/md/tex/html outputs."""
    scores = read_scores(scores_path)
    spacings = configured_spacings(config)
    tools = configured_tools(config, scores) or None
    builders = {
        "a1": lambda: table_a1(scores, tools, spacings),
        "a2": lambda: table_a2(scores, tools),
        "a4": lambda: table_a4(scores, spacings),
    }
    if which not in builders:
        raise ValueError(f"unknown Δ table {which!r}; expected one of {list(builders)}")
    table = builders[which]()
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table


def make_wilcoxon_table(scores_path, outputs: Mapping[str, str], config: Mapping) -> Table:
    """Run every pairwise test with the configuration's Bonferroni factor; write the table."""
    scores = read_scores(scores_path)
    names = st.implementations(config["tools"])
    factor = st.bonferroni_factor_from_config(config)
    result = st.wilcoxon_table(scores, names, configured_spacings(config), factor)
    table = table_wilcoxon(result, len(names))
    table.notes += unavailable_note(scores, names)
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table


def make_edge_case_table(paths: Sequence[str | Path], outputs: Mapping[str, str]) -> Table:
    """Table A3 from the edge-case JSON files; writes csv/md/tex/html outputs."""
    table = table_a3(load_edge_cases(paths))
    write_table(table, outputs["csv"], outputs["md"], outputs["tex"], outputs.get("html"))
    return table
