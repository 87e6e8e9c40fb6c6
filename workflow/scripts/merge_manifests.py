"""Snakemake entry point of rule dataset_manifest: one mesh manifest for the dataset."""

from study.dataset.meshes import merge_manifests
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]  # injected by Snakemake's script directive

with log_to(snakemake.log[0]):
    merge_manifests(list(snakemake.input), snakemake.output[0])
