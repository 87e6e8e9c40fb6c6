"""Snakemake entry point of rule figure_4: box plots of Δ per metric, tool and voxel size."""

from study.analysis.figures import make_figure_4
from study.analysis.settings import AnalysisSettings
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_figure_4(
        snakemake.input.scores,
        snakemake.output.png,
        snakemake.output.pdf,
        AnalysisSettings.from_config(snakemake.config),
    )
