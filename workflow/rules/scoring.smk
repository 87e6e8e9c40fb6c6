# Scoring: every tool and the reference on every mask pair, the edge-case probe, HD timing,
# and the collection of all scores into one tidy table.
#
# Job granularity, measured (docs/workflow.md): one job per (tool, case) covering every voxel
# size. Importing a tool costs up to 5 s (MONAI) and a Snakemake job about 0.5 s, so a job per
# (tool, case, voxel size) would triple the import cost; a job per case would serialize the
# tools of a small study onto one core.

from study.records import REFERENCE_VARIANTS
from study.scoring import implementation


def scored_tools():
    """Configured tools, cross-checks and reference meshings, in the order of the config."""
    meshings = config["reference"]["meshings"]
    variants = [name for name, meshing in REFERENCE_VARIANTS.items() if meshing in meshings]
    return [*variants, *config["tools"], *config.get("cross_checks", [])]


def unavailable_reason(tool):
    """None when the tool can run here; else why not (asked once, when the DAG is built)."""
    return implementation(tool).unavailable()


def pairs_of_case(wildcards):
    return expand(pairs_csv(), dataset=DATASET, spacing=SPACINGS, case=wildcards.case)


def score_files():
    """One file per (tool, case), or one 'unavailable' record per missing tool."""
    files = []
    for tool in scored_tools():
        if unavailable_reason(tool) is None:
            files += expand("results/scores/{dataset}/{tool}/{case}.parquet",
                            dataset=DATASET, tool=tool, case=CASES)
        else:
            files.append(f"results/scores/{DATASET}/{tool}/unavailable.parquet")
    return files


rule score_case:
    input:
        pairs=pairs_of_case,
    output:
        "results/scores/{dataset}/{tool}/{case}.parquet",
    log:
        "results/logs/score_case/{dataset}/{tool}/{case}.log",
    params:
        percentile=config["metrics"]["percentile"],
        tau=config["metrics"]["tau_mm"],
        timeout=config["timeouts"]["tool_seconds"],
        tool_paths=config.get("tool_paths", {}),
    wildcard_constraints:
        case="[^/]+",
        tool="[^/]+",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    script:
        "../scripts/score_case.py"


rule record_unavailable:
    output:
        "results/scores/{dataset}/{tool}/unavailable.parquet",
    log:
        "results/logs/record_unavailable/{dataset}/{tool}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/record_unavailable.py"


rule collect_scores:
    input:
        score_files(),
    output:
        "results/scores.parquet",
    log:
        "results/logs/collect_scores.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    script:
        "../scripts/collect_scores.py"


rule probe_edge_cases:
    output:
        "results/edge_cases/{tool}.json",
    log:
        "results/logs/probe_edge_cases/{tool}.log",
    params:
        percentile=config["metrics"]["percentile"],
        tau=config["metrics"]["tau_mm"],
        timeout=config["timeouts"]["tool_seconds"],
        tool_paths=config.get("tool_paths", {}),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    script:
        "../scripts/probe_edge_cases.py"


rule time_hd:
    input:
        pairs=expand(pairs_csv(), dataset=DATASET, spacing=TIMING_SPACING, case=CASES),
    output:
        "results/timing/{tool}.parquet",
    log:
        "results/logs/time_hd/{tool}.log",
    params:
        dataset=DATASET,
        repeats=config["timing"]["repeats"],
        timeout=config["timeouts"]["tool_seconds"],
        tool_paths=config.get("tool_paths", {}),
    # Timings are only comparable when nothing else runs beside them: locally the job takes
    # every core; cluster profiles override this with set-threads.
    threads: workflow.cores
    resources:
        mem_mb=4000,
        runtime=240,
    script:
        "../scripts/time_hd.py"


def scoring_targets():
    return [
        "results/scores.parquet",
        *expand("results/edge_cases/{tool}.json", tool=scored_tools()),
        *expand("results/timing/{tool}.parquet",
                tool=[t for t in scored_tools() if unavailable_reason(t) is None
                      and t not in list(REFERENCE_VARIANTS)[1:]]),
    ]
