"""Snakemake entry point of rule record_unavailable: one row for a tool missing here."""

from study.scoring.score import implementation, unavailable_rows
from study.workflow.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    tool = snakemake.wildcards.tool
    reason = implementation(tool).unavailable() or "the tool became available; rerun to score it"
    unavailable_rows(tool, reason, dataset=snakemake.wildcards.dataset).to_parquet(
        snakemake.output[0], index=False
    )
