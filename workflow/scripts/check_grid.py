"""Snakemake entry point of rule check_grid: one tool on the checked pairs, on both grids."""

from adapters import CallSettings, configure
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores
from study.scoring.grid_check import GRIDS, score_on_grids

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    configure(snakemake.params.tool_paths)
    table = score_on_grids(
        snakemake.wildcards.tool,
        {grid: snakemake.input[grid] for grid in GRIDS},
        dataset=snakemake.params.dataset,
        settings=CallSettings(**snakemake.params.settings),
        metrics=snakemake.params.metrics,
    )
    table.to_parquet(snakemake.output[0], index=False)
