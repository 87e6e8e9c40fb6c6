"""Snakemake entry point of rule time_hd: HD call time per pair, repeated, for Fig. A5."""

from adapters import CallSettings, configure
from study.pipeline.logs import log_to
from study.scoring.score import implementation, read_pairs
from study.scoring.timing import time_hd, timed_pairs

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    configure(snakemake.params.tool_paths)
    table = time_hd(
        implementation(snakemake.wildcards.tool),
        timed_pairs(read_pairs(snakemake.input.pairs), snakemake.params.pairs_per_category).to_dict(
            "records"
        ),
        snakemake.params.repeats,
        settings=CallSettings(**snakemake.params.settings),
        dataset=snakemake.params.dataset,
        grid=snakemake.params.grid,
    )
    table.to_parquet(snakemake.output[0], index=False)
