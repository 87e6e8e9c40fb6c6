"""Snakemake entry point of rule figure_a4: significance matrices from the Wilcoxon table."""

from study.analysis.figures import make_figure_a4
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_a4(snakemake.input[0], snakemake.output.png, snakemake.output.pdf, snakemake.config)
