"""Snakemake entry point of rule probe_edge_cases: a tool on empty and swapped inputs."""

import json

from adapters.base import configure
from study.scoring.cores import claim_cores
from study.scoring.edge_cases import probe
from study.scoring.score import implementation, split_scored_name
from study.workflow.logs import log_to

snakemake = globals()["snakemake"]
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    configure(snakemake.params.tool_paths)
    tool, environment = split_scored_name(snakemake.wildcards.tool)
    record = probe(
        implementation(tool),
        percentile=snakemake.params.percentile,
        tau=snakemake.params.tau,
        timeout=snakemake.params.timeout,
        memory_gb=snakemake.params.memory_gb,
        environment=environment,
    )
    with open(snakemake.output[0], "w", encoding="utf-8") as stream:
        json.dump(record, stream, indent=1)
