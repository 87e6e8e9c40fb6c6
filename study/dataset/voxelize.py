"""Meshes to binary masks with VTK, on one grid shared by both observers of a pair.

Grid convention (as everywhere in the study): mask[i, j, k] is the voxel whose centre is at
origin + (i, j, k) * spacing, array axis n being physical axis n (x, y, z), in mm. A voxel is
inside when its centre is inside the closed surface (vtkPolyDataToImageStencil), the rule the
HDilemma study used; it maps a mesh made from a mask on the same grid back to that mask.
In 2D the same holds of pixels and outlines (`study.dataset.meshes`): a grid of 2 axes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from vtkmodules.vtkCommonDataModel import vtkPolyData

from reference.biou import DenseGrid, inside_raster
from study.dataset.meshes import check_closed, mesh_dimension


@dataclass(frozen=True)
class VoxelizedPair:
    """Masks of observers A and B on one grid (spacing and origin in mm, array axis order)."""

    mask_a: np.ndarray
    mask_b: np.ndarray
    spacing: tuple[float, ...]
    origin: tuple[float, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.mask_a.shape


def check_spacing(spacing: Sequence[float], *, name: str = "spacing") -> tuple[float, ...]:
    """Spacing as a tuple of 2 or 3 positive finite floats, or ValueError naming `name`."""
    what = "2 or 3"
    try:
        values = tuple(float(s) for s in spacing)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name}: voxel size must be {what} numbers in mm, got {spacing!r}"
        ) from error
    if len(values) not in (2, 3) or not all(math.isfinite(s) and s > 0 for s in values):
        raise ValueError(
            f"{name}: voxel size must be {what} positive finite numbers in mm, got {spacing!r}"
        )
    return values


def voxelize_mesh(
    mesh: vtkPolyData | None,
    spacing: Sequence[float],
    origin: Sequence[float],
    shape: Sequence[int],
) -> np.ndarray:
    """Bool mask (shape) of the voxels whose centres lie inside the closed `mesh` (pixels
    inside the outline, on a 2D grid)."""
    spacing = check_spacing(spacing)
    shape = tuple(int(n) for n in shape)
    if len(shape) != len(spacing) or min(shape) < 1:
        raise ValueError(f"grid shape must be {len(spacing)} positive integers, got {shape!r}")
    if mesh is None:
        return np.zeros(shape, dtype=bool)
    if mesh_dimension(mesh) != len(shape):
        raise ValueError(
            f"a {mesh_dimension(mesh)}D mesh cannot be voxelized on a {len(shape)}D grid"
        )
    # The reference's raster (zero tolerance: a centre exactly on the surface stays out), on
    # a grid described slowest axis first; transposed back to this module's (x, y, z) order.
    grid = DenseGrid(np.asarray(origin, float)[::-1], np.asarray(spacing)[::-1], shape[::-1])
    return np.ascontiguousarray(inside_raster(mesh, grid).transpose())


def union_bounds(meshes: Sequence[vtkPolyData | None]) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) corners of the union of the meshes' bounding boxes (mm), with one
    entry per axis of the meshes (2 for outlines)."""
    present = [m for m in meshes if m is not None]
    if not present:
        raise ValueError("both observers are empty: there is no grid to voxelize on")
    dims = {mesh_dimension(m) for m in present}
    if len(dims) > 1:
        raise ValueError("the observers' meshes mix outlines (2D) and surfaces (3D)")
    dim = dims.pop()
    boxes = [np.reshape(m.GetBounds(), (3, 2))[:dim] for m in present]
    return np.min([b[:, 0] for b in boxes], axis=0), np.max([b[:, 1] for b in boxes], axis=0)


def pair_grid(
    lower: np.ndarray,
    upper: np.ndarray,
    spacing: Sequence[float],
    *,
    margin_mm: float = 5.0,
    size_mm: Sequence[float] | None = None,
) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """Origin and shape of the grid for a pair with union bounds [lower, upper].

    Union-bbox policy: the box plus `margin_mm` on every side. Fixed policy (`size_mm`): a
    field of view of that size centred on the box. Origins are snapped to whole multiples of
    the spacing, so every pair of a study at one voxel size lies on a common lattice.
    """
    spacing_arr = np.asarray(check_spacing(spacing))
    if len(spacing_arr) != len(lower):
        raise ValueError(
            f"voxel size {tuple(spacing_arr)} has {len(spacing_arr)} entries but the meshes "
            f"are {len(lower)}D (dataset.dimension and voxel_sizes must agree)"
        )
    if size_mm is None:
        if not (math.isfinite(margin_mm) and margin_mm >= 0):
            raise ValueError(f"margin_mm must be a non-negative number, got {margin_mm!r}")
        low, high = lower - margin_mm, upper + margin_mm
    else:
        size = np.asarray(check_spacing(size_mm, name="size_mm"))
        if np.any(size < upper - lower):
            raise ValueError(
                f"field of view size_mm={list(size)} is smaller than the organs it "
                f"must hold (extent {np.round(upper - lower, 1).tolist()} mm)"
            )
        center = (lower + upper) / 2
        low, high = center - size / 2, center + size / 2
    origin = np.floor(low / spacing_arr) * spacing_arr
    shape = np.floor((high - origin) / spacing_arr).astype(int) + 1
    return tuple(float(o) for o in origin), tuple(int(n) for n in shape)


def voxelize_pair(
    mesh_a: vtkPolyData | None,
    mesh_b: vtkPolyData | None,
    spacing: Sequence[float],
    *,
    margin_mm: float = 5.0,
    size_mm: Sequence[float] | None = None,
) -> VoxelizedPair:
    """Voxelize both observers' meshes at `spacing` on one shared grid (see `pair_grid`)."""
    spacing = check_spacing(spacing)
    check_closed(mesh_a, name="observer A mesh")
    check_closed(mesh_b, name="observer B mesh")
    lower, upper = union_bounds([mesh_a, mesh_b])
    grid = pair_grid(lower, upper, spacing, margin_mm=margin_mm, size_mm=size_mm)
    return _voxelize_on_grid(mesh_a, mesh_b, spacing, grid)


