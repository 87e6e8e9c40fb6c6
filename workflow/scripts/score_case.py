"""Snakemake entry point of rule score_case: one tool on every pair of a batch of cases."""

from adapters import CallSettings, configure
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores
from study.scoring.score import read_pairs, score_pairs, split_scored_name

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    configure(snakemake.params.tool_paths)
    tool, _ = split_scored_name(snakemake.wildcards.tool)  # the environment is in the settings
    table = score_pairs(
        tool,
        read_pairs(snakemake.input.pairs),
        dataset=snakemake.wildcards.dataset,
        settings=CallSettings(**snakemake.params.settings),
        metrics=snakemake.params.metrics,
        brackets=snakemake.params.brackets,
    )
    table.to_parquet(snakemake.output[0], index=False)
