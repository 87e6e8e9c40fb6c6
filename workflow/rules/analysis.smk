# Analysis: the paper's tables, figures and a generated summary, from the scores table and the
# edge-case and timing records. Nothing here re-runs a tool.
#
# Every table is written as CSV (numbers), Markdown and LaTeX (renderings) and HTML (what the
# Snakemake report shows). Captions in workflow/report/ are Jinja templates over the config
# and the rule's params. Edge-case and timing inputs come from the scoring plan (SCORING).

from study.pipeline.analysis_plan import (
    AnalysisPlan,
    cards_outputs,
    findings_paths,
    observers_paths,
)

ANALYSIS = AnalysisPlan(config)
ANALYSIS_PARAMS = ANALYSIS.params


# What each item reads (study.pipeline.analysis_plan.ITEMS names these keys): other rules'
# outputs and the scoring plan's files, looked up when the item's rule is made (Table Wilcoxon
# is made before Fig. A4).
ANALYSIS_INPUTS = {
    "scores": lambda: rules.collect_scores.output[0],
    "wilcoxon": lambda: rules.table_wilcoxon.output.csv,
    "edge_cases": lambda: SCORING.edge_case_files(),
    "timing": lambda: SCORING.timing_files(),
    "manifest": lambda: rules.dataset_manifest.output[0],
    "paper_edge_cases": lambda: SCORING.edge_case_files("paper"),
    "environments": lambda: [
        rules.collect_scores.output[0],
        *SCORING.edge_case_files(),
        *SCORING.edge_case_files("paper"),
    ],
}


# One rule per table and figure of this config, named after it.
for item in ANALYSIS.items():

    rule:
        name:
            item.name
        input:
            ANALYSIS_INPUTS[item.reads](),
        output:
            **ANALYSIS.outputs(item),
        log:
            LAYOUT.log("analysis", item.name),
        group:
            "summary"
        conda:
            STUDY_ENV
        threads: 1
        resources:
            mem_mb=item.mem_mb,
            runtime=item.runtime,
        params:
            **ANALYSIS_PARAMS,
            script=item.script,
        script:
            # Formatted when the job runs (a name bound here would be the loop's last item).
            "../scripts/{params.script}"


# The data report: the observers' DSC (from the masks) and the reference's HD and HD95.
rule table_observers:
    input:
        scores=rules.collect_scores.output[0],
        pairs=LAYOUT.voxelize_targets(),
    output:
        **{
            fmt: (
                report(path, caption="../report/table_observers.rst", category="Data")
                if fmt == "html"
                else path
            )
            for fmt, path in observers_paths().items()
        },
    log:
        LAYOUT.log("analysis", "table_observers"),
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        voxel_sizes=ANALYSIS_PARAMS["voxel_sizes"],
    script:
        "../scripts/table_observers.py"


rule findings:
    input:
        scores=rules.collect_scores.output[0],
        wilcoxon=rules.table_wilcoxon.output.csv,
        timing=SCORING.timing_files(),
        grid_check=SCORING.grid_check_files(),
        environments=ANALYSIS_INPUTS["environments"]() if ANALYSIS.other_environments else [],
        edge_cases=SCORING.edge_case_files(),
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
        **ANALYSIS_PARAMS,
    script:
        "../scripts/analysis_findings.py"


# What a reader can act on: a card per tool, the recommendations and the interval table.
rule cards:
    input:
        scores=rules.collect_scores.output[0],
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
        **ANALYSIS_PARAMS,
    script:
        "../scripts/analysis_cards.py"
