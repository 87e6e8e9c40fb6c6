"""Snakemake entry point of rule prepare_user_case: one case of the user's masks meshed,
voxelized at every voxel size and, for the native grid, cropped."""

from pathlib import Path

from study.dataset.realdata import prepare_user_case
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    # output.masks come in the order of params.spacings (both from SPACINGS).
    prepare_user_case(
        snakemake.input.manifest,
        snakemake.wildcards.case,
        Path(snakemake.output.meshes).parent,
        snakemake.params.spacings,
        [Path(pairs).parent for pairs in snakemake.output.masks],
        margin_mm=snakemake.params.margin_mm,
        size_mm=snakemake.params.size_mm,
        scan_mm=snakemake.params.scan_mm,
        oars=snakemake.params.oars,
    )
