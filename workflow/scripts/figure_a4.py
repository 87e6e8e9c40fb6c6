"""Snakemake entry point of rule figure_a4: which pairs of implementations differ significantly."""

from study.analysis.figures import make_figure_a4
from study.analysis.settings import AnalysisSettings
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_a4(
        snakemake.input.wilcoxon,
        snakemake.output.png,
        snakemake.output.pdf,
        AnalysisSettings.from_config(snakemake.config),
    )
