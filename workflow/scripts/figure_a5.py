"""Snakemake entry point of rule figure_a5: HD execution time per tool."""

from study.analysis.figures import make_figure_a5
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_a5(list(snakemake.input.timing), snakemake.output.png, snakemake.output.pdf)
