"""A finished run as a page of the docs: where its data came from, the commit and versions that
made it, its summary, verdicts, Table A1, Fig. 4, the edge cases that occurred, and a side by
side with another run (the synthetic default study) and with the paper's claims.

Everything is read from the run's own files (results/ and the dataset's manifest and skips);
nothing is computed that the run's tables do not already hold, except the comparison of two
runs' verdicts, made here from their recommendations.csv.

    python -m study publish --configfile CONFIG --results results [--compare OTHER_RESULTS]
        --out docs/results/<name>.md
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from study.analysis.rendering import pipe_table
from study.records import spacing_title
from vocabulary import METRIC_KEYS

FIGURES = ("figure_4", "figure_a3", "figure_a5")
"""Figures copied beside the page (PNG), in this order."""


@dataclass(frozen=True)
class Run:
    """A finished run: its results folder and, for a manifest or lidc dataset, the manifest
    (its skips beside it)."""

    results: Path
    manifest: Path | None = None

    def text(self, relative: str) -> str:
        return (self.results / relative).read_text(encoding="utf-8")

    def recommendations(self) -> pd.DataFrame:
        return pd.read_csv(self.results / "tables/recommendations.csv", dtype={"spacing": str})


def section(markdown: str, title: str) -> str:
    """The body of the `## title` section of a generated Markdown page ("" if absent)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M)
    return match.group(1).strip() if match else ""


def without_title(markdown: str) -> str:
    """A generated table page without its `## ...` title line."""
    return re.sub(r"^## .*\n+", "", markdown.strip(), count=1)


def provenance(repo: Path) -> list[str]:
    """The commit the page was made from (with "+ uncommitted changes" when the tree has any)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return [f"Commit: `{commit}`" + (" + uncommitted changes" if dirty else "") + "."]


def data_lines(manifest: Path) -> list[str]:
    """What the reader pairs are: counts, readers per nodule, categories, grids, skips."""
    pairs = pd.read_csv(manifest)
    lines = [
        f"{len(pairs):,} reader pairs of {pairs[['case', 'nodule']].drop_duplicates().shape[0]} "
        f"nodules in {pairs['case'].nunique()} scans ({manifest.name}; every pair of the "
        "radiologists who outlined the same nodule)."
    ]
    nodules = pairs.drop_duplicates(["case", "nodule"])
    lines.append("Readers per nodule: " + _counts(nodules["readers"], "nodules") + ".")
    categories = _counts(pairs["category"], "pairs")
    lines.append(f"Size category (the nodule's mean mask volume): {categories}.")
    sides = pairs["spacing_mm"].str.split("x", expand=True).astype(float)
    lines.append(
        f"Native grids: pixel spacing {sides[0].min():g} to {sides[0].max():g} mm; slice "
        f"spacing {_counts(sides[2].map('{:g} mm'.format), 'pairs')}."
    )
    skipped = manifest.parent / "skipped.csv"
    if skipped.is_file():
        kinds = pd.read_csv(skipped)["reason"].map(_reason_kind).value_counts()
        listed = "; ".join(f"{count} {kind}" for kind, count in kinds.items())
        lines.append(f"Skipped ({skipped.name}, each with its reason): {listed or 'none'}.")
    return lines


def _counts(values: pd.Series, noun: str) -> str:
    counts = values.value_counts()
    return ", ".join(f"{key}: {count:,}" for key, count in counts.items()) + f" {noun}"


SKIP_KINDS: tuple[tuple[str, str], ...] = (
    ("unevenly spaced", "nodules on unevenly spaced slices"),
    ("clustering grouped", "clusters of more annotations than readers"),
    ("point(s)", "readers with a contour of fewer than three points"),
    ("empty mask", "readers with an empty mask"),
)
"""A word of a skip's reason (study.dataset.lidc) and the kind it is counted as."""


def _reason_kind(reason: str) -> str:
    """A skip's reason without its particulars (case, nodule, numbers)."""
    return next((kind for word, kind in SKIP_KINDS if word in reason), "other")


def occurred(scores: pd.DataFrame) -> pd.DataFrame:
    """Rows that are not a finite score, per tool, grid and status, with a message."""
    odd = scores.loc[scores["status"].isin(["error", "nan", "inf"])]
    if odd.empty:
        return pd.DataFrame(columns=["Tool", "Grid", "Status", "Rows", "Example message"])
    grouped = odd.groupby(["tool", "spacing", "status"], sort=True)
    frame = grouped.agg(rows=("value", "size"), message=("message", "first")).reset_index()
    return pd.DataFrame(
        {
            "Tool": frame["tool"],
            "Grid": frame["spacing"].map(spacing_title),
            "Status": frame["status"],
            "Rows": frame["rows"],
            "Example message": frame["message"].fillna("").str.slice(-120),
        }
    )


