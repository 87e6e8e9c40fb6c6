# Voxelization: every mesh pair of a case at one voxel size, on a grid shared by A and B.
from study.records import parse_spacing_label


rule voxelize_case:
    input:
        case_manifest(),
    output:
        pairs_csv(),
    params:
        spacing=lambda wildcards: parse_spacing_label(wildcards.spacing),
        margin_mm=config["field_of_view"]["margin_mm"],
        size_mm=(config["field_of_view"]["size_mm"]
                 if config["field_of_view"]["policy"] == "fixed" else None),
    log:
        "results/logs/voxelize_case/{dataset}/{spacing}/{case}.log",
    benchmark:
        "results/benchmarks/voxelize_case/{dataset}/{spacing}/{case}.tsv"
    threads: 1
    conda:
        "../../environment.yml"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/voxelize_case.py"


voxelize_targets = LAYOUT.voxelize_targets
