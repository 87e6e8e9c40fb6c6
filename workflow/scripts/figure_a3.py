"""Snakemake entry point of rule figure_a3: OAR volumes with the category thresholds."""

from study.analysis.figures import make_figure_a3
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_a3(snakemake.input[0], snakemake.output.png, snakemake.output.pdf)
