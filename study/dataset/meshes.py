"""Triangle meshes of organs: building them from fields or masks, checking, reading, writing.

Conventions: coordinates are in mm; a numpy volume `values[i, j, k]` sits at the physical
point origin + (i, j, k) * spacing, i.e. array axis n is physical axis n (x, y, z). Meshes are
closed and their triangles are wound so that normals point outwards (positive signed volume).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkPolyData
from vtkmodules.vtkCommonExecutionModel import vtkAlgorithm
from vtkmodules.vtkFiltersCore import (
    vtkCleanPolyData,
    vtkFeatureEdges,
    vtkFlyingEdges3D,
    vtkMassProperties,
    vtkPolyDataNormals,
    vtkReverseSense,
    vtkTriangleFilter,
    vtkWindowedSincPolyDataFilter,
)
from vtkmodules.vtkIOPLY import vtkPLYReader, vtkPLYWriter
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader, vtkXMLPolyDataWriter

MESH_SUFFIXES = (".vtp", ".ply")


def image_from_array(
    values: np.ndarray, spacing: Sequence[float], origin: Sequence[float]
) -> vtkImageData:
    """vtkImageData holding `values` (array axis n = image axis n; VTK runs x fastest)."""
    image = vtkImageData()
    image.SetDimensions(*values.shape)
    image.SetSpacing(*map(float, spacing))
    image.SetOrigin(*map(float, origin))
    flat = np.ascontiguousarray(values.ravel(order="F"))
    scalars = numpy_support.numpy_to_vtk(flat, deep=True)
    scalars.SetName("values")
    image.GetPointData().SetScalars(scalars)
    return image


def finish_surface(surface: vtkPolyData, *, smooth_iterations: int = 0) -> vtkPolyData:
    """Clean, optionally smooth, triangulate and orient a raw isosurface outwards.

    Smoothing is VTK's windowed-sinc filter with a low pass band: it removes the terraces of
    marching cubes while barely changing the volume (unlike plain Laplacian smoothing).
    """
    algo: vtkAlgorithm
    clean = vtkCleanPolyData()
    clean.SetInputData(surface)
    # Merge coincident points; drop (rather than keep as lines) triangles that degenerate.
    clean.ConvertPolysToLinesOff()
    clean.ConvertLinesToPointsOff()
    clean.PointMergingOn()
    algo = clean
    if smooth_iterations > 0:
        smooth = vtkWindowedSincPolyDataFilter()
        smooth.SetInputConnection(algo.GetOutputPort())
        smooth.SetNumberOfIterations(smooth_iterations)
        smooth.SetPassBand(0.1)
        smooth.BoundarySmoothingOff()
        smooth.FeatureEdgeSmoothingOff()
        smooth.NonManifoldSmoothingOn()
        smooth.NormalizeCoordinatesOn()
        algo = smooth
    triangles = vtkTriangleFilter()
    triangles.SetInputConnection(algo.GetOutputPort())
    triangles.PassVertsOff()
    triangles.PassLinesOff()
    # Consistent winding, each closed component oriented outwards.
    normals = vtkPolyDataNormals()
    normals.SetInputConnection(triangles.GetOutputPort())
    normals.ConsistencyOn()
    normals.AutoOrientNormalsOn()
    normals.SplittingOff()
    normals.ComputeCellNormalsOff()
    normals.ComputePointNormalsOff()
    normals.Update()
    result = vtkPolyData()
    result.ShallowCopy(normals.GetOutput())
    if result.GetNumberOfCells() and signed_volume(result) < 0:
        result = _reversed(result)
    return result


def _reversed(mesh: vtkPolyData) -> vtkPolyData:
    reverse = vtkReverseSense()
    reverse.SetInputData(mesh)
    reverse.ReverseCellsOn()
    reverse.ReverseNormalsOn()
    reverse.Update()
    return reverse.GetOutput()


def mesh_from_field(
    values: np.ndarray,
    spacing: Sequence[float],
    origin: Sequence[float],
    *,
    smooth_iterations: int = 10,
) -> vtkPolyData:
    """Closed surface {values = 0} of a sampled implicit function (negative inside).

    The outermost layer of samples must be outside (positive), so the surface is closed.
    """
    if (
        not np.all(values[[0, -1], :, :] > 0)
        or not np.all(values[:, [0, -1], :] > 0)
        or not np.all(values[:, :, [0, -1]] > 0)
    ):
        raise ValueError("implicit field is not positive on the grid border: surface would be open")
    values = np.asarray(values, dtype=np.float32)
    # A sample lying (almost) exactly on the surface makes zero-length edges; merging their
    # end points can leave non-manifold edges. Nudging such samples outside avoids it.
    values = np.where(np.abs(values) < 1e-3, np.float32(1e-3), values)
    contour = vtkFlyingEdges3D()
    contour.SetInputData(image_from_array(values, spacing, origin))
    contour.SetValue(0, 0.0)
    contour.ComputeNormalsOff()
    contour.ComputeGradientsOff()
    contour.ComputeScalarsOff()
    contour.Update()
    return finish_surface(contour.GetOutput(), smooth_iterations=smooth_iterations)


def mesh_from_mask(
    mask: np.ndarray,
    spacing: Sequence[float],
    origin: Sequence[float],
    *,
    smooth_iterations: int = 10,
) -> vtkPolyData | None:
    """Marching-cubes surface (iso 0.5) of a binary mask, gently smoothed; None if empty.

    The mask is padded by one background voxel on every side so the surface is closed even
    where the organ touches the image border.
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return None
    padded = np.pad(mask, 1).astype(np.float32)
    padded_origin = [o - s for o, s in zip(origin, spacing, strict=True)]
    # Flying edges is VTK's faster marching cubes; 0.5 - value puts the inside negative.
    return mesh_from_field(
        0.5 - padded, spacing, padded_origin, smooth_iterations=smooth_iterations
    )


