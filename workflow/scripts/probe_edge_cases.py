"""Snakemake entry point of rule probe_edge_cases: a tool on empty and swapped inputs."""

import json

from adapters import CallSettings, configure
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores
from study.scoring.edge_cases import probe
from study.scoring.score import implementation, split_scored_name

snakemake = globals()["snakemake"]
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    configure(snakemake.params.tool_paths)
    tool, _ = split_scored_name(snakemake.wildcards.tool)  # the environment is in the settings
    record = probe(implementation(tool), CallSettings(**snakemake.params.settings))
    with open(snakemake.output[0], "w", encoding="utf-8") as stream:
        json.dump(record, stream, indent=1)
