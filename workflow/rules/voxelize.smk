# Voxelization: every mesh pair of a case at one voxel size, on a grid shared by A and B.


rule voxelize_case:
    input:
        case_manifest(),
    output:
        pairs_csv(),
    params:
        spacing=lambda wildcards: [float(v) for v in wildcards.spacing.split("x")],
        margin_mm=config["field_of_view"]["margin_mm"],
        size_mm=(config["field_of_view"]["size_mm"]
                 if config["field_of_view"]["policy"] == "fixed" else None),
    log:
        "results/logs/voxelize_case/{dataset}/{spacing}/{case}.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/voxelize_case.py"


def voxelize_targets():
    return expand(pairs_csv(), dataset=DATASET, spacing=SPACINGS, case=CASES)
