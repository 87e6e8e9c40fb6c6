# Dataset: meshes of two observers per (case, OAR), and the dataset's mesh manifest.

if SOURCE == "synthetic":

    rule synthesize_case:
        output:
            "data/{dataset}/meshes/{case}/manifest.csv",
        params:
            seed=config["dataset"]["seed"],
            oars=OARS_SELECTED,
        log:
            "results/logs/synthesize_case/{dataset}/{case}.log",
        benchmark:
            "results/benchmarks/synthesize_case/{dataset}/{case}.tsv"
        threads: 1
        conda:
            STUDY_ENV
        resources:
            mem_mb=3000,
            runtime=10,
        script:
            "../scripts/synthesize_case.py"

else:

    rule mesh_user_case:
        input:
            manifest=config["dataset"]["manifest"],
        output:
            "results/meshes/{dataset}/meshes/{case}/manifest.csv",
        params:
            oars=config["dataset"]["oars"],
        log:
            "results/logs/mesh_user_case/{dataset}/{case}.log",
        benchmark:
            "results/benchmarks/mesh_user_case/{dataset}/{case}.tsv"
        threads: 1
        conda:
            STUDY_ENV
        resources:
            mem_mb=4000,
            runtime=30,
        script:
            "../scripts/mesh_user_case.py"


rule dataset_manifest:
    input:
        expand(case_manifest(), case=CASES),
    output:
        LAYOUT.dataset_manifest(),
    log:
        f"results/logs/dataset_manifest/{DATASET}.log",
    threads: 1
    conda:
        STUDY_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/merge_manifests.py"


dataset_targets = LAYOUT.dataset_targets
