"""The whole study on a researcher's own masks, as the README tells them to run it.

A HaN-Seg-layout folder (two observers, NRRD label files on a CT-like grid, one organ per
category and one organ drawn by only one observer) is listed with `python -m study.dataset.realdata
hanseg`, and the workflow runs on that manifest to its end: scores, tables, figures, findings
and the HTML report. The user's folder is only read.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import SimpleITK as sitk
import yaml
from test_workflow_study import snakemake, write_config

# The workflow runs in the repository: its reference jobs start with compiled kernels.
pytestmark = pytest.mark.usefixtures("compiled_kernels")


CT_SPACING = (1.0, 1.0, 3.0)
CT_ORIGIN = (-50.0, -60.0, 400.0)
CT_SHAPE = (100, 100, 40)

# name -> (centre in voxels, radii in mm (x, y, z)); one per category, and the glottis.
ORGANS = {
    "Cochlea_L": ((25, 30, 20), (3.5, 3.0, 3.0)),  # small: about 130 mm^3
    "Glnd_Submand_R": ((70, 40, 12), (14.0, 11.0, 9.0)),  # midsize: about 5,800 mm^3
    "Parotid_L": ((35, 65, 22), (20.0, 15.0, 15.0)),  # large: about 19,000 mm^3
    "A_Carotid_L": ((75, 75, 20), (3.0, 3.0, 45.0)),  # tubular: a long thin rod
    "Glottis": ((50, 20, 30), (8.0, 6.0, 6.0)),  # drawn by observer 1 only
}


def organ_mask(centre, radii, shift_mm=(0.0, 0.0, 0.0)) -> np.ndarray:
    axes = [
        (np.arange(n) - c) * s - d
        for n, c, s, d in zip(CT_SHAPE, centre, CT_SPACING, shift_mm, strict=True)
    ]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    return (x / radii[0]) ** 2 + (y / radii[1]) ** 2 + (z / radii[2]) ** 2 <= 1


def write_seg_nrrd(path, mask) -> None:
    """Written the way a segmentation tool would (SimpleITK directly, not the project's io)."""
    image = sitk.GetImageFromArray(np.ascontiguousarray(mask.astype(np.uint8).T))
    image.SetSpacing(CT_SPACING)
    image.SetOrigin(CT_ORIGIN)
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def hanseg_folder(root):
    """Observer 2 draws every organ but the glottis, shifted by a millimetre or two."""
    for name, (centre, radii) in ORGANS.items():
        write_seg_nrrd(
            root / f"obs1/case_07/case_07_OAR_{name}.seg.nrrd", organ_mask(centre, radii)
        )
        if name != "Glottis":
            write_seg_nrrd(
                root / f"obs2/case_07/case_07_OAR_{name}.seg.nrrd",
                organ_mask(centre, radii, shift_mm=(1.5, -1.0, 3.0)),
            )
    return root


def snapshot(folder) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def user_study(tmp_path_factory):
    data = hanseg_folder(tmp_path_factory.mktemp("hanseg"))
    before = snapshot(data)
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "study.dataset.realdata",
            "hanseg",
            data / "obs1",
            data / "obs2",
            data / "pairs.csv",
        ],
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    workdir = tmp_path_factory.mktemp("study")
    config = {
        "dataset": {
            "name": "hanseg_try",
            "source": "manifest",
            "manifest": str(data / "pairs.csv"),
        },
        "voxel_sizes": [[2, 2, 2], [1, 1, 2]],
        "tools": ["deepmind", "simpleitk"],
        "reference": {"meshings": ["discrete_marching_cubes", "marching_cubes"]},
        "timing": {"voxel_size": [2, 2, 2], "repeats": 1},
    }
    configfile = write_config(workdir / "cfg.yaml", config)
    snakemake(workdir, configfile=configfile)
    snakemake(workdir, "--report", "results/report.html", configfile=configfile)
    return workdir, data, before


def test_the_user_folder_is_only_read(user_study):
    _, data, before = user_study
    after = snapshot(data)
    assert after.pop(str(data / "pairs.csv"))  # the listing the user asked for, nothing else
    assert after == before


def test_every_organ_is_scored_by_every_tool(user_study):
    workdir, _, _ = user_study
    scores = pd.read_parquet(workdir / "results/scores.parquet")
    assert set(scores.dataset) == {"hanseg_try"} and set(scores.case) == {"case_07"}
    assert set(scores.oar) == set(ORGANS)
    assert {"reference", "reference-marching-cubes", "deepmind", "simpleitk"} == set(scores.tool)
    assert set(scores.category) == {"small", "midsize", "large", "tubular"}
    drawn = scores[scores.oar != "Glottis"]
    assert (drawn.status == "ok").all(), drawn[drawn.status != "ok"]
    # Observer 2 drew no glottis: the reference's documented empty-mask result, not an error.
    glottis = scores[(scores.oar == "Glottis") & (scores.tool == "reference")]
    distances = glottis[glottis.metric.isin(["HD", "HD95", "MASD", "ASSD"])]
    assert (distances.status == "inf").all() and (glottis[glottis.metric == "NSD"].value == 0).all()


def test_volumes_come_from_the_users_masks(user_study):
    workdir, _, _ = user_study
    manifest = pd.read_csv(workdir / "results/meshes/hanseg_try/manifest.csv")
    parotid = manifest[(manifest.oar == "Parotid_L") & (manifest.observer == "A")].iloc[0]
    voxels = organ_mask(*ORGANS["Parotid_L"]).sum() * np.prod(CT_SPACING)
    assert parotid.volume_mm3 == pytest.approx(voxels, rel=0.08)  # smoothed mesh of the mask


def test_every_table_figure_and_the_report_are_written(user_study):
    workdir, _, _ = user_study
    results = workdir / "results"
    for table in ("table_a1", "table_a2", "table_wilcoxon", "table_a3", "table_a4"):
        assert (results / f"tables/{table}.csv").stat().st_size > 0, table
    for figure in ("figure_4", "figure_a3", "figure_a4", "figure_a5"):
        assert (results / f"figures/{figure}.png").stat().st_size > 10_000, figure
    assert "hanseg_try" in (results / "findings.md").read_text()
    assert "mask pairs of hanseg_try" in (results / "recommendations.md").read_text()
    assert (results / "cards.md").read_text().startswith("# Tool cards")
    assert (results / "tables/intervals.csv").stat().st_size > 0
    page = (results / "report.html").read_text()
    for name in (
        "table_a1.html",
        "figure_a3.png",
        "figure_a5.png",
        "findings.html",
        "cards.html",
        "recommendations.html",
        "intervals.html",
    ):
        assert name in page, name
    assert not (workdir / "data").exists()  # nothing generated beside the user's data
    assert yaml.safe_load((workdir / "cfg.yaml").read_text())["dataset"]["source"] == "manifest"
