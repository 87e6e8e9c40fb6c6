"""Snakemake entry point of rule grid_check_masks: the checked pairs on both grids."""

from pathlib import Path

from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores
from study.scoring.grid_check import GRIDS, prepare_masks

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    out_dirs = {grid: [Path(pairs).parent for pairs in snakemake.output[grid]] for grid in GRIDS}
    prepare_masks(
        snakemake.input[0],
        snakemake.params.spacings,
        out_dirs,
        per_category=snakemake.params.per_category,
        margin_mm=snakemake.params.margin_mm,
        scan_mm=snakemake.params.scan_mm,
    )
