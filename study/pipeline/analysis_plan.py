"""What the analysis stage writes, for the Snakemake rules in workflow/rules/analysis.smk.

Kept out of the rule file so the rule file holds rules only (`snakemake --lint`) and the paths
can be unit tested.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from snakemake.io import report

from adapters.environments import STUDY_ENVIRONMENT
from study.analysis.statistics import bonferroni_factor_from_config, implementations
from study.pipeline.layout import Layout
from study.records import (
    GRID_NAMES,
    REFERENCE,
    REFERENCE_VARIANTS,
    grid_labels,
    spacing_title,
)

TABLE_FORMATS: tuple[str, ...] = ("csv", "md", "tex", "html")
"""Renderings of every table; the HTML one goes into the Snakemake report."""

FIGURE_FORMATS: tuple[str, ...] = ("png", "pdf")
"""Renderings of every figure; the PNG goes into the report."""


@dataclass(frozen=True)
class Item:
    """One table or figure: the record it reads, the script that draws it, its job's size."""

    name: str
    reads: str  # a key of analysis.smk's ANALYSIS_INPUTS: scores, edge_cases, timing, ...
    script: str  # in workflow/scripts/
    mem_mb: int
    runtime: int  # minutes

    @property
    def is_figure(self) -> bool:
        return self.name.startswith("figure_")

    def paths(self) -> dict[str, str]:
        """Every rendering's path, by format."""
        pattern, formats = (
            (Layout.FIGURE, FIGURE_FORMATS) if self.is_figure else (Layout.TABLE, TABLE_FORMATS)
        )
        return {fmt: pattern.format(name=self.name, fmt=fmt) for fmt in formats}


ITEMS: tuple[Item, ...] = (
    Item("table_a1", "scores", "table_delta.py", 2000, 10),
    Item("table_a2", "scores", "table_delta.py", 2000, 10),
    Item("table_a4", "scores", "table_delta.py", 2000, 10),
    Item("table_wilcoxon", "scores", "table_wilcoxon.py", 2000, 30),
    Item("table_a3", "edge_cases", "table_a3.py", 1000, 5),
    Item("figure_4", "scores", "figure_4.py", 3000, 10),
    Item("figure_a3", "manifest", "figure_a3.py", 1000, 5),
    Item("figure_a4", "wilcoxon", "figure_a4.py", 2000, 10),
    Item("figure_a5", "timing", "figure_a5.py", 1000, 5),
    Item("table_a3_paper", "paper_edge_cases", "table_a3_environment.py", 1000, 5),
    Item("table_drift", "environments", "table_drift.py", 2000, 10),
)
"""Every table and figure of the analysis, one rule each (workflow/rules/analysis.smk)."""

ENVIRONMENT_ITEMS: dict[str, str] = {"table_a3_paper": "paper", "table_drift": "paper"}
"""Items made only when the config scores the tools in that environment too."""


class AnalysisPlan:
    """Outputs, report entries and caption parameters of the analysis of one config."""

    def __init__(self, config: Mapping):
        self.environments = config.get("environments", [STUDY_ENVIRONMENT])
        self.other_environments = self.environments[1:]
        meshings = config.get("reference", {}).get("meshings", [])
        self.meshing_variants = [
            name
            for name, meshing in REFERENCE_VARIANTS.items()
            if name != REFERENCE and meshing in meshings
        ]
        self.params = {
            "factor": bonferroni_factor_from_config(config),
            "n_implementations": len(implementations(config["tools"])),
            "voxel_sizes": ", ".join(spacing_title(label) for label in grid_labels(config)),
            "timing_grid": timing_grid_text(config),
        }

    def items(self) -> list[Item]:
        """The tables and figures of this config; Table A4 only when other meshings of the
        reference are scored, the environments' tables only when their environment is."""
        return [
            item
            for item in ITEMS
            if (item.name != "table_a4" or self.meshing_variants)
            and ENVIRONMENT_ITEMS.get(item.name, STUDY_ENVIRONMENT) in self.environments
        ]

    @staticmethod
    def outputs(item: Item) -> dict:
        """Named outputs of an item's rule, the figure's PNG or the table's HTML flagged for
        the report."""
        paths: dict = item.paths()
        shown, category = ("png", "Figures") if item.is_figure else ("html", "Tables")
        paths[shown] = report(paths[shown], caption=f"../report/{item.name}.rst", category=category)
        return paths

    def targets(self) -> list[str]:
        """Every table, figure and the findings."""
        return [
            *(path for item in self.items() for path in item.paths().values()),
            *observers_paths().values(),
            *findings_paths().values(),
            *cards_paths().values(),
        ]


OBSERVERS_TABLE = "table_observers"
"""The data report: how far apart the dataset's observers are (study.analysis.observers)."""


def observers_paths() -> dict[str, str]:
    """The data report's renderings, by format (a table: it reads the masks as well as the
    scores, so it has a rule of its own rather than an Item)."""
    return {fmt: Layout.TABLE.format(name=OBSERVERS_TABLE, fmt=fmt) for fmt in TABLE_FORMATS}


def findings_paths() -> dict[str, str]:
    """The generated findings' renderings, by format."""
    return {fmt: Layout.FINDINGS.format(fmt=fmt) for fmt in ("md", "html")}


INTERVALS_TABLE = "intervals"
"""How far off is a published number: the central 95 % of Δ (study.analysis.cards)."""


def cards_paths() -> dict[str, str]:
    """What the cards rule writes (`study.analysis.cards.make_cards`'s output keys): the tool
    cards and the recommendations (Markdown, HTML; the recommendations' numbers as CSV), the
    verdicts at a glance (the report's opening page includes them) and the interval table in
    every table format."""
    pages = {
        f"{page}_{fmt}": pattern.format(fmt=fmt)
        for page, pattern in (("cards", Layout.CARDS), ("recommendations", Layout.RECOMMENDATIONS))
        for fmt in ("md", "html")
    }
    pages["recommendations_csv"] = Layout.TABLE.format(name="recommendations", fmt="csv")
    pages["verdicts_html"] = Layout.VERDICTS
    return pages | {
        f"intervals_{fmt}": Layout.TABLE.format(name=INTERVALS_TABLE, fmt=fmt)
        for fmt in TABLE_FORMATS
    }


def cards_outputs() -> dict:
    """The cards rule's named outputs, the HTML pages flagged for the report (category
    "Tools"), each with its caption workflow/report/<page>.rst."""
    paths: dict = cards_paths()
    for key in ("cards_html", "recommendations_html", "intervals_html"):
        caption = f"../report/{key.removesuffix('_html')}.rst"
        paths[key] = report(paths[key], caption=caption, category="Tools")
    return paths


def timing_grid_text(config: Mapping) -> str:
    """The timed masks' grid for Fig. A5's caption: "scan-sized grids (300 × 300 × 280 mm
    around each case's organs)", "cropped grids (each pair's box plus 5 mm)", ..."""
    grid = Layout(config).timed_grid
    fov = config["field_of_view"]
    if grid == "union_bbox":
        return f"{GRID_NAMES[grid]} grids (each pair's box plus {fov['margin_mm']:g} mm)"
    size, around = (
        (fov["scan_mm"], "each case's organs") if grid == "scan" else (fov["size_mm"], "each pair")
    )
    return f"{GRID_NAMES[grid]} grids ({' × '.join(f'{n:g}' for n in size)} mm around {around})"
