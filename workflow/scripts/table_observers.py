"""Snakemake entry point of rule table_observers: the data report (observer agreement)."""

from study.analysis.observers import make_observer_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_observer_table(
        snakemake.input.scores, list(snakemake.input.pairs), dict(snakemake.output.items())
    )
