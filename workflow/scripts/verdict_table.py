"""Snakemake entry point of rule verdict_table: the verdicts per metric, grid and stratum,
computed once (study.analysis.verdicts)."""

from study.analysis.read import read_inputs, read_manifest
from study.analysis.settings import AnalysisSettings
from study.analysis.verdicts import verdict_table
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    inputs = read_inputs(
        snakemake.input.scores,
        grid_check_paths=list(snakemake.input.grid_check),
        edge_case_paths=list(snakemake.input.edge_cases),
        settings=AnalysisSettings.from_config(snakemake.config),
    )
    table = verdict_table(
        inputs.scores,
        inputs.grid_check,
        inputs.edge_cases,
        manifest=read_manifest(snakemake.input.manifest),
    )
    table.to_csv(snakemake.output[0], index=False)
