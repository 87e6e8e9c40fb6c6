"""Snakemake entry point of rule collect_scores: every per-job file into one long table,
once every tool's records are known to come from one version of it."""

from study.pipeline.logs import log_to
from study.scoring.score import collect
from study.scoring.versions import check_one_version

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    check_one_version([*snakemake.input.scores, *snakemake.input.records])
    collect(snakemake.input.scores).to_parquet(snakemake.output[0], index=False)
