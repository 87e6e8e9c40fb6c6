"""What the analysis stage writes, for the literal rules in workflow/rules/analysis.smk: each
table's and figure's paths and report entry, which of them a config asks for (`rule all`), and
the captions' parameters.

Kept out of the rule file so the rule file holds rules only (`snakemake --lint`) and the paths
can be unit tested.
"""

from __future__ import annotations

from collections.abc import Mapping

from snakemake.io import report

from adapters.environments import STUDY_ENVIRONMENT
from study.analysis.settings import AnalysisSettings
from study.analysis.significance import bonferroni_factor_of, implementations
from study.pipeline.layout import Layout
from study.records import (
    GRID_NAMES,
    REFERENCE,
    REFERENCE_VARIANTS,
    spacing_title,
)

TABLE_FORMATS: tuple[str, ...] = ("csv", "md", "tex", "html")
"""Renderings of every table; the HTML one goes into the Snakemake report."""

FIGURE_FORMATS: tuple[str, ...] = ("png", "pdf")
"""Renderings of every figure; the PNG goes into the report."""


TABLES: tuple[str, ...] = (
    "table_a1",
    "table_a2",
    "table_a4",
    "table_wilcoxon",
    "table_a3",
    "table_a3_paper",
    "table_drift",
)
"""The paper's tables and the environments' tables, each made by the rule of its name in
workflow/rules/analysis.smk (`grep -n "rule table_a1" workflow/rules`)."""

FIGURES: tuple[str, ...] = ("figure_4", "figure_a3", "figure_a4", "figure_a5")
"""The paper's figures, each made by the rule of its name."""

MESHING_ITEMS: tuple[str, ...] = ("table_a4",)
"""Items asked for only when other meshings of the reference are scored."""

ENVIRONMENT_ITEMS: dict[str, str] = {"table_a3_paper": "paper", "table_drift": "paper"}
"""Items asked for only when the config scores the tools in that environment too."""


def table_paths(name: str) -> dict[str, str]:
    """A table's renderings' paths, by format."""
    return {fmt: Layout.TABLE.format(name=name, fmt=fmt) for fmt in TABLE_FORMATS}


def figure_paths(name: str) -> dict[str, str]:
    """A figure's renderings' paths, by format."""
    return {fmt: Layout.FIGURE.format(name=name, fmt=fmt) for fmt in FIGURE_FORMATS}


def item_paths(name: str) -> dict[str, str]:
    """Every rendering's path of a table or figure, by format."""
    return figure_paths(name) if name in FIGURES else table_paths(name)


def table_outputs(name: str, category: str = "Tables") -> dict:
    """A table rule's named outputs, the HTML flagged for the report with its caption
    workflow/report/<name>.rst."""
    paths: dict = table_paths(name)
    paths["html"] = report(paths["html"], caption=f"../report/{name}.rst", category=category)
    return paths


def figure_outputs(name: str) -> dict:
    """A figure rule's named outputs, the PNG flagged for the report with its caption."""
    paths: dict = figure_paths(name)
    paths["png"] = report(paths["png"], caption=f"../report/{name}.rst", category="Figures")
    return paths


class AnalysisPlan:
    """What the analysis of one config asks for, and its captions' parameters."""

    def __init__(self, config: Mapping):
        self.settings = AnalysisSettings.from_config(config)
        self.environments = list(self.settings.environments)
        self.other_environments = list(self.settings.other_environments)
        self.meshing_variants = [
            name
            for name, meshing in REFERENCE_VARIANTS.items()
            if name != REFERENCE and meshing in self.settings.meshings
        ]
        self.params = {
            "factor": bonferroni_factor_of(self.settings),
            "n_implementations": len(implementations(self.settings.tools)),
            "voxel_sizes": ", ".join(spacing_title(label) for label in self.settings.grid_labels),
            "timing_grid": timing_grid_text(config),
        }

    def items(self) -> list[str]:
        """The tables and figures this config asks for: Table A4 only when other meshings of
        the reference are scored, the environments' tables only when their environment is."""
        return [
            name
            for name in (*TABLES, *FIGURES)
            if (name not in MESHING_ITEMS or self.meshing_variants)
            and ENVIRONMENT_ITEMS.get(name, STUDY_ENVIRONMENT) in self.environments
        ]

    def targets(self) -> list[str]:
        """Every table, figure and page of this config."""
        return [
            *(path for name in self.items() for path in item_paths(name).values()),
            *observers_paths().values(),
            *findings_paths().values(),
            verdict_table_path(),
            *cards_paths().values(),
        ]


OBSERVERS_TABLE = "table_observers"
"""The data report: how far apart the dataset's observers are (study.analysis.observers)."""


def observers_paths() -> dict[str, str]:
    """The data report's renderings, by format."""
    return table_paths(OBSERVERS_TABLE)


def findings_paths() -> dict[str, str]:
    """The generated findings' renderings, by format."""
    return {fmt: Layout.FINDINGS.format(fmt=fmt) for fmt in ("md", "html")}


def verdict_table_path() -> str:
    """The verdict table (`study.analysis.verdicts.verdict_table`), computed once by rule
    verdict_table; the cards, recommendations, findings and published page render it."""
    return Layout.TABLE.format(name="recommendations", fmt="csv")


INTERVALS_TABLE = "intervals"
"""How far off is a published number: the central 95 % of Δ (study.analysis.cards)."""


def cards_paths() -> dict[str, str]:
    """What the cards rule writes (`study.analysis.cards.make_cards`'s output keys): the tool
    cards and the recommendations (Markdown, HTML), the
    verdicts at a glance (the report's opening page includes them) and the interval table in
    every table format."""
    pages = {
        f"{page}_{fmt}": pattern.format(fmt=fmt)
        for page, pattern in (("cards", Layout.CARDS), ("recommendations", Layout.RECOMMENDATIONS))
        for fmt in ("md", "html")
    }
    pages["verdicts_html"] = Layout.VERDICTS
    return pages | {f"intervals_{fmt}": path for fmt, path in table_paths(INTERVALS_TABLE).items()}


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
