"""Snakemake entry point of rule synthesize_case: one synthetic case's meshes and manifest
(the head-and-neck organs, or in a 2D study the 2D shapes)."""

from pathlib import Path

from study.dataset import shapes2d, synthetic
from study.pipeline.logs import log_to
from study.scoring.cores import claim_cores

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive
claim_cores(snakemake.threads)  # its threads stay off the other jobs' cores

with log_to(snakemake.log[0]):
    case_number = int(snakemake.wildcards.case.removeprefix("case_"))
    root, seed = Path(snakemake.params.root), snakemake.params.seed
    if snakemake.params.dimension == 2:
        written = shapes2d.write_case(root, case_number, seed)
    else:
        written = synthetic.write_case(root, case_number, seed, snakemake.params.oars)
    if written.resolve() != Path(snakemake.output[0]).resolve():
        raise RuntimeError(f"wrote {written}, expected {snakemake.output[0]}")
