"""Snakemake entry point of rule figure_a3: the masks' volumes, from the dataset manifest."""

from study.analysis.figures import make_figure_a3
from study.analysis.settings import AnalysisSettings
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_a3(
        snakemake.input.manifest,
        snakemake.output.png,
        snakemake.output.pdf,
        AnalysisSettings.from_config(snakemake.config),
    )
