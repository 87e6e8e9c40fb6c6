"""Generated pages (findings, tool cards, recommendations): titled sections of sentences and
tables, rendered as Markdown and as self-contained HTML for the Snakemake report."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from study.analysis.rendering import pipe_table


@dataclass
class Section:
    """A titled list of sentences (Markdown inline syntax allowed: **bold**), then tables,
    each a caption and a display frame."""

    title: str
    lines: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)


def render_markdown(
    sections: Sequence[Section], title: str = "Findings", preamble: Sequence[str] = ()
) -> str:
    """`# title`, the preamble's paragraphs, then per section its sentences as a list and its
    tables, each under its caption."""
    out = [f"# {title}", ""]
    for paragraph in preamble:
        out += [paragraph, ""]
    for section in sections:
        out += [f"## {section.title}", ""] + [f"- {line}" for line in section.lines]
        out += [""] if section.lines else []
        for caption, frame in section.tables:
            out += [caption, "", pipe_table(frame, numbers=False), ""]
    return "\n".join(out)


VERDICT_STYLES: dict[str, str] = {
    "USE": "background:#d7f0dd;color:#0b5d1e;font-weight:bold",
    "CLOSEST": "background:#fff1c9;color:#6b4e00;font-weight:bold",
    "AVOID": "background:#f9d9d9;color:#8a1010;font-weight:bold",
    "NOT MEASURED": "background:#e6e6e6;color:#333333;font-weight:bold",
    "NO VERDICT": "background:#f4f4f4;color:#555555",
}
"""Colours of a table's Verdict cells (the word itself says the same): green, amber, red;
grey where the tool could not be measured or the pairs do not suffice for a verdict."""


def _table_html(frame: pd.DataFrame) -> str:
    """A frame as an HTML table whose Verdict cells are coloured (`VERDICT_STYLES`) and whose
    longest column (reasons) wraps, so the table fits a page without cut columns."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            text = "" if value is None or (isinstance(value, float) and value != value) else value
            style = VERDICT_STYLES.get(str(text)) if column == "Verdict" else None
            wrap = " class='wrap'" if column in WRAPPED else ""
            attribute = f" style='{style}'" if style else wrap
            cells.append(f"<td{attribute}>{_inline(str(text))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


WRAPPED = ("Why", "Cautions", "Tool", "Verdict")
"""Columns whose text wraps (the others keep one line)."""


def _inline(text: str) -> str:
    escaped = html.escape(text)
    parts = escaped.split("**")  # **bold** -> <b>bold</b>
    bold = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    parts = bold.split("`")  # `code` -> <code>code</code>
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def render_html(
    sections: Sequence[Section], title: str = "Findings", preamble: Sequence[str] = ()
) -> str:
    """Self-contained HTML of the same sections (for the Snakemake report)."""
    body = "".join(f"<p>{_inline(paragraph)}</p>" for paragraph in preamble)
    for section in sections:
        body += f"<h2>{html.escape(section.title)}</h2>"
        if section.lines:
            body += "<ul>" + "".join(f"<li>{_inline(line)}</li>" for line in section.lines)
            body += "</ul>"
        for caption, frame in section.tables:
            body += f"<p>{_inline(caption)}</p>{_table_html(frame)}"
    style = (
        "body{font-family:sans-serif;font-size:14px;max-width:80em}li{margin:0.3em 0}"
        "table{border-collapse:collapse;font-size:13px;max-width:100%}th,td{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:left;white-space:nowrap;vertical-align:top}"
        "td.wrap{white-space:normal;min-width:20em}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}"
        "</body></html>\n"
    )
