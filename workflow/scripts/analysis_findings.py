"""Snakemake entry point of rule findings: the generated summary (Markdown and HTML)."""

from study.analysis.findings import make_findings
from study.analysis.settings import AnalysisSettings
from study.pipeline.logs import log_to

snakemake = globals()["snakemake"]

with log_to(snakemake.log[0]):
    make_findings(
        snakemake.input.scores,
        snakemake.input.wilcoxon,
        list(snakemake.input.timing),
        AnalysisSettings.from_config(snakemake.config),
        snakemake.output.md,
        snakemake.output.html,
        grid_check_paths=list(snakemake.input.grid_check),
        edge_case_paths=list(snakemake.input.edge_cases),
        environment_paths=list(snakemake.input.environments),
        verdicts_path=snakemake.input.verdicts,
    )
