"""Snakemake entry point of rule table_a1: Table A1, Δ against the reference per voxel size."""

from study.analysis.settings import AnalysisSettings
from study.analysis.tables import make_table_a1
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_table_a1(
        snakemake.input.scores,
        dict(snakemake.output.items()),
        AnalysisSettings.from_config(snakemake.config),
    )
