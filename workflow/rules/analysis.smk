# Analysis: the paper's tables, figures and a generated summary, from the scores table and the
# edge-case and timing records. Nothing here re-runs a tool.
#
# Every table is written as CSV (numbers), Markdown and LaTeX (renderings) and HTML (what the
# Snakemake report shows). Captions in workflow/report/ are Jinja templates over the config.

from study.records import REFERENCE_VARIANTS
from study.statistics import bonferroni_factor_from_config

ANALYSIS_DATASET = config["dataset"]["name"]
TABLE_FORMATS = ("csv", "md", "tex", "html")
MESHING_VARIANTS = [name for name, meshing in REFERENCE_VARIANTS.items()
                    if name != "reference"
                    and meshing in config.get("reference", {}).get("meshings", [])]


def table_outputs(name):
    """The four renderings of one table; the HTML one goes into the report."""
    paths = {fmt: f"results/tables/{name}.{fmt}" for fmt in TABLE_FORMATS}
    paths["html"] = report(paths["html"], caption=f"../report/{name}.rst", category="Tables")
    return paths


def figure_outputs(name):
    return {"png": report(f"results/figures/{name}.png", caption=f"../report/{name}.rst",
                          category="Figures"),
            "pdf": f"results/figures/{name}.pdf"}


def edge_case_files(wildcards):
    """Edge-case records of the configured tools and the reference (Table A3 has no rows for
    the other meshings, as in the paper); the files are made by the scoring rules."""
    return [path for path in scoring_targets() if path.startswith("results/edge_cases/")
            and not any(path.endswith(f"/{variant}.json") for variant in MESHING_VARIANTS)]


def timing_files(wildcards):
    return [path for path in scoring_targets() if path.startswith("results/timing/")]


ANALYSIS_PARAMS = {
    "factor": bonferroni_factor_from_config(config),
    "n_implementations": len(config["tools"]) + 1,
    "voxel_sizes": ", ".join("(" + ", ".join(f"{v:g}" for v in size) + ") mm"
                             for size in config["voxel_sizes"]),
}


rule table_a1:
    input:
        "results/scores.parquet",
    output:
        **table_outputs("table_a1"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a1.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_a2:
    input:
        "results/scores.parquet",
    output:
        **table_outputs("table_a2"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a2.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_a4:
    input:
        "results/scores.parquet",
    output:
        **table_outputs("table_a4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a4.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/table_delta.py"


rule table_wilcoxon:
    input:
        "results/scores.parquet",
    output:
        **table_outputs("table_wilcoxon"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_wilcoxon.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/table_wilcoxon.py"


rule table_a3:
    input:
        edge_case_files,
    output:
        **table_outputs("table_a3"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/table_a3.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/table_a3.py"


rule figure_4:
    input:
        "results/scores.parquet",
    output:
        **figure_outputs("figure_4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_4.log",
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    script:
        "../scripts/figure_4.py"


rule figure_a3:
    input:
        f"data/{ANALYSIS_DATASET}/manifest.csv",
    output:
        **figure_outputs("figure_a3"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a3.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/figure_a3.py"


rule figure_a4:
    input:
        "results/tables/table_wilcoxon.csv",
    output:
        **figure_outputs("figure_a4"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a4.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/figure_a4.py"


rule figure_a5:
    input:
        timing_files,
    output:
        **figure_outputs("figure_a5"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/figure_a5.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/figure_a5.py"


rule findings:
    input:
        scores="results/scores.parquet",
        wilcoxon="results/tables/table_wilcoxon.csv",
        timing=timing_files,
    output:
        md="results/findings.md",
        html=report("results/findings.html", caption="../report/findings.rst",
                    category="Findings"),
    params:
        **ANALYSIS_PARAMS,
    log:
        "results/logs/analysis/findings.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/analysis_findings.py"


def analysis_targets():
    """Every table, figure and the findings; Table A4 only when other meshings are scored."""
    tables = ["table_a1", "table_a2", "table_wilcoxon", "table_a3"]
    tables += ["table_a4"] if MESHING_VARIANTS else []
    figures = ["figure_4", "figure_a3", "figure_a4", "figure_a5"]
    return [
        *[f"results/tables/{name}.{fmt}" for name in tables for fmt in TABLE_FORMATS],
        *[f"results/figures/{name}.{fmt}" for name in figures for fmt in ("png", "pdf")],
        "results/findings.md",
        "results/findings.html",
    ]
