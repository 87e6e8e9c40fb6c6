# Configuration, validated at start-up, and the names every stage shares.
import re

from study.config import load_config, selected_oars
from study.records import spacing_label
from study.synthetic import MARKER_FILE, case_id, is_foreign_folder

# Validate config.yaml (and any --config overrides) against workflow/schemas/ and fill in
# defaults; a bad key stops the workflow here, before any job runs.
config.update(load_config(dict(config)))

DATASET = config["dataset"]["name"]
SOURCE = config["dataset"]["source"]
OARS_SELECTED = selected_oars(config)
SPACINGS = [spacing_label(size) for size in config["voxel_sizes"]]
TIMING_SPACING = spacing_label(config["timing"]["voxel_size"])


def _cases():
    """Case ids: case_01.. for the synthetic dataset, else those of the user's manifest."""
    if SOURCE == "synthetic":
        return [case_id(n) for n in range(1, config["dataset"]["cases"] + 1)]
    from study.realdata import read_pair_manifest

    return sorted(read_pair_manifest(config["dataset"]["manifest"])["case"].unique())


CASES = _cases()

# Meshes: generated data go to data/<name>/; meshes of user masks to results/, so the
# user's folders are only read.
MESH_ROOT = f"data/{DATASET}" if SOURCE == "synthetic" else f"results/meshes/{DATASET}"

if SOURCE == "synthetic":
    if is_foreign_folder(MESH_ROOT):
        raise ValueError(
            f"{MESH_ROOT}: holds files not made by the synthetic generator (no {MARKER_FILE}); "
            "refusing to overwrite them (set dataset.name to another folder)")


def case_manifest():
    """Pattern of one case's mesh manifest."""
    return MESH_ROOT + "/meshes/{case}/manifest.csv"


def pairs_csv():
    """Pattern of the pairs table of one (dataset, voxel size, case)."""
    return "results/masks/{dataset}/{spacing}/{case}/pairs.csv"


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    case="|".join(re.escape(case) for case in CASES),
    spacing=r"[0-9.]+x[0-9.]+x[0-9.]+",
