"""Generated pages (findings, tool cards, recommendations): titled sections of sentences and
tables, rendered as Markdown and as self-contained HTML for the Snakemake report."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from study.analysis.tables import pipe_table


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


def _inline(text: str) -> str:
    escaped = html.escape(text)
    parts = escaped.split("**")  # **bold** -> <b>bold</b>
    return "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))


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
            table = frame.to_html(index=False, border=0, na_rep="")
            body += f"<p>{_inline(caption)}</p>{table}"
    style = (
        "body{font-family:sans-serif;font-size:14px;max-width:72em}li{margin:0.3em 0}"
        "table{border-collapse:collapse;font-size:13px}th,td{padding:2px 8px;"
        "border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}"
        "</body></html>\n"
    )
