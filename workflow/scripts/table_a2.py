"""Snakemake entry point of rule table_a2: Table A2, Δ against the reference per OAR category."""

from study.analysis.settings import AnalysisSettings
from study.analysis.tables import make_table_a2
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_table_a2(
        snakemake.input.scores,
        dict(snakemake.output.items()),
        AnalysisSettings.from_config(snakemake.config),
    )
