"""Snakemake entry point of rule table_a4: Table A4, the reference's other meshings."""

from study.analysis.settings import AnalysisSettings
from study.analysis.tables import make_table_a4
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_table_a4(
        snakemake.input.scores,
        dict(snakemake.output.items()),
        AnalysisSettings.from_config(snakemake.config),
    )
