"""Snakemake entry point of rule collect_scores: every per-job file into one long table."""

from study.scoring.score import collect
from study.workflow.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    collect(snakemake.input).to_parquet(snakemake.output[0], index=False)