def open_edge_count(mesh: vtkPolyData) -> int:
    """Number of boundary plus non-manifold edges: 0 for a closed 2-manifold surface."""
    edges = vtkFeatureEdges()
    edges.SetInputData(mesh)
    edges.BoundaryEdgesOn()
    edges.NonManifoldEdgesOn()
    edges.FeatureEdgesOff()
    edges.ManifoldEdgesOff()
    edges.Update()
    return edges.GetOutput().GetNumberOfCells()


def triangles_of(mesh: vtkPolyData) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64, triangles (m, 3) int64); raises if a cell is not a triangle."""
    points = numpy_support.vtk_to_numpy(mesh.GetPoints().GetData()).astype(np.float64)
    polys = mesh.GetPolys()
    connectivity = numpy_support.vtk_to_numpy(polys.GetConnectivityArray())
    offsets = numpy_support.vtk_to_numpy(polys.GetOffsetsArray())
    if mesh.GetNumberOfCells() != polys.GetNumberOfCells() or np.any(np.diff(offsets) != 3):
        raise ValueError("mesh has cells that are not triangles")
    return points, connectivity.reshape(-1, 3).astype(np.int64)


def signed_volume(mesh: vtkPolyData) -> float:
    """Signed enclosed volume, sum over triangles of v0 . (v1 x v2) / 6 (divergence theorem).

    Positive when triangles are wound counter-clockwise seen from outside (outward normals).
    """
    points, tris = triangles_of(mesh)
    v0, v1, v2 = (points[tris[:, n]] for n in range(3))
    return float(np.einsum("ij,ij->i", v0, np.cross(v1, v2)).sum() / 6.0)


def check_closed(mesh: vtkPolyData | None, *, name: str) -> None:
    """Raise ValueError naming `name` unless `mesh` is a closed, outward-oriented triangle mesh."""
    if mesh is None:
        return
    if mesh.GetNumberOfCells() == 0:
        raise ValueError(f"{name}: mesh has no triangles (use None for an empty observer)")
    open_edges = open_edge_count(mesh)
    if open_edges:
        raise ValueError(
            f"{name}: mesh is not closed ({open_edges} boundary or non-manifold "
            "edges); voxelization needs a watertight surface"
        )
    if signed_volume(mesh) <= 0:
        raise ValueError(f"{name}: mesh is inside out (negative signed volume)")


def mesh_volume(mesh: vtkPolyData | None) -> float:
    """Enclosed volume in mm^3 (VTK's vtkMassProperties); 0 for an empty observer."""
    if mesh is None or mesh.GetNumberOfCells() == 0:
        return 0.0
    mass = vtkMassProperties()
    mass.SetInputData(mesh)
    mass.Update()
    return float(mass.GetVolume())


def write_mesh(path: str | Path, mesh: vtkPolyData) -> None:
    """Write a mesh as compressed binary VTK XML PolyData (.vtp) or binary PLY (.ply)."""
    path = Path(path)
    if path.suffix not in MESH_SUFFIXES:
        raise ValueError(f"{path}: mesh files must end in {' or '.join(MESH_SUFFIXES)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = vtkXMLPolyDataWriter() if path.suffix == ".vtp" else vtkPLYWriter()
    if path.suffix == ".vtp":
        writer.SetDataModeToAppended()
        writer.SetCompressorTypeToZLib()
    else:
        writer.SetFileTypeToBinary()
    writer.SetFileName(str(path))
    writer.SetInputData(mesh)
    if writer.Write() != 1:
        raise OSError(f"{path}: VTK could not write the mesh")


def read_mesh(path: str | Path, *, check: bool = True) -> vtkPolyData:
    """Read a .vtp or .ply triangle mesh; with `check`, it must be closed and outward."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: mesh file not found")
    if path.suffix not in MESH_SUFFIXES:
        raise ValueError(f"{path}: unknown mesh format (expected {', '.join(MESH_SUFFIXES)})")
    reader = vtkXMLPolyDataReader() if path.suffix == ".vtp" else vtkPLYReader()
    reader.SetFileName(str(path))
    reader.Update()
    mesh = reader.GetOutput()
    if mesh is None or mesh.GetNumberOfPoints() == 0:
        raise ValueError(f"{path}: file holds no mesh")
    if check:
        check_closed(mesh, name=str(path))
    return mesh


MANIFEST_COLUMNS: tuple[str, ...] = ("case", "oar", "category", "observer", "path", "volume_mm3")
"""Columns of a mesh manifest; `path` is relative to the manifest, empty = drew nothing."""


def write_observer_meshes(
    folder: str | Path,
    *,
    case: str,
    oar: str,
    category: str,
    meshes: Mapping[str, vtkPolyData | None],
) -> list[dict]:
    """Write each observer's mesh as folder/<oar>__<observer>.vtp; return its manifest rows.

    An observer who drew nothing (None) gets a row with an empty path and volume 0.
    """
    rows = []
    for observer, mesh in meshes.items():
        file_name = f"{oar}__{observer}.vtp" if mesh is not None else ""
        if mesh is not None:
            write_mesh(Path(folder) / file_name, mesh)
        rows.append(
            {
                "case": case,
                "oar": oar,
                "category": category,
                "observer": observer,
                "path": file_name,
                "volume_mm3": round(mesh_volume(mesh), 3),
            }
        )
    return rows


def write_manifest(rows: Sequence[dict], path: str | Path) -> None:
    """Write mesh-manifest rows (MANIFEST_COLUMNS) as CSV."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(list(rows), columns=list(MANIFEST_COLUMNS)).to_csv(path, index=False)


def read_manifest(path: str | Path):
    """Mesh manifest as a DataFrame with an extra column `file`: absolute mesh path or None."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: mesh manifest not found")
    table = pd.read_csv(path, dtype={"case": str, "path": str}, keep_default_na=False)
    missing = [c for c in MANIFEST_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: mesh manifest lacks column(s) {missing}")
    table["file"] = [str((path.parent / p).resolve()) if p else None for p in table["path"]]
    return table


def merge_manifests(case_manifests: Sequence[str | Path], out_csv: str | Path) -> None:
    """One manifest for a dataset from per-case ones, paths rewritten relative to `out_csv`."""
    import os

    out_csv = Path(out_csv)
    rows = []
    for case_csv in case_manifests:
        table = read_manifest(case_csv)
        table["path"] = [
            os.path.relpath(f, out_csv.parent.resolve()) if f else "" for f in table["file"]
        ]
        rows += table[list(MANIFEST_COLUMNS)].to_dict("records")
    write_manifest(rows, out_csv)
