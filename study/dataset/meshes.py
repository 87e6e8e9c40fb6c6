"""Meshes of organs: building them from fields or masks, checking, reading, writing.

Conventions: coordinates are in mm; a numpy volume `values[i, j, k]` sits at the physical
point origin + (i, j, k) * spacing, i.e. array axis n is physical axis n (x, y, z). Meshes are
closed and their triangles are wound so that normals point outwards (positive signed volume).

A 2D study's "mesh" is an outline: closed loops of line segments in the plane z = 0 (VTK
lines, x and y the mask's two axes), each loop wound counter-clockwise around what it encloses
(positive signed area); its "volume" is that area in mm^2 (`mesh_dimension` tells the two
kinds apart). The same files (.vtp), manifest and voxelizer serve both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from vtkmodules.util import numpy_support
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkImageData, vtkPolyData
from vtkmodules.vtkCommonExecutionModel import vtkAlgorithm
from vtkmodules.vtkFiltersCore import (
    vtkCleanPolyData,
    vtkFeatureEdges,
    vtkFlyingEdges2D,
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
    algo: vtkAlgorithm = _merging_points(surface)
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


def _merging_points(mesh: vtkPolyData) -> vtkCleanPolyData:
    """The filter merging the mesh's coincident points; a cell that degenerates is dropped
    (not kept as a line or a point)."""
    clean = vtkCleanPolyData()
    clean.SetInputData(mesh)
    clean.ConvertPolysToLinesOff()
    clean.ConvertLinesToPointsOff()
    clean.PointMergingOn()
    return clean


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
    A 2D mask gives its outline (`outline_from_field`).

    The mask is padded by one background voxel on every side so the surface is closed even
    where the organ touches the image border.
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return None
    padded = np.pad(mask, 1).astype(np.float32)
    padded_origin = [o - s for o, s in zip(origin, spacing, strict=True)]
    # Flying edges is VTK's faster marching cubes; 0.5 - value puts the inside negative.
    if mask.ndim == 2:
        return outline_from_field(0.5 - padded, spacing, padded_origin)
    return mesh_from_field(
        0.5 - padded, spacing, padded_origin, smooth_iterations=smooth_iterations
    )


def outline_from_field(
    values: np.ndarray, spacing: Sequence[float], origin: Sequence[float]
) -> vtkPolyData:
    """The closed outline {values = 0} of a sampled 2D function (negative inside, positive
    on the border): marching squares, VTK's flying edges in 2D, counter-clockwise.

    Not smoothed: VTK's windowed-sinc filter, which smooths the 3D surfaces, leaves polylines
    where they are (it moved no vertex by more than 1e-4 mm on a disc), so a mask's outline
    keeps its corners cut at half a pixel, as marching cubes does before smoothing.
    """
    contour = vtkFlyingEdges2D()
    image = image_from_array(values[:, :, None], [*map(float, spacing), 1.0], [*origin, 0.0])
    contour.SetInputData(image)
    contour.SetValue(0, 0.0)
    contour.ComputeScalarsOff()
    contour.Update()
    clean = _merging_points(contour.GetOutput())
    clean.Update()
    return _counter_clockwise(clean.GetOutput())


def outline_from_loops(loops: Sequence[np.ndarray]) -> vtkPolyData:
    """A closed outline from polygons given as (n, 2) vertex arrays in mm (each loop closes
    itself: its last vertex joins its first), wound counter-clockwise as a whole."""
    points, lines = vtkPoints(), vtkCellArray()
    start = 0
    for loop in loops:
        loop = np.asarray(loop, float)
        if loop.ndim != 2 or loop.shape[1] != 2 or len(loop) < 3:
            raise ValueError(f"a loop must be 3 or more points (n, 2); got shape {loop.shape}")
        for x, y in loop:
            points.InsertNextPoint(float(x), float(y), 0.0)
        for i in range(len(loop)):
            lines.InsertNextCell(2, (start + i, start + (i + 1) % len(loop)))
        start += len(loop)
    outline = vtkPolyData()
    outline.SetPoints(points)
    outline.SetLines(lines)
    return _counter_clockwise(outline)


def _counter_clockwise(outline: vtkPolyData) -> vtkPolyData:
    """The outline with its segments reversed when its signed area is negative."""
    if outline.GetNumberOfCells() and signed_volume(outline) < 0:
        return _reversed(outline)
    return outline


def mesh_dimension(mesh: vtkPolyData) -> int:
    """2 for an outline (line segments, no triangles), 3 for a surface."""
    return 2 if mesh.GetNumberOfLines() and not mesh.GetNumberOfPolys() else 3


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


def cells_of(mesh: vtkPolyData) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, dim) float64, cells (m, dim) int64): triangles of a surface, segments of
    an outline (`mesh_dimension`); raises if a cell is neither."""
    dim = mesh_dimension(mesh)
    points = numpy_support.vtk_to_numpy(mesh.GetPoints().GetData()).astype(np.float64)
    cells = mesh.GetPolys() if dim == 3 else mesh.GetLines()
    connectivity = numpy_support.vtk_to_numpy(cells.GetConnectivityArray())
    offsets = numpy_support.vtk_to_numpy(cells.GetOffsetsArray())
    if mesh.GetNumberOfCells() != cells.GetNumberOfCells() or np.any(np.diff(offsets) != dim):
        kind = "triangles" if dim == 3 else "line segments"
        raise ValueError(f"mesh has cells that are not {kind}")
    return points[:, :dim], connectivity.reshape(-1, dim).astype(np.int64)


