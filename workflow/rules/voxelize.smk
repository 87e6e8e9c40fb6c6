# Voxelization: every mesh pair of a case at every voxel size, on a grid shared by A and B.
#
# One job per case, not per (case, voxel size): the job reads and checks the case's meshes
# once, and its imports (VTK, SimpleITK) are paid once; reading, checking and imports cost
# about as much as voxelizing at one voxel size (docs/workflow.md). Scoring needs every voxel
# size of a case anyway, so nothing waits longer.
from study.records import parse_spacing_label

# The synthetic organs' meshes; a user's masks are voxelized by prepare_user_case
# (dataset.smk).
if SOURCE == "synthetic":

    rule voxelize_case:
        input:
            LAYOUT.case_manifest(),
        output:
            expand(LAYOUT.PAIRS, spacing=VOXEL_SPACINGS, allow_missing=True),
        log:
            LAYOUT.log("voxelize_case", "{dataset}", "{case}"),
        benchmark:
            LAYOUT.benchmark("voxelize_case", "{dataset}", "{case}")
        # A cluster submits a case's meshing and voxelization as one job, several cases together
        # (group jobs, profiles/slurm); a local run ignores groups.
        group:
            "prepare"
        conda:
            STUDY_ENV
        threads: 1
        resources:
            mem_mb=4000,
            runtime=30,
        params:
            spacings=[parse_spacing_label(spacing) for spacing in VOXEL_SPACINGS],
            margin_mm=config["field_of_view"]["margin_mm"],
            size_mm=LAYOUT.size_mm,
            scan_mm=LAYOUT.scored_scan_mm,
        script:
            "../scripts/voxelize_case.py"


# Scan-sized masks for the HD timing when the scored masks are cropped (timing.grid: scan): one
# voxel size, the timed cases only. Files of the same names as the scored masks, under scan/.
rule voxelize_scan_case:
    input:
        LAYOUT.case_manifest(),
    output:
        LAYOUT.SCAN_PAIRS,
    log:
        LAYOUT.log("voxelize_scan_case", "{dataset}", "{spacing}", "{case}"),
    benchmark:
        LAYOUT.benchmark("voxelize_scan_case", "{dataset}", "{spacing}", "{case}")
    conda:
        STUDY_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        scan_mm=config["field_of_view"]["scan_mm"],
    script:
        "../scripts/voxelize_scan_case.py"
