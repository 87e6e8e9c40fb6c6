# Configuration, validated at start-up, and the names every stage shares.
import re

from study.oars import selected_oars
from study.pipeline.config import load_config
from study.pipeline.layout import Layout
from study.dataset.synthetic import MARKER_FILE, is_foreign_folder
from study.dataset import lidc

# Validate config.yaml (and any --config overrides) against workflow/schemas/ and fill in
# defaults; a bad key stops the workflow here, before any job runs.
config.update(load_config(dict(config)))

# A lidc dataset's reader pairs are written once, before the cases can be listed: its
# manifest names them (a few seconds per 10 scans; a no-op when the selection is unchanged).
if config["dataset"]["source"] == "lidc":
    lidc.prepare(config)

# Every path of the workflow (study/pipeline/layout.py).
LAYOUT = Layout(config)
# The one software environment of every rule (Snakemake's conda deployment); conda: paths are
# relative to the rule files in workflow/rules/.
STUDY_ENV = "../../environment.yml"
DATASET = LAYOUT.dataset
SOURCE = LAYOUT.source
CASES = LAYOUT.cases
SPACINGS = LAYOUT.spacings
VOXEL_SPACINGS = LAYOUT.voxel_spacings
MESH_ROOT = LAYOUT.mesh_root
OARS_SELECTED = selected_oars(config["dataset"]["oars"])

if SOURCE == "synthetic" and is_foreign_folder(MESH_ROOT):
    raise ValueError(
        f"{MESH_ROOT}: holds files not made by the synthetic generator (no {MARKER_FILE}); "
        "refusing to overwrite them (set dataset.name to another folder)"
    )


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    case="|".join(re.escape(case) for case in CASES),
    spacing=r"[0-9.]+x[0-9.]+(x[0-9.]+)?|native",
