"""Masks to closed surfaces with VTK, in physical coordinates and array axis order.

VTK's x axis is the fastest-varying array index, so a C-ordered array of shape (n0, n1, n2)
is handed to VTK as dimensions (n2, n1, n0); output coordinates are reversed back so column i
of the vertices runs along array axis i. Masks are padded by one voxel so every surface closes.
"""

from __future__ import annotations

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkImageData, vtkPolyData
from vtkmodules.vtkFiltersCore import (
    vtkFlyingEdges2D,
    vtkFlyingEdges3D,
    vtkSmoothPolyDataFilter,
    vtkSurfaceNets2D,
    vtkSurfaceNets3D,
)
from vtkmodules.vtkFiltersGeneral import vtkDiscreteFlyingEdges2D, vtkDiscreteFlyingEdges3D

MESHINGS = ("discrete_marching_cubes", "marching_cubes", "surface_nets")
"""discrete_marching_cubes: the paper's choice (3D discrete flying edges, which gives the same
triangles as discrete marching cubes, faster; 2D discrete flying edges). marching_cubes: flying
edges at iso-value 0.5 on the 0/1 image (2D: flying edges 2D, marching squares), then a gentle
Laplacian smoothing (`SMOOTHING`): on a binary image flying edges alone put every vertex at an
edge midpoint, where discrete marching cubes puts it, so only the smoothing makes the smooth
surface the paper's Fig. A2a shows. surface_nets: VTK's surface nets without smoothing (2D:
surface nets 2D): vertices at the centres of the boundary voxels, the zig-zag surface of the
paper's Fig. A2c that resembles DeepMind's surfels."""

SMOOTHING = {"iterations": 20, "relaxation": 0.01}
"""Laplacian smoothing of the marching_cubes variant (vtkSmoothPolyDataFilter): each of the
iterations moves every vertex by relaxation times the offset to the mean of its neighbours."""


def _image(mask: np.ndarray, spacing, origin) -> vtkImageData:
    padded = np.zeros(tuple(n + 2 for n in mask.shape), np.uint8)
    padded[(slice(1, -1),) * mask.ndim] = mask
    image = vtkImageData()
    dims = list(padded.shape[::-1]) + [1] * (3 - padded.ndim)
    image.SetDimensions(*dims)
    image.SetSpacing(*(list(spacing[::-1]) + [1.0] * (3 - padded.ndim)))
    shifted = np.asarray(origin, float) - np.asarray(spacing, float)  # one voxel of padding
    image.SetOrigin(*(list(shifted[::-1]) + [0.0] * (3 - padded.ndim)))
    # Not copied: VTK's array keeps a reference to `padded` (vtkmodules.util.numpy_support).
    image.GetPointData().SetScalars(numpy_to_vtk(padded.ravel(), deep=False))
    return image


def _filter(meshing: str, dim: int):
    if meshing == "discrete_marching_cubes":
        algorithm = vtkDiscreteFlyingEdges3D() if dim == 3 else vtkDiscreteFlyingEdges2D()
        algorithm.SetValue(0, 1)
        if dim == 3:
            algorithm.ComputeNormalsOff()
            algorithm.ComputeGradientsOff()
        algorithm.ComputeScalarsOff()
    elif meshing == "marching_cubes":
        algorithm = vtkFlyingEdges3D() if dim == 3 else vtkFlyingEdges2D()
        algorithm.SetValue(0, 0.5)
        if dim == 3:
            algorithm.ComputeNormalsOff()
            algorithm.ComputeGradientsOff()
        algorithm.ComputeScalarsOff()
    elif meshing == "surface_nets":
        algorithm = vtkSurfaceNets3D() if dim == 3 else vtkSurfaceNets2D()
        algorithm.SetValue(0, 1)
        algorithm.SmoothingOff()
        if dim == 3:
            algorithm.SetOutputMeshTypeToTriangles()
    else:
        raise ValueError(f"meshing must be one of {', '.join(MESHINGS)}; got {meshing!r}")
    return algorithm


def mesh_mask(
    mask: np.ndarray, spacing, origin=None, meshing: str = "discrete_marching_cubes"
) -> tuple[np.ndarray, np.ndarray]:
    """Closed surface of a bool mask: vertices (n, dim) in mm, cells (m, dim).

    Triangles in 3D, segments in 2D; all connected components together.
    """
    dim = mask.ndim
    origin = np.zeros(dim) if origin is None else np.asarray(origin, float)
    algorithm = _filter(meshing, dim)
    algorithm.SetInputData(_image(mask, np.asarray(spacing, float), origin))
    algorithm.Update()
    polydata = _smoothed(algorithm.GetOutput()) if meshing == "marching_cubes" else None
    polydata = polydata or algorithm.GetOutput()
    if polydata.GetNumberOfPoints() == 0:
        return np.empty((0, dim)), np.empty((0, dim), dtype=np.int64)
    vertices = vtk_to_numpy(polydata.GetPoints().GetData()).astype(np.float64)
    vertices = vertices[:, :dim][:, ::-1].copy()
    cell_array = polydata.GetPolys() if dim == 3 else polydata.GetLines()
    offsets = vtk_to_numpy(cell_array.GetOffsetsArray())
    if not np.all(np.diff(offsets) == dim):
        kind = "triangles" if dim == 3 else "segments"
        raise RuntimeError(f"{meshing} produced cells that are not {kind}")
    cells = vtk_to_numpy(cell_array.GetConnectivityArray()).astype(np.int64).reshape(-1, dim)
    return vertices, cells


def _smoothed(polydata: vtkPolyData) -> vtkPolyData | None:
    """`SMOOTHING` applied to a surface (None when it has no points)."""
    if polydata.GetNumberOfPoints() == 0:
        return None
    smoother = vtkSmoothPolyDataFilter()
    smoother.SetInputData(polydata)
    smoother.SetNumberOfIterations(SMOOTHING["iterations"])
    smoother.SetRelaxationFactor(SMOOTHING["relaxation"])
    smoother.FeatureEdgeSmoothingOff()
    smoother.BoundarySmoothingOn()
    smoother.Update()
    return smoother.GetOutput()


def vtk_points(vertices: np.ndarray) -> vtkPoints:
    """vtkPoints of (n, 2 or 3) coordinates, in the column order given (z = 0 in 2D)."""
    xyz = np.zeros((len(vertices), 3))
    xyz[:, : vertices.shape[1]] = vertices
    points = vtkPoints()
    points.SetData(numpy_to_vtk(xyz, deep=True))
    return points


def to_polydata(points: vtkPoints, cells: np.ndarray) -> vtkPolyData:
    """Polydata of `cells` (m, 3) triangles or (m, 2) segments over shared `points`."""
    per_cell = cells.shape[1]
    offsets = np.arange(0, per_cell * len(cells) + 1, per_cell, dtype=np.int64)
    cell_array = vtkCellArray()
    cell_array.SetData(
        numpy_to_vtk(offsets, deep=True),
        numpy_to_vtk(np.ascontiguousarray(cells, np.int64).ravel(), deep=True),
    )
    polydata = vtkPolyData()
    polydata.SetPoints(points)
    if per_cell == 3:
        polydata.SetPolys(cell_array)
    else:
        polydata.SetLines(cell_array)
    return polydata
