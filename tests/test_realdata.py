"""User-supplied masks: HaN-Seg folder listing, pair manifest, meshing, and bad input."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
import SimpleITK as sitk

from maskio import InputError, read_mask, write_mask
from study.dataset.meshes import (
    mesh_from_mask,
    mesh_volume,
    open_edge_count,
    read_manifest,
    read_mesh,
)
from study.dataset.realdata import (
    build_hanseg_manifest,
    mesh_user_case,
    read_pair_manifest,
    write_native_case,
)
from study.dataset.voxelize import voxelize_mesh

SPACING = (0.6, 0.6, 2.0)
ORIGIN = (-30.0, 12.5, 100.0)


def ellipsoid_mask(shape=(60, 50, 16), center=(30, 25, 8), radii=(12, 9, 4)) -> np.ndarray:
    grid = np.indices(shape).transpose(1, 2, 3, 0)
    return (((grid - center) / radii) ** 2).sum(axis=-1) <= 1


def write_nrrd(path, array, spacing=SPACING, origin=ORIGIN) -> None:
    """A .seg.nrrd-like file written independently of maskio (axes z, y, x in SimpleITK)."""
    image = sitk.GetImageFromArray(np.ascontiguousarray(array.astype(np.uint8).T))
    image.SetSpacing(spacing)
    image.SetOrigin(origin)
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


@pytest.fixture
def hanseg(tmp_path):
    """Two observers' folders: case_01 with Pituitary (both) and Glottis (observer A only)."""
    root = tmp_path / "hanseg"
    mask = ellipsoid_mask()
    shifted = np.roll(mask, 2, axis=0)
    write_nrrd(root / "obs1/case_01/case_01_OAR_Pituitary.seg.nrrd", mask)
    write_nrrd(root / "obs2/case_01/case_01_OAR_Pituitary.seg.nrrd", shifted)
    write_nrrd(root / "obs1/case_01/case_01_OAR_Glottis.seg.nrrd", mask)
    write_nrrd(root / "obs1/case_01/case_01_IMG_CT.nrrd", mask)  # not a segmentation
    return root


def snapshot(folder) -> dict:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_hanseg_manifest_and_meshing(hanseg, tmp_path):
    manifest = build_hanseg_manifest(hanseg / "obs1", hanseg / "obs2", hanseg / "pairs.csv")
    assert list(manifest["oar"]) == ["Glottis", "Pituitary"]
    assert manifest.loc[0, "path_b"] == ""  # observer B drew no glottis
    assert manifest.loc[1, "path_a"] == "obs1/case_01/case_01_OAR_Pituitary.seg.nrrd"
    before = snapshot(hanseg)
    out = tmp_path / "results/meshes/user/meshes/case_01"
    records = mesh_user_case(hanseg / "pairs.csv", "case_01", out)
    assert snapshot(hanseg) == before  # the user's folder is only read
    table = read_manifest(out / "manifest.csv")
    assert len(records) == len(table) == 4
    glottis_b = table[(table["oar"] == "Glottis") & (table["observer"] == "B")].iloc[0]
    assert glottis_b["path"] == "" and glottis_b["volume_mm3"] == 0
    mask_volume = ellipsoid_mask().sum() * math.prod(SPACING)
    for row in table[table["path"] != ""].itertuples():
        mesh = read_mesh(row.file)
        assert open_edge_count(mesh) == 0
        # Smoothed marching cubes keeps the volume of the mask within a few percent.
        assert abs(mesh_volume(mesh) / mask_volume - 1) < 0.08
    with pytest.raises(InputError, match="refusing to overwrite"):
        build_hanseg_manifest(hanseg / "obs1", hanseg / "obs2", hanseg / "pairs.csv")


