"""Snakemake entry point of rule table_drift: the paper's versions against today's."""

from study.analysis.environments import make_drift_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_drift_table(
        [snakemake.input.scores, *snakemake.input.edge_cases, *snakemake.input.paper_edge_cases],
        dict(snakemake.output.items()),
        "paper",
    )
