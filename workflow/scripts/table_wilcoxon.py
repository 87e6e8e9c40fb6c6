"""Snakemake entry point of rule table_wilcoxon: pairwise tests, Bonferroni-corrected."""

from study.analysis.settings import AnalysisSettings
from study.analysis.tables import make_wilcoxon_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_wilcoxon_table(
        snakemake.input.scores,
        dict(snakemake.output.items()),
        AnalysisSettings.from_config(snakemake.config),
    )
