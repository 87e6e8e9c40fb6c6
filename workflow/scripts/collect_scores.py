"""Snakemake entry point of rule collect_scores: every per-job file into one long table."""

from study.scoring import collect
from study.workflow_logging import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    collect(snakemake.input).to_parquet(snakemake.output[0], index=False)
