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
            dimension=config["dataset"]["dimension"],
        script:
            "../scripts/synthesize_case.py"

else:

    # A user's or LIDC's masks: one job per case meshes its pairs, voxelizes the meshes at
    # every voxel size and crops the masks for the native grid. Their imports (VTK,
    # SimpleITK, pandas: about 2 s) cost more than a small case's work, so one job pays them
    # once instead of three (docs/workflow.md, "Throughput").
    rule prepare_user_case:
        input:
            manifest=config["dataset"]["manifest"],
        output:
            meshes=LAYOUT.case_manifest(),
            masks=expand(LAYOUT.PAIRS, dataset=DATASET, spacing=SPACINGS, allow_missing=True),
        log:
            LAYOUT.log("prepare_user_case", DATASET, "{case}"),
        benchmark:
            LAYOUT.benchmark("prepare_user_case", DATASET, "{case}")
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
            spacings=SPACINGS,
            margin_mm=config["field_of_view"]["margin_mm"],
            size_mm=LAYOUT.size_mm,
            scan_mm=LAYOUT.scored_scan_mm,
        script:
            "../scripts/prepare_user_case.py"


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
