"""Snakemake entry point of rule figure_4: box plots of Δ per metric, tool and voxel size."""

from study.analysis.figures import make_figure_4
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_4(snakemake.input[0], snakemake.output.png, snakemake.output.pdf, snakemake.config)
