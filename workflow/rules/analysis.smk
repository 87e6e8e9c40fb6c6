# Analysis: the paper's tables, figures and a generated summary, from the scores table and the
# edge-case and timing records. Nothing here re-runs a tool.
#
# Every table is written as CSV (numbers), Markdown and LaTeX (renderings) and HTML (what the
# Snakemake report shows). Captions in workflow/report/ are Jinja templates over the config
# and the rule's params. Edge-case and timing inputs come from the scoring plan (SCORING).

from study.analysis_plan import AnalysisPlan

ANALYSIS = AnalysisPlan(config)
ANALYSIS_PARAMS = ANALYSIS.params


rule table_a1:
    input:
        "results/scores.parquet",
    output:
        **ANALYSIS.table_outputs("table_a1"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a1.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_a2:
    input:
        "results/scores.parquet",
    output:
        **ANALYSIS.table_outputs("table_a2"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a2.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_a4:
    input:
        "results/scores.parquet",
    output:
        **ANALYSIS.table_outputs("table_a4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a4.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_wilcoxon:
    input:
        "results/scores.parquet",
    output:
        **ANALYSIS.table_outputs("table_wilcoxon"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_wilcoxon.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/table_wilcoxon.py"


rule table_a3:
    input:
        lambda wildcards: SCORING.edge_case_files(),
    output:
        **ANALYSIS.table_outputs("table_a3"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a3.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/table_a3.py"


rule figure_4:
    input:
        "results/scores.parquet",
    output:
        **ANALYSIS.figure_outputs("figure_4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_4.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=3000,
        runtime=10,
    script:
        "../scripts/figure_4.py"


rule figure_a3:
    input:
        rules.dataset_manifest.output[0],
    output:
        **ANALYSIS.figure_outputs("figure_a3"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a3.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/figure_a3.py"


rule figure_a4:
    input:
        "results/tables/table_wilcoxon.csv",
    output:
        **ANALYSIS.figure_outputs("figure_a4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a4.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/figure_a4.py"


rule figure_a5:
    input:
        lambda wildcards: SCORING.timing_files(),
    output:
        **ANALYSIS.figure_outputs("figure_a5"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a5.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/figure_a5.py"


rule findings:
    input:
        scores="results/scores.parquet",
        wilcoxon="results/tables/table_wilcoxon.csv",
        timing=lambda wildcards: SCORING.timing_files(),
        grid_check=lambda wildcards: SCORING.grid_check_files(),
    output:
        md="results/findings.md",
        html=report("results/findings.html", caption="../report/findings.rst",
                    category="Findings"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/findings.log",
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/analysis_findings.py"


analysis_targets = ANALYSIS.targets