def _voxelize_on_grid(mesh_a, mesh_b, spacing, grid) -> VoxelizedPair:
    """Both (checked, closed) meshes on `grid` = (origin, shape) at a checked spacing."""
    origin, shape = grid
    return VoxelizedPair(
        voxelize_mesh(mesh_a, spacing, origin, shape),
        voxelize_mesh(mesh_b, spacing, origin, shape),
        spacing,
        origin,
    )


PAIR_COLUMNS: tuple[str, ...] = (
    "case",
    "oar",
    "category",
    "spacing",
    "path_a",
    "path_b",
    "volume_a_mm3",
    "volume_b_mm3",
)
"""Columns of pairs.csv; paths are relative to pairs.csv; volumes are of the masks."""


def voxelize_case(
    mesh_manifest: str | Path,
    spacings: Sequence[Sequence[float]],
    out_dirs: Sequence[str | Path],
    *,
    margin_mm: float = 5.0,
    size_mm: Sequence[float] | None = None,
    scan_mm: Sequence[float] | None = None,
    oars: Sequence[str] | None = None,
) -> list[Path]:
    """Voxelize every (OAR, A/B) mesh pair of one case's manifest at each of `spacings`
    (only those of `oars`, if given; the scan grid still holds every organ of the case).

    Grids: per pair (`pair_grid` with margin_mm or size_mm), or, with `scan_mm`, one grid for
    the whole case as a CT scan has: a box of scan_mm centred on the union of every organ of
    the case (`pair_grid` applied to the case's bounds), so each pair lies where it lies in the
    scan and every mask of the case has the same shape.

    Writes <oar>__A.nii.gz, <oar>__B.nii.gz (an observer who drew nothing gets an empty
    mask on the shared grid) and pairs.csv into the out_dir of each spacing; returns the
    pairs.csv paths. Every mesh is read and checked once for all voxel sizes: reading and
    checking cost as much as voxelizing one voxel size.
    """
    spacings = [check_spacing(spacing) for spacing in spacings]
    if len(spacings) != len(out_dirs):
        raise ValueError(f"{len(spacings)} voxel sizes but {len(out_dirs)} output folders")
    pairs = _read_mesh_pairs(mesh_manifest)
    case_bounds = (
        union_bounds([pair[obs] for pair in pairs for obs in ("A", "B")])
        if scan_mm is not None
        else None
    )
    if oars is not None:
        pairs = [pair for pair in pairs if pair["oar"] in set(oars)]

    def grid_of(pair: dict, spacing: tuple[float, ...]) -> tuple:
        if case_bounds is not None:
            return pair_grid(*case_bounds, spacing, size_mm=scan_mm)
        return pair_grid(
            *union_bounds([pair["A"], pair["B"]]), spacing, margin_mm=margin_mm, size_mm=size_mm
        )

    return [
        _write_voxelized_case(pairs, spacing, Path(out_dir), grid_of)
        for spacing, out_dir in zip(spacings, out_dirs, strict=True)
    ]


def _read_mesh_pairs(mesh_manifest: str | Path) -> list[dict]:
    """Per (case, OAR) of the manifest: case, oar, category and the checked, closed meshes
    "A" and "B" (None for an observer who drew nothing)."""
    from study.dataset.meshes import read_manifest, read_mesh

    table = read_manifest(mesh_manifest)
    pairs = []
    for (case, oar), group in table.groupby(["case", "oar"], sort=False):
        files = dict(zip(group["observer"], group["file"], strict=True))
        if set(files) != {"A", "B"}:
            raise ValueError(
                f"{mesh_manifest}: case {case} OAR {oar} needs observers A and B, "
                f"found {sorted(files)}"
            )
        # read_mesh checks that each mesh is closed, naming its file.
        meshes = {obs: read_mesh(f) if f else None for obs, f in files.items()}
        pairs.append({"case": case, "oar": oar, "category": group["category"].iloc[0], **meshes})
    return pairs


def _write_voxelized_case(
    pairs: list[dict],
    spacing: tuple[float, ...],
    out_dir: Path,
    grid_of: Callable[[dict, tuple], tuple],
) -> Path:
    """Masks and pairs.csv of one voxel size, each pair on the grid `grid_of(pair, spacing)`."""
    import pandas as pd

    from maskio import write_mask
    from study.records import spacing_label

    rows = []
    voxel_mm3 = float(np.prod(spacing))
    for pair in pairs:
        oar = pair["oar"]
        voxelized = _voxelize_on_grid(pair["A"], pair["B"], spacing, grid_of(pair, spacing))
        for observer, mask in (("A", voxelized.mask_a), ("B", voxelized.mask_b)):
            write_mask(out_dir / f"{oar}__{observer}.nii.gz", mask, spacing, voxelized.origin)
        rows.append(
            {
                "case": pair["case"],
                "oar": oar,
                "category": pair["category"],
                "spacing": spacing_label(spacing),
                "path_a": f"{oar}__A.nii.gz",
                "path_b": f"{oar}__B.nii.gz",
                "volume_a_mm3": round(float(voxelized.mask_a.sum()) * voxel_mm3, 3),
                "volume_b_mm3": round(float(voxelized.mask_b.sum()) * voxel_mm3, 3),
            }
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs_path = out_dir / "pairs.csv"
    pd.DataFrame(rows, columns=list(PAIR_COLUMNS)).to_csv(pairs_path, index=False)
    return pairs_path
