"""Snakemake entry point of rule table_a3: edge-case handling of every tool."""

from study.analysis.tables import make_edge_case_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_edge_case_table(list(snakemake.input.edge_cases), dict(snakemake.output.items()))
