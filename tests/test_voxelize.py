"""Voxelization: volumes against mesh volumes, grid geometry, NIfTI round trips, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import SimpleITK as sitk
import vtk

from maskio import read_mask, write_mask
from study.dataset.meshes import mesh_volume, read_mesh, write_mesh
from study.dataset.synthetic import generate_case, write_case
from study.dataset.voxelize import PAIR_COLUMNS, voxelize_case, voxelize_mesh, voxelize_pair

# Largest allowed |mask volume / mesh volume - 1| for a sphere of radius 10 mm: the error of
# counting voxel centres shrinks with the voxel size.
SPHERE_TOLERANCE = {
    (0.5, 0.5, 0.5): 0.01,
    (1.0, 1.0, 1.0): 0.02,
    (2.0, 2.0, 2.0): 0.06,
    (0.5, 0.5, 2.0): 0.03,
}


@pytest.mark.parametrize("spacing", list(SPHERE_TOLERANCE))
def test_sphere_volume(sphere_factory, spacing):
    sphere = sphere_factory(10.0, center=(0.3, -0.2, 0.7))
    pair = voxelize_pair(sphere, sphere, spacing)
    volume = pair.mask_a.sum() * math.prod(spacing)
    assert abs(volume / mesh_volume(sphere) - 1) < SPHERE_TOLERANCE[spacing]
    assert np.array_equal(pair.mask_a, pair.mask_b)


def test_sphere_extent_on_anisotropic_grid(sphere_factory):
    """A sphere at (0.5, 0.5, 2) mm spans its diameter along every axis, no more, no less."""
    radius, center, spacing = 9.0, np.array([1.1, -2.3, 0.6]), (0.5, 0.5, 2.0)
    pair = voxelize_pair(sphere_factory(radius, center, resolution=128), None, spacing)
    inside = np.argwhere(pair.mask_a) * spacing + pair.origin  # voxel centres in mm
    for axis, step in enumerate(spacing):
        low, high = inside[:, axis].min(), inside[:, axis].max()
        # Outermost centres inside lie within one voxel of the surface, never outside it.
        assert center[axis] - radius - 1e-6 <= low < center[axis] - radius + step
        assert center[axis] + radius - step < high <= center[axis] + radius + 1e-6
    assert np.isfinite(pair.origin).all() and pair.mask_b.sum() == 0


def test_grid_is_shared_and_covers_both_with_margin(sphere_factory):
    a = sphere_factory(5.0, center=(-10, 0, 0))
    b = sphere_factory(7.0, center=(12, 3, -4))
    pair = voxelize_pair(a, b, (1.0, 1.0, 2.0), margin_mm=4.0)
    assert pair.mask_a.shape == pair.mask_b.shape
    origin, shape = np.array(pair.origin), np.array(pair.shape)
    upper = origin + (shape - 1) * np.array(pair.spacing)
    # Union of the boxes: x from -15 (a) to 19 (b), y from -5 to 10, z from -11 to 5.
    assert np.all(origin <= np.array([-15, -5, -11]) - 4 + 1e-9)
    assert np.all(upper >= np.array([19, 10, 5]) + 4 - np.array(pair.spacing))
    assert np.allclose(
        np.array(pair.origin) / pair.spacing, np.round(np.array(pair.origin) / pair.spacing)
    )
    # Each observer lands where its mesh is.
    centre_a = np.argwhere(pair.mask_a).mean(axis=0) * pair.spacing + origin
    assert np.allclose(centre_a, [-10, 0, 0], atol=0.3)


def test_fixed_field_of_view(sphere_factory):
    sphere = sphere_factory(5.0)
    pair = voxelize_pair(sphere, sphere, (1.0, 1.0, 1.0), size_mm=(40, 30, 20))
    assert pair.shape in {(41, 31, 21), (40, 30, 20), (41, 30, 21), (40, 31, 20)}
    with pytest.raises(ValueError, match="smaller than the organs"):
        voxelize_pair(sphere, sphere, (1.0, 1.0, 1.0), size_mm=(8, 30, 30))


@pytest.mark.parametrize("spacing", [(1, 1, 0), (1, -1, 1), (1, math.nan, 1), (1, 1), "1mm"])
def test_bad_spacing(sphere_factory, spacing):
    with pytest.raises(ValueError, match="voxel size"):
        voxelize_pair(sphere_factory(3.0), None, spacing)


def test_open_mesh_is_refused(sphere_factory):
    sphere = sphere_factory(5.0)
    ids = vtk.vtkIdTypeArray()
    ids.SetNumberOfValues(sphere.GetNumberOfCells() - 5)
    for n in range(ids.GetNumberOfValues()):
        ids.SetValue(n, n)
    selection_node = vtk.vtkSelectionNode()
    selection_node.SetFieldType(vtk.vtkSelectionNode.CELL)
    selection_node.SetContentType(vtk.vtkSelectionNode.INDICES)
    selection_node.SetSelectionList(ids)
    selection = vtk.vtkSelection()
    selection.AddNode(selection_node)
    extract = vtk.vtkExtractSelection()
    extract.SetInputData(0, sphere)
    extract.SetInputData(1, selection)
    surface = vtk.vtkDataSetSurfaceFilter()
    surface.SetInputConnection(extract.GetOutputPort())
    surface.Update()
    holed = surface.GetOutput()
    with pytest.raises(ValueError, match="observer B mesh: mesh is not closed"):
        voxelize_pair(sphere, holed, (1, 1, 1))


def test_both_observers_empty_is_refused():
    with pytest.raises(ValueError, match="both observers are empty"):
        voxelize_pair(None, None, (1, 1, 1))


def test_empty_observer_gives_empty_mask(sphere_factory):
    empty = voxelize_mesh(None, (1, 1, 1), (0, 0, 0), (4, 5, 6))
    assert empty.shape == (4, 5, 6) and empty.dtype == bool and not empty.any()


def test_nifti_round_trip_keeps_geometry(tmp_path, sphere_factory):
    """Written masks carry spacing and origin in (x, y, z) order; array axis n = x, y, z."""
    spacing = (0.5, 0.75, 2.0)
    pair = voxelize_pair(sphere_factory(6.0, center=(20.0, -5.0, 40.0)), None, spacing)
    path = tmp_path / "mask.nii.gz"
    write_mask(path, pair.mask_a, spacing, pair.origin)
    mask, read_spacing, read_origin = read_mask(path)
    assert np.array_equal(mask, pair.mask_a) and mask.dtype == bool
    assert np.allclose(read_spacing, spacing) and np.allclose(read_origin, pair.origin)
    image = sitk.ReadImage(str(path))
    assert image.GetSize() == pair.mask_a.shape
    # The physical centre of the foreground, as any NIfTI reader sees it, is the sphere's.
    stats = sitk.LabelShapeStatisticsImageFilter()
    stats.Execute(image)
    assert np.allclose(stats.GetCentroid(1), (20.0, -5.0, 40.0), atol=0.05)


def test_voxelize_case_writes_pairs_table_per_voxel_size(tmp_path):
    case_manifest = write_case(tmp_path / "data", 1, 7, ["Cochlea_L", "Glottis"])
    spacings = [(1.0, 1.0, 2.0), (2.0, 2.0, 2.0)]
    outs = [tmp_path / "masks" / "1x1x2", tmp_path / "masks" / "2x2x2"]
    written = voxelize_case(case_manifest, spacings, outs)
    assert written == [out / "pairs.csv" for out in outs]
    meshes = generate_case(1, 7, ["Cochlea_L", "Glottis"])
    for spacing, out, label in zip(spacings, outs, ("1x1x2", "2x2x2"), strict=True):
        pairs = pd.read_csv(out / "pairs.csv")
        assert tuple(pairs.columns) == PAIR_COLUMNS
        assert list(pairs["oar"]) == ["Cochlea_L", "Glottis"]
        assert set(pairs["spacing"]) == {label}
        for row in pairs.itertuples():
            mask_a, read_spacing, origin_a = read_mask(out / row.path_a)
            mask_b, _, origin_b = read_mask(out / row.path_b)
            assert mask_a.shape == mask_b.shape and origin_a == origin_b
            assert read_spacing == spacing
            assert math.isclose(row.volume_a_mm3, mask_a.sum() * math.prod(spacing))
            # The same masks as voxelizing the pair on its own at this voxel size.
            alone = voxelize_pair(meshes[row.oar]["A"], meshes[row.oar]["B"], spacing)
            assert np.array_equal(alone.mask_a, mask_a) and np.array_equal(alone.mask_b, mask_b)


def test_voxelize_case_names_the_manifest_of_an_open_mesh(tmp_path):
    case_manifest = write_case(tmp_path / "data", 1, 7, ["Cochlea_L"])
    manifest = pd.read_csv(case_manifest)
    mesh_path = case_manifest.parent / manifest["path"].iloc[0]
    mesh = read_mesh(mesh_path)
    mesh.BuildLinks()  # DeleteCell needs the cell links
    mesh.DeleteCell(0)
    mesh.RemoveDeletedCells()
    write_mesh(mesh_path, mesh)
    with pytest.raises(ValueError, match=rf"{mesh_path.name}: mesh is not closed"):
        voxelize_case(case_manifest, [(1.0, 1.0, 1.0)], [tmp_path / "masks"])


def test_scan_grid_is_one_box_per_case_holding_the_cropped_masks(tmp_path):
    """With scan_mm every mask of a case shares one grid of about scan_mm / spacing voxels per
    axis, and holds exactly the voxels of the cropped mask, shifted by the grids' offset."""
    oars = ["Cochlea_L", "Glottis", "Cochlea_R"]
    case_manifest = write_case(tmp_path / "data", 1, 7, oars)
    spacing, scan_mm = (2.0, 2.0, 2.0), (200.0, 200.0, 160.0)
    [scan_pairs] = voxelize_case(case_manifest, [spacing], [tmp_path / "scan"], scan_mm=scan_mm)
    [crop_pairs] = voxelize_case(case_manifest, [spacing], [tmp_path / "crop"])
    grids = set()
    for oar in oars:
        for observer in ("A", "B"):
            scan, _, scan_origin = read_mask(scan_pairs.parent / f"{oar}__{observer}.nii.gz")
            crop, _, crop_origin = read_mask(crop_pairs.parent / f"{oar}__{observer}.nii.gz")
            grids.add((scan.shape, scan_origin))
            offset = np.round((np.subtract(crop_origin, scan_origin)) / spacing).astype(int)
            window = tuple(slice(o, o + n) for o, n in zip(offset, crop.shape, strict=True))
            assert np.array_equal(scan[window], crop) and scan.sum() == crop.sum()
    [(shape, _)] = grids
    assert all(
        abs(n - size / step) <= 1 for n, size, step in zip(shape, scan_mm, spacing, strict=True)
    )


def test_scan_grid_smaller_than_the_case_is_refused(tmp_path):
    case_manifest = write_case(tmp_path / "data", 1, 7, ["Cochlea_L", "Glottis"])
    with pytest.raises(ValueError, match="smaller than the organs"):
        voxelize_case(
            case_manifest, [(2.0, 2.0, 2.0)], [tmp_path / "scan"], scan_mm=(40.0, 40.0, 40.0)
        )
