"""Snakemake entry point of rule voxelize_scan_case: one case's mesh pairs on its scan grid."""

from pathlib import Path

from study.dataset.voxelize import voxelize_case
from study.pipeline.logs import log_to
from study.records import parse_spacing_label
from study.scoring.cores import claim_cores

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    voxelize_case(
        snakemake.input[0],
        [parse_spacing_label(snakemake.wildcards.spacing)],
        [Path(snakemake.output[0]).parent],
        scan_mm=snakemake.params.scan_mm,
    )
