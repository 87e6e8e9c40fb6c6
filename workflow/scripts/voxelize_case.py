"""Snakemake entry point of rule voxelize_case: one case's mesh pairs at every voxel size."""

from pathlib import Path

from study.dataset.voxelize import voxelize_case
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    # Outputs come in the order of params.spacings (both expand SPACINGS).
    voxelize_case(
        snakemake.input[0],
        snakemake.params.spacings,
        [Path(pairs).parent for pairs in snakemake.output],
        margin_mm=snakemake.params.margin_mm,
        size_mm=snakemake.params.size_mm,
        scan_mm=snakemake.params.scan_mm,
    )
