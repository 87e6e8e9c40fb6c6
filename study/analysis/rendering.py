"""A table and its renderings: the numeric frame as CSV, the display frame as Markdown, LaTeX
and HTML (the HTML goes into the Snakemake report). Knows nothing of what a table shows."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass
class Table:
    """One table: numeric rows for the CSV, a display frame, a title and notes."""

    name: str
    title: str
    numeric: pd.DataFrame
    display: pd.DataFrame
    notes: list[str] = field(default_factory=list)


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
