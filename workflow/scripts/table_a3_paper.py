"""Snakemake entry point of rule table_a3_paper: Table A3 of the tools in the paper's versions."""

from study.analysis.environments import make_environment_a3
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_environment_a3(list(snakemake.input.edge_cases), dict(snakemake.output.items()), "paper")
