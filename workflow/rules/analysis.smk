# Analysis: the paper's tables, figures, the data report, the generated findings and the tool
# cards, from the scores table and the edge-case, timing and grid-check records. Nothing here
# re-runs a tool.
#
# One literal rule per table, figure and page, named after what it makes: `grep -n "rule
# table_a1" workflow/rules` finds who makes table_a1. Every rule exists for every config; what
# `rule all` asks for (ANALYSIS.targets()) decides which run: Table A4 only when other meshings
# of the reference are scored, table_a3_paper and table_drift only when the paper's environment
# is. Every table is written as CSV (numbers), Markdown and LaTeX (renderings) and HTML (what
# the Snakemake report shows); captions in workflow/report/ are Jinja templates over the config
# and the rule's params. Edge-case and timing inputs come from the scoring plan (SCORING).

from study.pipeline.analysis_plan import (
    AnalysisPlan,
    cards_outputs,
    figure_outputs,
    findings_paths,
    table_outputs,
    verdict_table_path,
)

ANALYSIS = AnalysisPlan(config)


# Table A1: Δ against the reference per voxel size.
rule table_a1:
    input:
        scores=rules.collect_scores.output[0],
    output:
        **table_outputs("table_a1"),
    log:
        LAYOUT.log("analysis", "table_a1"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_a1.py"


# Table A2: Δ against the reference per OAR category.
rule table_a2:
    input:
        scores=rules.collect_scores.output[0],
    output:
        **table_outputs("table_a2"),
    log:
        LAYOUT.log("analysis", "table_a2"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_a2.py"


# Table A4: the reference's other meshings against discrete marching cubes.
rule table_a4:
    input:
        scores=rules.collect_scores.output[0],
    output:
        **table_outputs("table_a4"),
    log:
        LAYOUT.log("analysis", "table_a4"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_a4.py"


# Pairwise Wilcoxon tests, Bonferroni-corrected (Fig. A4 draws them).
rule table_wilcoxon:
    input:
        scores=rules.collect_scores.output[0],
    output:
        **table_outputs("table_wilcoxon"),
    log:
        LAYOUT.log("analysis", "table_wilcoxon"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_wilcoxon.py"


# Table A3: every tool's edge-case handling.
rule table_a3:
    input:
        edge_cases=SCORING.edge_case_files(),
    output:
        **table_outputs("table_a3"),
    log:
        LAYOUT.log("analysis", "table_a3"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_a3.py"


# Table A3 of the tools in the paper's versions (the paper environment).
rule table_a3_paper:
    input:
        edge_cases=SCORING.edge_case_files("paper"),
    output:
        **table_outputs("table_a3_paper"),
    log:
        LAYOUT.log("analysis", "table_a3_paper"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_a3_paper.py"


# Scores and edge cases of the paper's versions against today's.
rule table_drift:
    input:
        scores=rules.collect_scores.output[0],
        edge_cases=SCORING.edge_case_files(),
        paper_edge_cases=SCORING.edge_case_files("paper"),
    output:
        **table_outputs("table_drift"),
    log:
        LAYOUT.log("analysis", "table_drift"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/table_drift.py"


# Fig. 4: box plots of Δ per metric, tool and voxel size.
rule figure_4:
    input:
        scores=rules.collect_scores.output[0],
    output:
        **figure_outputs("figure_4"),
    log:
        LAYOUT.log("analysis", "figure_4"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/figure_4.py"


# Fig. A3: the OARs' volumes, from the dataset manifest.
rule figure_a3:
    input:
        manifest=rules.dataset_manifest.output[0],
    output:
        **figure_outputs("figure_a3"),
    log:
        LAYOUT.log("analysis", "figure_a3"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/figure_a3.py"


# Fig. A4: which pairs of implementations differ, from Table Wilcoxon.
rule figure_a4:
    input:
        wilcoxon=rules.table_wilcoxon.output.csv,
    output:
        **figure_outputs("figure_a4"),
    log:
        LAYOUT.log("analysis", "figure_a4"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/figure_a4.py"


# Fig. A5: HD execution time per tool.
rule figure_a5:
    input:
        timing=SCORING.timing_files(),
    output:
        **figure_outputs("figure_a5"),
    log:
        LAYOUT.log("analysis", "figure_a5"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/figure_a5.py"


# The data report: the observers' DSC (from the masks) and the reference's HD and HD95.
rule table_observers:
    input:
        scores=rules.collect_scores.output[0],
        pairs=LAYOUT.voxelize_targets(),
    output:
        **table_outputs("table_observers", category="Data"),
    log:
        LAYOUT.log("analysis", "table_observers"),
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        voxel_sizes=ANALYSIS.params["voxel_sizes"],
    script:
        "../scripts/table_observers.py"


# The verdict table, computed once: per metric, grid and stratum, which tools to use and why.
rule verdict_table:
    input:
        scores=rules.collect_scores.output[0],
        grid_check=SCORING.grid_check_files(),
        edge_cases=SCORING.edge_case_files(),
        # The pairs' own manifest (LIDC's gives each pair's native slice spacing), else the
        # dataset's.
        manifest=config["dataset"]["manifest"] or rules.dataset_manifest.output[0],
    output:
        verdict_table_path(),
    log:
        LAYOUT.log("analysis", "verdict_table"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    script:
        "../scripts/verdict_table.py"


# The generated findings: what the data say, and the paper's claims checked.
rule findings:
    input:
        scores=rules.collect_scores.output[0],
        wilcoxon=rules.table_wilcoxon.output.csv,
        timing=SCORING.timing_files(),
        grid_check=SCORING.grid_check_files(),
        # The scores and both environments' edge cases, when another environment is scored.
        environments=(
            [
                rules.collect_scores.output[0],
                *SCORING.edge_case_files(),
                *SCORING.edge_case_files("paper"),
            ]
            if ANALYSIS.other_environments
            else []
        ),
        edge_cases=SCORING.edge_case_files(),
        verdicts=rules.verdict_table.output[0],
    output:
        md=findings_paths()["md"],
        html=report(findings_paths()["html"], caption="../report/findings.rst", category="Findings"),
    log:
        LAYOUT.log("analysis", "findings"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/analysis_findings.py"


# What a reader can act on: a card per tool, the recommendations and the interval table,
# rendered from the verdict table.
rule cards:
    input:
        scores=rules.collect_scores.output[0],
        verdicts=rules.verdict_table.output[0],
        timing=SCORING.timing_files(),
        grid_check=SCORING.grid_check_files(),
        edge_cases=SCORING.edge_case_files(),
    output:
        **cards_outputs(),
    log:
        LAYOUT.log("analysis", "cards"),
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        **ANALYSIS.params,
    script:
        "../scripts/analysis_cards.py"
