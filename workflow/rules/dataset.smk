# Dataset: meshes of two observers per (case, OAR), and the dataset's mesh manifest.

if SOURCE == "synthetic":

    rule synthesize_case:
        output:
            LAYOUT.case_manifest(),
        log:
            LAYOUT.log("synthesize_case", DATASET, "{case}"),
        benchmark:
            LAYOUT.benchmark("synthesize_case", DATASET, "{case}")
        group:
            "prepare"
        conda:
            STUDY_ENV
        threads: 1
        resources:
            mem_mb=3000,
            runtime=10,
        params:
            root=lambda wildcards, output: LAYOUT.mesh_root_of(output[0]),
            seed=config["dataset"]["seed"],
            oars=OARS_SELECTED,
        script:
            "../scripts/synthesize_case.py"

else:

    rule mesh_user_case:
        input:
            manifest=config["dataset"]["manifest"],
        output:
            LAYOUT.case_manifest(),
        log:
            LAYOUT.log("mesh_user_case", DATASET, "{case}"),
        benchmark:
            LAYOUT.benchmark("mesh_user_case", DATASET, "{case}")
        group:
            "prepare"
        conda:
            STUDY_ENV
        threads: 1
        resources:
            mem_mb=4000,
            runtime=30,
        params:
            oars=config["dataset"]["oars"],
        script:
            "../scripts/mesh_user_case.py"


rule dataset_manifest:
    input:
        expand(LAYOUT.case_manifest(), case=CASES),
    output:
        LAYOUT.dataset_manifest(),
    log:
        LAYOUT.log("dataset_manifest", DATASET),
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/merge_manifests.py"


dataset_targets = LAYOUT.dataset_targets
