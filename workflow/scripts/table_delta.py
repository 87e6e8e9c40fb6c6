"""Snakemake entry point of rules table_a1, table_a2 and table_a4: Δ against the reference."""

from study.analysis.tables import make_delta_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_delta_table(
        snakemake.rule.removeprefix("table_"),
        snakemake.input[0],
        dict(snakemake.output.items()),
        snakemake.config,
    )
