# Scoring: every tool and the reference on every mask pair, the edge-case probe, HD timing,
# and the collection of all scores into one tidy table.
#
# Job granularity, measured (docs/workflow.md): one job per (tool, batch of
# scoring.cases_per_job cases) covering every voxel size. Importing a tool costs up to 5 s
# (MONAI) and a Snakemake job about 0.5 s, so a job per (tool, case, voxel size) would triple
# the import cost; a job per case with every tool would serialize the tools of a small study
# onto one core. Large studies batch several cases per job to pay the imports less often.

from study.pipeline.scoring_plan import ScoringPlan

SCORING = ScoringPlan(config, dataset=DATASET, cases=CASES)
# Every job of a tool, the reference or a meshing takes SCORING.producer(tool) as a param: the
# tool's version, environment and build. Snakemake reruns a job whose params changed, so a tool
# installed, upgraded, rebuilt or gone gets its outputs redone, and nothing else does. The jobs
# that call a tool take SCORING.settings(tool) too: how they call it (adapters.CallSettings).


rule score_case:
    input:
        pairs=lambda wildcards: expand(
            LAYOUT.PAIRS,
            dataset=wildcards.dataset,
            spacing=SPACINGS,
            case=SCORING.cases_of(wildcards.batch),
        ),
    output:
        LAYOUT.SCORES,
    log:
        LAYOUT.log("score_case", "{dataset}", "{tool}", "{batch}"),
    benchmark:
        LAYOUT.benchmark("score_case", "{dataset}", "{tool}", "{batch}")
    wildcard_constraints:
        batch="|".join(re.escape(batch) for batch in SCORING.batches),
    priority: lambda wildcards: SCORING.priority(wildcards.tool)
    # A cluster submits two scoring jobs as one (profiles/slurm); a local run
    # ignores groups.
    group:
        "score"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        producer=lambda wildcards: SCORING.producer(wildcards.tool),
        settings=lambda wildcards: SCORING.settings(wildcards.tool),
        tool_paths=config.get("tool_paths", {}),
        metrics=config["metrics"]["scored"],
        brackets=lambda wildcards: SCORING.certified(wildcards.tool),
    script:
        "../scripts/score_case.py"


rule record_unavailable:
    output:
        LAYOUT.UNAVAILABLE,
    log:
        LAYOUT.log("record_unavailable", "{dataset}", "{tool}"),
    group:
        "probe"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        producer=lambda wildcards: SCORING.producer(wildcards.tool),
    script:
        "../scripts/record_unavailable.py"


# Collecting checks first that every tool's records (scores, edge cases, timing, grid check) come
# from one version of it (study/scoring/versions.py), so no table mixes two.
rule collect_scores:
    input:
        scores=SCORING.score_files(),
        records=SCORING.record_files(),
    output:
        LAYOUT.SCORES_TABLE,
    log:
        LAYOUT.log("collect_scores", DATASET),
    # On a cluster, one job collects the scores and makes every table and figure.
    group:
        "summary"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=15,
    script:
        "../scripts/collect_scores.py"


rule probe_edge_cases:
    output:
        LAYOUT.EDGE_CASES,
    log:
        LAYOUT.log("probe_edge_cases", "{tool}"),
    benchmark:
        LAYOUT.benchmark("probe_edge_cases", "{tool}")
    # On a cluster, one job probes every tool's edge cases (seconds each).
    group:
        "probe"
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        producer=lambda wildcards: SCORING.producer(wildcards.tool),
        settings=lambda wildcards: SCORING.settings(wildcards.tool),
        tool_paths=config.get("tool_paths", {}),
    script:
        "../scripts/probe_edge_cases.py"


rule time_hd:
    input:
        pairs=LAYOUT.timing_pairs(),
    output:
        LAYOUT.TIMING,
    log:
        LAYOUT.log("time_hd", "{tool}"),
    benchmark:
        LAYOUT.benchmark("time_hd", "{tool}")
    conda:
        STUDY_ENV
    # Timings are only comparable when nothing else runs beside them: locally the job takes
    # every core. On a cluster the SLURM profile gives it a node of its own (--exclusive)
    # instead; a cluster run may set no core total at all.
    threads: workflow.cores if workflow.resource_settings.cores else 1
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        producer=lambda wildcards: SCORING.producer(wildcards.tool),
        dataset=DATASET,
        grid=LAYOUT.timed_grid,
        pairs_per_category=config["timing"]["pairs_per_category"],
        repeats=config["timing"]["repeats"],
        # HD depends on neither the percentile nor tau: changing them reruns no timing.
        settings=lambda wildcards: SCORING.settings(
            wildcards.tool, "timeout", "memory_gb", "environment"
        ),
        tool_paths=config.get("tool_paths", {}),
    script:
        "../scripts/time_hd.py"


# Which scores depend on the grid: a few pairs of the first case on cropped and on scan-sized
# grids at every voxel size (study/scoring/grid_check.py), one job for the masks, one per tool.
rule grid_check_masks:
    input:
        expand(LAYOUT.case_manifest(), case=CASES[0]),
    output:
        **SCORING.grid_check_masks(),
    log:
        LAYOUT.log("grid_check_masks", DATASET),
    benchmark:
        LAYOUT.benchmark("grid_check_masks", DATASET)
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        # In the order of each grid's outputs.
        spacings=[parse_spacing_label(spacing) for spacing in SCORING.check_spacings],
        per_category=config["grid_check"]["pairs_per_category"],
        margin_mm=config["field_of_view"]["margin_mm"],
        scan_mm=config["field_of_view"]["scan_mm"],
    script:
        "../scripts/grid_check_masks.py"


rule check_grid:
    input:
        **rules.grid_check_masks.output,
    output:
        LAYOUT.GRID_CHECK,
    log:
        LAYOUT.log("check_grid", "{tool}"),
    benchmark:
        LAYOUT.benchmark("check_grid", "{tool}")
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        producer=lambda wildcards: SCORING.producer(wildcards.tool),
        dataset=DATASET,
        settings=lambda wildcards: SCORING.settings(wildcards.tool),
        tool_paths=config.get("tool_paths", {}),
        metrics=config["metrics"]["scored"],
    script:
        "../scripts/check_grid.py"