def test_a_manifest_write_that_dies_leaves_the_old_manifest_or_none(hanseg, monkeypatch):
    """A CSV cut short would be refused by the next call ("exists"): none is left instead,
    and a failed --overwrite keeps the old one."""
    manifest = hanseg / "pairs.csv"
    real = pd.DataFrame.to_csv

    def dies_midway(table, path, **options):
        real(table.iloc[:1], path, **options)
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        build_hanseg_manifest(hanseg / "obs1", hanseg / "obs2", manifest)
    assert sorted(p.name for p in hanseg.iterdir()) == ["obs1", "obs2"]
    monkeypatch.undo()
    assert len(build_hanseg_manifest(hanseg / "obs1", hanseg / "obs2", manifest)) == 2
    before = manifest.read_text()
    monkeypatch.setattr(pd.DataFrame, "to_csv", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        build_hanseg_manifest(hanseg / "obs1", hanseg / "obs2", manifest, overwrite=True)
    assert manifest.read_text() == before


def test_meshes_land_where_the_masks_are(hanseg, tmp_path):
    """Mesh coordinates are physical: voxelizing the mesh on the mask's grid gives the mask."""
    mask, spacing, origin = read_mask(hanseg / "obs1/case_01/case_01_OAR_Pituitary.seg.nrrd")
    assert spacing == SPACING and origin == ORIGIN
    unsmoothed = mesh_from_mask(mask, spacing, origin, smooth_iterations=0)
    assert np.array_equal(voxelize_mesh(unsmoothed, spacing, origin, mask.shape), mask)
    smoothed = mesh_from_mask(mask, spacing, origin)
    again = voxelize_mesh(smoothed, spacing, origin, mask.shape)
    assert np.logical_xor(again, mask).sum() < 0.1 * mask.sum()


def test_label_maps(tmp_path):
    labels = ellipsoid_mask().astype(np.uint8) * 3
    labels[:10] = 5
    write_nrrd(tmp_path / "user/labels.nrrd", labels)
    mask, _, _ = read_mask(tmp_path / "user/labels.nrrd", label=3)
    assert mask.sum() == (labels == 3).sum()
    with pytest.raises(ValueError, match=r"labels.nrrd: mask is not binary.*--label N"):
        read_mask(tmp_path / "user/labels.nrrd")
    with pytest.raises(ValueError, match="labels.nrrd: label 4 does not occur"):
        read_mask(tmp_path / "user/labels.nrrd", label=4)
    pd.DataFrame(
        [
            {
                "case": "p1",
                "oar": "Parotid_L",
                "path_a": "labels.nrrd",
                "path_b": "labels.nrrd",
                "label_a": "3",
                "label_b": "5",
            }
        ]
    ).to_csv(tmp_path / "user/pairs.csv", index=False)
    out = tmp_path / "out"
    mesh_user_case(tmp_path / "user/pairs.csv", "p1", out)
    table = read_manifest(out / "manifest.csv").set_index("observer")
    # Each observer's mesh encloses its own label's voxels (label 5 holds 4.6x label 3's).
    for observer, label in (("A", 3), ("B", 5)):
        voxels_mm3 = (labels == label).sum() * math.prod(SPACING)
        assert abs(table.loc[observer, "volume_mm3"] / voxels_mm3 - 1) < 0.05, observer


def write_pairs(folder, **columns) -> os.PathLike:
    row = {"case": "c1", "oar": "Pituitary", "path_a": "a.nii.gz", "path_b": "b.nii.gz"}
    row.update(columns)
    path = folder / "pairs.csv"
    pd.DataFrame([row]).to_csv(path, index=False)
    return path


@pytest.fixture
def pair_folder(tmp_path):
    user = tmp_path / "user"
    write_mask(user / "a.nii.gz", ellipsoid_mask(), SPACING, ORIGIN)
    write_mask(user / "b.nii.gz", ellipsoid_mask(), SPACING, ORIGIN)
    return user


def test_grids_that_differ_are_refused(pair_folder):
    write_mask(pair_folder / "b.nii.gz", ellipsoid_mask(), (0.6, 0.6, 3.0), ORIGIN)
    with pytest.raises(InputError, match=r"a\.nii\.gz and .*b\.nii\.gz are not on the same grid"):
        mesh_user_case(write_pairs(pair_folder), "c1", pair_folder.parent / "out")


@pytest.mark.parametrize(
    "columns, message",
    [
        ({"oar": "Spleen"}, r"pairs.csv, line 2: unknown OAR name 'Spleen'"),
        ({"path_b": "missing.nii.gz"}, r"pairs.csv, line 2: mask file 'missing.nii.gz' not found"),
        ({"path_a": "", "path_b": ""}, "both path_a and path_b are empty"),
        ({"label_a": "x"}, "label_a must be a whole number"),
        ({"category": "huge"}, "category 'huge' is not one of"),
    ],
)
def test_bad_manifest_rows(pair_folder, columns, message):
    with pytest.raises(InputError, match=message):
        read_pair_manifest(write_pairs(pair_folder, **columns))


def test_custom_organ_with_category_is_accepted(pair_folder):
    table = read_pair_manifest(write_pairs(pair_folder, oar="Spleen", category="large"))
    assert table.loc[0, "category"] == "large"


def test_missing_manifest_and_columns(tmp_path):
    with pytest.raises(InputError, match="nope.csv: pair manifest not found"):
        read_pair_manifest(tmp_path / "nope.csv")
    (tmp_path / "short.csv").write_text("case,oar,path_a\nc1,Lips,a.nii.gz\n")
    with pytest.raises(ValueError, match=r"short.csv: pair manifest lacks column\(s\) \['path_b"):
        read_pair_manifest(tmp_path / "short.csv")


def test_missing_and_non_binary_mask_files(tmp_path):
    with pytest.raises(InputError, match="gone.nii.gz: file not found"):
        read_mask(tmp_path / "gone.nii.gz")
    with pytest.raises(ValueError, match="x.nii.gz: mask to write is not binary"):
        write_mask(tmp_path / "x.nii.gz", np.full((3, 3, 3), 2), (1, 1, 1), (0, 0, 0))
    with pytest.raises(ValueError, match="y.nii.gz: voxel size must be positive"):
        write_mask(tmp_path / "y.nii.gz", np.ones((3, 3, 3), bool), (1, 0, 1), (0, 0, 0))


def test_meshes_never_go_into_the_users_folder(pair_folder):
    with pytest.raises(ValueError, match="must not be written into the user's data folder"):
        mesh_user_case(write_pairs(pair_folder), "c1", pair_folder / "meshes")
    assert not (pair_folder / "meshes").exists()


def test_the_native_grid_is_the_masks_own_cropped_to_the_pair(pair_folder, tmp_path):
    """write_native_case keeps the voxels and spacing as drawn, cuts both masks to their union
    plus the margin (ceil(margin / spacing) voxels a side), and gives an observer who drew
    nothing an empty mask on the same grid."""
    a = ellipsoid_mask(center=(20, 25, 8))
    b = np.roll(a, 3, axis=0)
    write_mask(pair_folder / "a.nii.gz", a, SPACING, ORIGIN)
    write_mask(pair_folder / "b.nii.gz", b, SPACING, ORIGIN)
    write_mask(pair_folder / "c.nii.gz", a, SPACING, ORIGIN)
    rows = [
        {"case": "c1", "oar": "Pituitary", "path_a": "a.nii.gz", "path_b": "b.nii.gz"},
        {"case": "c1", "oar": "Glottis", "path_a": "c.nii.gz", "path_b": ""},
    ]
    pd.DataFrame(rows).to_csv(pair_folder / "pairs.csv", index=False)
    out = tmp_path / "native"
    pairs = pd.read_csv(write_native_case(pair_folder / "pairs.csv", "c1", out, margin_mm=3.0))
    assert list(pairs.spacing) == ["native", "native"]
    first = pairs.iloc[0]
    got_a, origin_a = read_mask(out / first.path_a)[0], read_mask(out / first.path_a)[2]
    got_b = read_mask(out / first.path_b)[0]
    union = a | b
    pad = [math.ceil(3.0 / s) for s in SPACING]  # 5, 5, 2 voxels
    low = [
        int(np.flatnonzero(union.any(axis=tuple(j for j in range(3) if j != i)))[0])
        for i in range(3)
    ]
    start = [max(lo - p, 0) for lo, p in zip(low, pad, strict=True)]
    assert origin_a == pytest.approx(
        [o + s * i for o, s, i in zip(ORIGIN, SPACING, start, strict=True)]
    )
    assert got_a.sum() == a.sum() and got_b.sum() == b.sum()
    assert got_a.shape == got_b.shape
    np.testing.assert_array_equal(
        got_a, a[tuple(slice(i, i + n) for i, n in zip(start, got_a.shape, strict=True))]
    )
    assert first.volume_a_mm3 == pytest.approx(a.sum() * math.prod(SPACING))
    glottis = pairs.iloc[1]
    assert read_mask(out / glottis.path_b)[0].sum() == 0 and glottis.volume_b_mm3 == 0
    assert read_mask(out / glottis.path_b)[0].shape == read_mask(out / glottis.path_a)[0].shape


def test_a_mask_of_another_dimension_than_the_study_is_refused_by_its_file(pair_folder):
    with pytest.raises(InputError, match=r"a\.nii\.gz: a 3D mask in a 2D study"):
        mesh_user_case(write_pairs(pair_folder), "c1", pair_folder.parent / "out", dimension=2)


def test_a_manifest_of_2d_masks_is_meshed_voxelized_and_cropped_in_2d(tmp_path):
    from study.dataset.realdata import prepare_user_case

    user = tmp_path / "user"
    x, y = np.meshgrid(np.arange(40) * 0.7, np.arange(30) * 0.7, indexing="ij")
    disc = (x - 14) ** 2 + (y - 10) ** 2 <= 6**2
    write_mask(user / "a.nii.gz", disc, (0.7, 0.7), (0.0, 0.0))
    write_mask(user / "b.nii.gz", np.roll(disc, 2, axis=0), (0.7, 0.7), (0.0, 0.0))
    manifest = write_pairs(user, oar="Lesion", category="small")
    grids = ["1x1", "0.5x2", "native"]
    prepare_user_case(
        manifest, "c1", tmp_path / "meshes", grids, [tmp_path / g for g in grids], margin_mm=2.0
    )
    for grid, spacing in (("1x1", (1.0, 1.0)), ("0.5x2", (0.5, 2.0)), ("native", (0.7, 0.7))):
        row = pd.read_csv(tmp_path / grid / "pairs.csv").iloc[0]
        mask, got_spacing, _ = read_mask(tmp_path / grid / row.path_a)
        assert mask.ndim == 2 and got_spacing == pytest.approx(spacing), grid  # NIfTI: float32
        # The disc's area, pi 36 = 113 mm^2, to within the pixels' staircase.
        assert abs(row.volume_a_mm3 / (math.pi * 36) - 1) < 0.1, grid
