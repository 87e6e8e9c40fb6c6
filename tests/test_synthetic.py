"""Synthetic dataset: categories, plausible anatomy, observer agreement, determinism, files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from vtk.util import numpy_support

from study.dataset.meshes import (
    mesh_volume,
    open_edge_count,
    read_manifest,
    read_mesh,
    signed_volume,
)
from study.dataset.synthetic import MARKER_FILE, generate_case, write_case
from study.dataset.voxelize import voxelize_pair
from study.oars import OARS, category_of_volume

# Observer agreement (median DSC over OARs and cases, masks at 0.5 mm) the study calls
# clinical: small organs about 0.5-0.8, large ones about 0.8-0.95.
AGREEMENT_RANGE = {
    "small": (0.5, 0.85),
    "midsize": (0.6, 0.92),
    "large": (0.78, 0.96),
    "tubular": (0.5, 0.9),
}


def points_of(mesh) -> np.ndarray:
    return numpy_support.vtk_to_numpy(mesh.GetPoints().GetData())


def volume_centre(mesh) -> np.ndarray:
    """Centre of mass of the enclosed volume (from a 1 mm voxelization)."""
    vox = voxelize_pair(mesh, None, (1.0, 1.0, 1.0))
    return np.argwhere(vox.mask_a).mean(axis=0) + vox.origin


def dsc(pair) -> float:
    vox = voxelize_pair(pair["A"], pair["B"], (0.5, 0.5, 0.5))
    return 2 * np.logical_and(vox.mask_a, vox.mask_b).sum() / (vox.mask_a.sum() + vox.mask_b.sum())


def test_every_oar_has_two_closed_outward_meshes(synthetic_cases):
    for case, organs in synthetic_cases.items():
        assert list(organs) == list(OARS)
        for name, pair in organs.items():
            for observer in ("A", "B"):
                mesh = pair[observer]
                assert open_edge_count(mesh) == 0, (case, name, observer)
                assert signed_volume(mesh) > 0, (case, name, observer)
                assert np.isclose(signed_volume(mesh), mesh_volume(mesh), rtol=1e-6)


def test_median_volumes_fall_in_their_category(synthetic_cases):
    volumes = {
        name: np.median(
            [mesh_volume(organs[name][obs]) for organs in synthetic_cases.values() for obs in "AB"]
        )
        for name in OARS
    }
    wrong = {
        name: round(v)
        for name, v in volumes.items()
        if OARS[name] != "tubular" and category_of_volume(v) != OARS[name]
    }
    assert not wrong
    # Carotids over the head-and-neck extent: about 2-5 cm^3.
    assert all(1.5e3 < volumes[name] < 6e3 for name in ("A_Carotid_L", "A_Carotid_R"))


def test_observer_agreement_is_clinical(synthetic_cases):
    rows = [
        {"category": OARS[name], "dsc": dsc(pair)}
        for organs in synthetic_cases.values()
        for name, pair in organs.items()
    ]
    medians = pd.DataFrame(rows).groupby("category")["dsc"].median()
    for category, (low, high) in AGREEMENT_RANGE.items():
        assert low <= medians[category] <= high, (category, medians[category])
    # Observers never agree perfectly, and never miss each other entirely.
    assert 0.2 < min(r["dsc"] for r in rows) and max(r["dsc"] for r in rows) < 0.99


def test_paired_organs_are_mirrored(synthetic_cases):
    for organs in synthetic_cases.values():
        for left in [n for n in OARS if n.endswith(("_L", "AL", "PL"))]:
            right = left[:-1] + "R"
            centre_l, centre_r = (volume_centre(organs[n]["A"]) for n in (left, right))
            assert centre_l[0] > 5 and centre_r[0] < -5, left  # x points to the patient's left
            assert abs(centre_l[0] + centre_r[0]) < 6, left
            # Tubes are trimmed by up to 16 mm at each end on each side: allow that along z.
            z_tolerance = 16 if OARS[left] == "tubular" or "Nrv" in left else 6
            assert np.allclose(centre_l[1:], centre_r[1:], atol=[6, z_tolerance]), left
    # Sizes match between sides: observers' noise aside (median over cases and observers).
    for left in [n for n in OARS if n.endswith(("_L", "AL", "PL"))]:
        right = left[:-1] + "R"
        volumes = {
            side: np.median(
                [
                    mesh_volume(organs[side][obs])
                    for organs in synthetic_cases.values()
                    for obs in "AB"
                ]
            )
            for side in (left, right)
        }
        assert 0.6 < volumes[left] / volumes[right] < 1.6, left


def test_shapes_are_plausible(synthetic_cases):
    organs = synthetic_cases[1]
    # The mandible is an arch: its centroid lies in the empty space inside the U.
    mandible = organs["Bone_Mandible"]["A"]
    vox = voxelize_pair(mandible, None, (1, 1, 1))
    centre = np.round(points_of(mandible).mean(axis=0) - vox.origin).astype(int)
    assert not vox.mask_a[tuple(centre)]
    # Lips and buccal mucosa are thin shells: mean thickness 2 V / S of a few mm.
    for name, max_thickness in (("Lips", 8.0), ("BuccalMucosa", 4.5)):
        mesh = organs[name]["A"]
        area = _area(mesh)
        assert 2 * mesh_volume(mesh) / area < max_thickness, name
    # Tubes are long and curved: the carotid spans > 10 cm and bends away from its chord.
    carotid = points_of(organs["A_Carotid_L"]["A"])
    low, high = carotid[carotid[:, 2].argmin()], carotid[carotid[:, 2].argmax()]
    assert high[2] - low[2] > 100
    chord = (high - low) / np.linalg.norm(high - low)
    off_chord = np.linalg.norm(np.cross(carotid - low, chord), axis=1)
    assert off_chord.max() > 8
    # Cochleae are tiny, the oral cavity is the largest soft-tissue volume.
    assert mesh_volume(organs["Cochlea_L"]["A"]) < 200
    assert mesh_volume(organs["Cavity_Oral"]["A"]) > 4e4


def _area(mesh) -> float:
    import vtk

    mass = vtk.vtkMassProperties()
    mass.SetInputData(mesh)
    mass.Update()
    return mass.GetSurfaceArea()


def test_tubes_start_and_end_on_different_slices(synthetic_cases):
    differences = []
    for organs in synthetic_cases.values():
        for name in ("A_Carotid_L", "A_Carotid_R", "SpinalCord", "Esophagus_S"):
            z_a, z_b = (points_of(organs[name][obs])[:, 2] for obs in "AB")
            differences += [abs(z_a.min() - z_b.min()), abs(z_a.max() - z_b.max())]
    assert np.median(differences) > 1.0  # half a slice at 2 mm


def test_deterministic_and_seed_dependent():
    names = ["Cochlea_R", "OpticNrv_L", "Glnd_Submand_L"]
    first, again = generate_case(2, 11, names), generate_case(2, 11, names)
    other = generate_case(2, 12, names)
    for name in names:
        for observer in "AB":
            assert np.array_equal(
                points_of(first[name][observer]), points_of(again[name][observer])
            )
        assert not np.array_equal(
            points_of(first[name]["A"]).shape, points_of(other[name]["A"]).shape
        ) or not np.allclose(points_of(first[name]["A"]), points_of(other[name]["A"]))


def test_selection_does_not_change_an_organ():
    alone = generate_case(1, 5, ["Pituitary"])["Pituitary"]["B"]
    together = generate_case(1, 5, ["Cochlea_L", "Pituitary"])["Pituitary"]["B"]
    assert np.array_equal(points_of(alone), points_of(together))


def test_unknown_oar_is_refused():
    with pytest.raises(ValueError, match="unknown OAR name.*'Spleen'"):
        generate_case(1, 5, ["Pituitary", "Spleen"])


def test_write_case_and_folder_ownership(tmp_path):
    folder = tmp_path / "synthetic"
    manifest_path = write_case(folder, 1, 5, ["Cochlea_L"])
    assert (folder / MARKER_FILE).is_file()
    table = read_manifest(manifest_path)
    assert list(table["observer"]) == ["A", "B"] and set(table["category"]) == {"small"}
    for row in table.itertuples():
        assert row.path and np.isclose(row.volume_mm3, mesh_volume(read_mesh(row.file)), rtol=1e-3)
    # A rerun into its own folder is fine, and writes the same meshes again.
    rerun = read_manifest(write_case(folder, 1, 5, ["Cochlea_L"]))
    pd.testing.assert_frame_equal(rerun, table)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "scan.nrrd").write_text("user data")
    with pytest.raises(FileExistsError, match="not created by the synthetic generator"):
        write_case(foreign, 1, 5, ["Cochlea_L"])
    assert (foreign / "scan.nrrd").read_text() == "user data"
    assert not (foreign / "meshes").exists()