def triangles_of(mesh: vtkPolyData) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64, triangles (m, 3) int64); raises if a cell is not a triangle."""
    if mesh_dimension(mesh) != 3:
        raise ValueError("mesh has cells that are not triangles")
    return cells_of(mesh)


def signed_volume(mesh: vtkPolyData) -> float:
    """Signed enclosed volume, sum over triangles of v0 . (v1 x v2) / 6 (divergence theorem);
    of an outline, its signed area, sum over segments of (x0 y1 - x1 y0) / 2 (the shoelace).

    Positive when triangles are wound counter-clockwise seen from outside (outward normals),
    and when loops run counter-clockwise around what they enclose.
    """
    points, cells = cells_of(mesh)
    if points.shape[1] == 2:
        p0, p1 = points[cells[:, 0]], points[cells[:, 1]]
        return float(np.sum(p0[:, 0] * p1[:, 1] - p1[:, 0] * p0[:, 1]) / 2.0)
    v0, v1, v2 = (points[cells[:, n]] for n in range(3))
    return float(np.einsum("ij,ij->i", v0, np.cross(v1, v2)).sum() / 6.0)


def open_outline_points(mesh: vtkPolyData) -> int:
    """Points of an outline not joined to exactly two segments: 0 for closed simple loops."""
    _, cells = cells_of(mesh)
    uses = np.bincount(cells.ravel(), minlength=mesh.GetNumberOfPoints())
    return int(np.count_nonzero(uses[np.unique(cells)] != 2))


def check_closed(mesh: vtkPolyData | None, *, name: str) -> None:
    """Raise ValueError naming `name` unless `mesh` is a closed, outward-oriented triangle mesh
    (or, in 2D, closed loops wound counter-clockwise)."""
    if mesh is None:
        return
    if mesh.GetNumberOfCells() == 0:
        raise ValueError(f"{name}: mesh has no triangles (use None for an empty observer)")
    two_d = mesh_dimension(mesh) == 2
    open_edges = open_outline_points(mesh) if two_d else open_edge_count(mesh)
    if open_edges:
        what = "loose or branching points" if two_d else "boundary or non-manifold edges"
        raise ValueError(
            f"{name}: mesh is not closed ({open_edges} {what}); "
            "voxelization needs a watertight surface"
        )
    if signed_volume(mesh) <= 0:
        what = "negative signed area" if two_d else "negative signed volume"
        raise ValueError(f"{name}: mesh is inside out ({what})")


def mesh_volume(mesh: vtkPolyData | None) -> float:
    """Enclosed volume in mm^3 (VTK's vtkMassProperties); an outline's area in mm^2 (its
    signed area, which `check_closed` requires to be positive); 0 for an empty observer."""
    if mesh is None or mesh.GetNumberOfCells() == 0:
        return 0.0
    if mesh_dimension(mesh) == 2:
        return signed_volume(mesh)
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
