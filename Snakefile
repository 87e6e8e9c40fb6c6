# The benchmark of segmentation-metric implementations as one Snakemake workflow.
# Stages live in workflow/rules/<stage>.smk, included below in data-flow order; `rule all`
# asks for every stage's targets. Adding a stage = one .smk file, its include and its targets
# below.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/voxelize.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/analysis.smk"


# Every file the study makes, stage by stage: the dataset's masks and manifest, the voxelized
# pairs, the scores, edge cases and timing, the tables, figures and pages.
rule all:
    default_target: True
    input:
        LAYOUT.dataset_targets(),
        LAYOUT.voxelize_targets(),
        SCORING.targets(),
        ANALYSIS.targets(),
