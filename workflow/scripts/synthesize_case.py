"""Snakemake entry point of rule synthesize_case: one synthetic case's meshes and manifest."""

from pathlib import Path

from study.dataset.synthetic import write_case
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    case_number = int(snakemake.wildcards.case.removeprefix("case_"))
    written = write_case(
        Path(snakemake.params.root), case_number, snakemake.params.seed, snakemake.params.oars
    )
    if written.resolve() != Path(snakemake.output[0]).resolve():
        raise RuntimeError(f"wrote {written}, expected {snakemake.output[0]}")
