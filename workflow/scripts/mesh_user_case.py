"""Snakemake entry point of rule mesh_user_case: mesh one case of the user's mask pairs."""

from pathlib import Path

from study.dataset.realdata import mesh_user_case
from study.workflow.logs import log_to

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive

with log_to(snakemake.log[0]):
    mesh_user_case(
        snakemake.input.manifest,
        snakemake.wildcards.case,
        Path(snakemake.output[0]).parent,
        snakemake.params.oars,
    )
