# The benchmark of segmentation-metric implementations as one Snakemake workflow.
# Stages live in workflow/rules/<stage>.smk; each defines <stage>_targets(), and `rule all`
# asks for the targets of every stage present. Adding a stage = one .smk file + its name below.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/voxelize.smk"


# Later stages, included when their rule files exist, in data-flow order.
OPTIONAL_STAGES = ["scoring", "analysis"]
for stage in OPTIONAL_STAGES:
    if Path(workflow.basedir, "workflow", "rules", f"{stage}.smk").exists():

        include: f"workflow/rules/{stage}.smk"


# Union of the targets of every included stage, each stage's <stage>_targets().
TARGET_FUNCTIONS = [
    globals().get(f"{name}_targets") for name in ["dataset", "voxelize", *OPTIONAL_STAGES]
]


rule all:
    default_target: True
    input:
        [path for targets in TARGET_FUNCTIONS if targets is not None for path in targets()],
