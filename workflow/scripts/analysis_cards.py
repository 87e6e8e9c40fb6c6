"""Snakemake entry point of rule cards: the tool cards, the recommendations and the interval
table (study.analysis.cards)."""

from study.analysis.cards import make_cards
from study.analysis.settings import AnalysisSettings
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_cards(
        snakemake.input.scores,
        snakemake.input.verdicts,
        dict(snakemake.output.items()),
        timing_paths=list(snakemake.input.timing),
        grid_check_paths=list(snakemake.input.grid_check),
        edge_case_paths=list(snakemake.input.edge_cases),
        settings=AnalysisSettings.from_config(snakemake.config),
    )
