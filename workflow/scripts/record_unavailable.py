"""Snakemake entry point of rule record_unavailable: one row for a tool missing here."""

from adapters import describe
from study.pipeline.logs import log_to
from study.scoring.score import implementation, split_scored_name, unavailable_rows

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    tool, environment = split_scored_name(snakemake.wildcards.tool)
    _, reason = describe([implementation(tool)], environment)[tool]
    unavailable_rows(
        tool,
        reason or "the tool became available; rerun to score it",
        dataset=snakemake.wildcards.dataset,
        environment=environment,
    ).to_parquet(snakemake.output[0], index=False)