def side_by_side(here: pd.DataFrame, there: pd.DataFrame) -> pd.DataFrame:
    """Per metric, voxel size and tool both runs scored: each run's verdict and share of pairs
    within tolerance, and whether the verdicts agree."""
    keys = ["metric", "spacing", "tool"]
    merged = there.merge(here, on=keys, suffixes=("_other", "_here"))
    merged = merged.assign(
        _m=merged["metric"].map(list(METRIC_KEYS).index),
        _s=merged["spacing"].map(list(dict.fromkeys(there["spacing"])).index),
    ).sort_values(["_m", "_s", "rank_here"])
    return pd.DataFrame(
        {
            "Metric": merged["metric"],
            "Voxel size": merged["spacing"].map(spacing_title),
            "Tool": merged["tool"],
            "Synthetic": merged["verdict_other"] + " (" + _share(merged["within_other"]) + ")",
            "LIDC readers": merged["verdict_here"] + " (" + _share(merged["within_here"]) + ")",
            "Same verdict": (merged["verdict_other"] == merged["verdict_here"]).map(
                {True: "yes", False: "**no**"}
            ),
        }
    )


def _share(values: pd.Series) -> pd.Series:
    return (100 * values.astype(float)).round().astype(int).astype(str) + " %"


def comparison_lines(table: pd.DataFrame) -> list[str]:
    """How many verdicts real readers confirm, and which they contradict."""
    same = table["Same verdict"] == "yes"
    lines = [
        f"Of {len(table)} (metric, voxel size, tool) verdicts both runs give, real readers "
        f"confirm {int(same.sum())} and contradict {int((~same).sum())}."
    ]
    for row in table.loc[~same].to_dict("records"):
        lines.append(
            f"{row['Metric']} at {row['Voxel size']}, {row['Tool']}: synthetic "
            f"{row['Synthetic']}, LIDC {row['LIDC readers']}."
        )
    return lines


def write_page(
    run: Run,
    out: Path,
    *,
    title: str,
    setup: Sequence[str],
    other: Run | None = None,
    repo: Path | None = None,
) -> Path:
    """The run's page at `out`, its figures in a folder of the page's name beside it."""
    figures = out.with_suffix("")
    figures.mkdir(parents=True, exist_ok=True)
    findings = run.text("findings.md")
    parts = [f"# {title}", ""]
    parts += _bullets("Set-up", [*setup, *provenance(repo or out.parent)] + _setup_of(findings))
    if run.manifest is not None:
        parts += _bullets("Data", data_lines(run.manifest))
    parts += ["## Summary", "", section(findings, "Summary"), ""]
    verdicts = section(run.text("recommendations.md"), "Summary: a verdict per metric and grid")
    parts += ["## Verdicts per metric and grid", "", verdicts, ""]
    parts += ["Every verdict with its reasons: the run's `recommendations.md`; each tool's card:"]
    parts += ["`cards.md`.", ""]
    table_a1 = without_title(run.text("tables/table_a1.md"))
    parts += ["## Table A1: Δ against the reference per grid", "", table_a1, ""]
    parts += _figures(run, figures)
    scores = pd.read_parquet(run.results / "scores.parquet")
    parts += ["## Edge cases that occurred", ""]
    parts += ["Rows that are not a finite score (each tool's answers to empty and swapped masks,"]
    parts += ["probed apart, are Table A3 among the run's tables):", ""]
    parts += [pipe_table(occurred(scores), numbers=False), ""]
    parts += [section(findings, "Missing and non-finite scores"), ""]
    if other is not None:
        table = side_by_side(run.recommendations(), other.recommendations())
        parts += _bullets("Real readers beside the synthetic observers", comparison_lines(table))
        parts += [pipe_table(table, numbers=False), ""]
    parts += ["## Compared with the paper", "", section(findings, "Compared with the paper"), ""]
    out.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    return out


def _bullets(title: str, lines: Sequence[str]) -> list[str]:
    return [f"## {title}", "", *(f"- {line}" for line in lines), ""]


def _setup_of(findings: str) -> list[str]:
    return [line.removeprefix("- ") for line in section(findings, "Set-up").splitlines() if line]


def _figures(run: Run, folder: Path) -> list[str]:
    """The run's figures copied beside the page, each as an image link."""
    lines = []
    for name in FIGURES:
        source = run.results / "figures" / f"{name}.png"
        if source.is_file():
            shutil.copy2(source, folder / source.name)
            lines += [f"![{name}]({folder.name}/{source.name})", ""]
    return ["## Figures", "", *lines] if lines else []
