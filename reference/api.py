"""Public entry points: metrics between two masks, or between two closed surfaces."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

from reference import biou, dense_grid, lattice, lattice_bands, lattice_index
from reference import bounds as bounds_lib
from reference import meshing as meshing_lib
from reference.closest import SurfaceIndex
from reference.distance_pass import QUADRATURES, both_directions, tie_threshold
from reference.elements import JIT
from reference.hausdorff import directed_hausdorff
from reference.metrics import PASS_KEYS, weighted_metrics
from reference.signed import orient_outward
from vocabulary import BY_KEY, DEFAULT_PERCENTILE, DEFAULT_TAU, METRIC_KEYS

DEFAULT_SUBDIVISION = 2
"""Levels of selective subdivision; chosen by the convergence study (docs/reference.md)."""


class Scores(dict):
    """Metric key -> value, and `brackets`: metric key -> `bounds.Bracket`, an interval proven
    to hold the metric's exact value between the two meshes, in which the value lies (empty
    for the plain call, `bounds=False`: values with no proof)."""

    def __init__(self, values, brackets=None) -> None:
        super().__init__(values)
        self.brackets = dict(brackets or {})


def _check_metrics(metrics) -> tuple[str, ...]:
    """The asked keys in METRIC_KEYS order; None means all of them."""
    if metrics is None:
        return METRIC_KEYS
    if isinstance(metrics, str):
        raise ValueError(f"metrics must be a collection of keys, not one string; got {metrics!r}")
    asked = set(metrics)
    unknown = sorted(asked - set(METRIC_KEYS))
    if unknown or not asked:
        raise ValueError(f"metrics must be a non-empty subset of {METRIC_KEYS}; got {metrics!r}")
    return tuple(key for key in METRIC_KEYS if key in asked)


def _check_parameters(percentile, tau, subdivision, refine, quadrature) -> None:
    if not (isinstance(percentile, int | float) and 0 < percentile <= 100):
        raise ValueError(f"percentile must be in (0, 100]; got {percentile!r}")
    if not (isinstance(tau, int | float) and math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive finite number of mm; got {tau!r}")
    if not (isinstance(subdivision, int | np.integer) and subdivision >= 0):
        raise ValueError(f"subdivision must be a non-negative integer; got {subdivision!r}")
    if refine not in ("adaptive", "uniform"):
        raise ValueError(f"refine must be 'adaptive' or 'uniform'; got {refine!r}")
    if quadrature not in QUADRATURES:
        raise ValueError(f"quadrature must be one of {QUADRATURES}; got {quadrature!r}")


def _load_pair(a, b, spacing, origin):
    """(a, b, spacing, origin): arrays pass through; two files or two SimpleITK images are
    read by `maskio`, which checks that they lie on one grid and gives the grid."""
    import maskio

    files = [isinstance(mask, str | Path) for mask in (a, b)]
    images = [type(mask).__name__ == "Image" and hasattr(mask, "GetSpacing") for mask in (a, b)]
    if not (any(files) or any(images)):
        return np.asarray(a), np.asarray(b), spacing, origin
    if not (all(files) or all(images)):
        raise ValueError("a and b must both be arrays, both image files or both images")
    if spacing is not None or origin is not None:
        raise ValueError("spacing and origin come from the images' headers; do not pass them")
    pair = maskio.load_pair(a, b) if all(files) else maskio.pair_from_images(a, b)
    return pair.a, pair.b, pair.spacing, pair.origin


def _binary(array: np.ndarray, name: str) -> np.ndarray:
    if array.dtype == bool:
        return array
    values = np.unique(array)
    if not np.all(np.isin(values, (0, 1))):
        raise ValueError(f"{name} must be binary (0/1 or bool); found values {values[:5]}")
    return array.astype(bool)


def _check_spacing(spacing, dim: int) -> np.ndarray:
    try:
        spacing = np.asarray(spacing, dtype=float).reshape(-1)
    except (TypeError, ValueError) as error:
        raise ValueError(f"spacing must be {dim} numbers; got {spacing!r}") from error
    if len(spacing) != dim:
        raise ValueError(f"spacing must have {dim} entries (one per mask axis); got {len(spacing)}")
    if not np.all(np.isfinite(spacing) & (spacing > 0)):
        raise ValueError(f"spacing must be positive and finite; got {tuple(spacing)}")
    return spacing


def _empty_result(empty_a: bool, empty_b: bool, keys=METRIC_KEYS) -> dict[str, float]:
    if empty_a and empty_b:
        warnings.warn("both masks are empty: every metric is undefined (NaN)", stacklevel=3)
        return dict.fromkeys(keys, math.nan)
    warnings.warn(
        f"mask {'a' if empty_a else 'b'} is empty: distances are inf, NSD, BIoU and DSC are 0",
        stacklevel=3,
    )
    # With one boundary missing, no distance is finite and nothing overlaps.
    return {key: math.inf if BY_KEY[key].unit == "mm" else 0.0 for key in keys}


class DistancePass(NamedTuple):
    """What one distance pass between two surfaces gives: the weighted metrics, the two surface
    indexes (BIoU queries them again), the tie threshold at tau, the upper end of the HD
    bracket (the value is its lower end), and the elements of A and of B that coincide with
    one of the other surface (`lattice.coinciding_elements`; None off the lattice)."""

    scores: dict[str, float]
    index_a: SurfaceIndex
    index_b: SurfaceIndex
    threshold: float
    hd_upper: float
    coinciding: tuple | None = None

    def brackets(self, surface_a, surface_b, percentile: float, tau: float, keys) -> dict:
        """The asked distance metrics' brackets (module `bounds`), from this pass."""
        return bounds_lib.distance_brackets(
            surface_a,
            surface_b,
            self.index_a,
            self.index_b,
            self.scores,
            tau=tau,
            percentile=percentile,
            keys=keys,
            hd_upper=self.hd_upper,
            zeros=None if self.coinciding is None else [one.element for one in self.coinciding],
        )


def _distance_metrics(
    surface_a,
    surface_b,
    *,
    percentile,
    tau,
    subdivision,
    refine,
    quadrature="linear",
    keys=METRIC_KEYS,
    coinciding=None,
    indexes=None,
) -> DistancePass:
    """Weighted metrics from one distance pass per direction (`DistancePass`).

    The pass runs only if a metric of `PASS_KEYS` is asked, the HD bracket only for HD.
    coinciding: the elements of A and of B at distance 0 (`lattice.coinciding_elements`);
    indexes: the two surfaces' indexes (default: `closest.SurfaceIndex`).
    """
    threshold = tie_threshold(tau, surface_a[0], surface_b[0])
    index_a, index_b = indexes or (SurfaceIndex(*surface) for surface in (surface_a, surface_b))
    scores: dict[str, float] = {}
    centres = [None, None]  # the distance pass's queries at the element centres, if it ran
    if set(keys) & PASS_KEYS:
        directed = both_directions(
            (surface_a, surface_b),
            (index_a, index_b),
            coinciding or (None, None),
            percentile=percentile,
            threshold=threshold,
            subdivision=subdivision,
            refine=refine,
            quadrature=quadrature,
        )
        scores = weighted_metrics(*directed, percentile=percentile, threshold=threshold, tau=tau)
        centres = [one.centres for one in directed]
    if "HD" in keys:
        # HD is a maximum over the whole surface, not over element centres: bracket it at
        # vertices and adaptively refined points to HD_TOLERANCE (module `hausdorff`). Each
        # direction is bracketed only down to the largest exact distance found so far.
        found, hd_upper = scores.get("HD", 0.0), 0.0
        for (vertices, cells), target, start in zip(
            (surface_a, surface_b), (index_b, index_a), centres, strict=True
        ):
            bracket = directed_hausdorff(vertices, cells, target, floor=found, centres=start)
            found, hd_upper = max(found, bracket.lower), max(hd_upper, bracket.upper)
        scores["HD"] = found
    else:
        hd_upper = float("nan")
    return DistancePass(scores, index_a, index_b, threshold, hd_upper, coinciding)


def compute_metrics(
    a,
    b,
    spacing=None,
    *,
    percentile: float = DEFAULT_PERCENTILE,
    tau: float = DEFAULT_TAU,
    meshing: str = "discrete_marching_cubes",
    subdivision: int = DEFAULT_SUBDIVISION,
    origin=None,
    refine: str = "adaptive",
    quadrature: str = "linear",
    metrics=None,
    bounds: bool = True,
) -> Scores:
    """HD, HDp ("HD95"), MASD, ASSD, NSD, BIoU, DSC between two masks (2D or 3D).

    metrics: the keys to compute (a subset of METRIC_KEYS; None = all); the result holds
    exactly those. Without BIoU no dense grid is built; DSC is always counted on the voxels.
    subdivision, quadrature: levels of selective subdivision, and how NSD and HDp count the
    elements still straddling tau or the percentile after them: "linear" interpolates their
    corner distances, "midpoint" takes their centres (the paper's plain definition).

    a, b: bool arrays (2D, or 3D with 2 or more voxels along every axis; spacing[i] = voxel
    size in mm along axis i), or two SimpleITK images or two image paths, read by `maskio`
    (spacing and origin from the headers, which must describe one grid; binary files only:
    choose a label with `maskio.load_pair`). Both
    masks are meshed, distances measured between the meshes (modules `distance_pass` and
    `metrics`), BIoU counted on the points of a grid five times denser than the image grid
    (by case-code tables for the default meshing, module `lattice_bands`; on the grid itself
    for the others, module `biou`); DSC from the voxels.

    Returns `Scores`: the values by key, and with `bounds` (the default) `scores.brackets`,
    where brackets[key] is a `Bracket` (lower, upper, width) proven to hold the exact value of
    that metric between the two meshes (module `bounds`; docs/reference.md, "What the brackets
    prove"). Every value lies in its bracket: one the subdivision leaves outside is reported
    at the bracket's nearer end. A bracket wider than its aim (`bounds.WIDTH_AIMS`: HD 1e-3
    mm, HD95, MASD, ASSD 0.01 mm, NSD 0.001) is said in a `bounds.WideBracket` warning naming
    the metric, its width and what limited it. bounds=False is the plain call: 3 to 10 times
    faster, no brackets, and a value that can lie outside its bracket (by up to 0.02 mm or
    0.8 %pt measured; docs/reference.md).
    """
    _check_parameters(percentile, tau, subdivision, refine, quadrature)
    keys = _check_metrics(metrics)
    if meshing not in meshing_lib.MESHINGS:
        raise ValueError(f"meshing must be one of {meshing_lib.MESHINGS}; got {meshing!r}")
    a, b, spacing, origin = _load_pair(a, b, spacing, origin)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape; got {a.shape} and {b.shape}")
    if a.ndim not in (2, 3):
        raise ValueError(f"masks must be 2D or 3D; got {a.ndim} dimensions")
    if a.ndim == 3 and 1 in a.shape:
        # A 2D mask with an axis of size 1 (a slice saved as a volume) meshes as a slab one
        # voxel thick: its surface is then mostly the slab's two faces, not the outline.
        raise ValueError(
            f"masks of shape {a.shape} have an axis of size 1: a 2D mask must be 2D "
            "(np.squeeze it and give 2 spacings); a 3D mask needs 2 or more voxels per axis"
        )
    if spacing is None:
        raise ValueError("spacing is required for numpy masks")
    spacing = _check_spacing(spacing, a.ndim)
    a, b = _binary(a, "a"), _binary(b, "b")
    origin = np.zeros(a.ndim) if origin is None else _check_origin(origin, a.ndim)
    if not a.any() or not b.any():
        return _with_brackets(_empty_result(not a.any(), not b.any(), keys), bounds)

    # Crop to the union bounding box: meshing and BIoU only see the voxels that matter.
    lower, upper = _union_box(a, b)
    box = tuple(slice(lo, hi) for lo, hi in zip(lower, upper, strict=True))
    a, b = a[box], b[box]
    # Every metric is invariant to translation: the cropped masks are meshed with their first
    # voxel at 0, so a pair placed anywhere in any grid gives the same meshes to the last bit,
    # and the same values and brackets (the brackets' refinement follows ties in the
    # coordinates' last bits). `origin` places the grid only.
    crop_origin = np.zeros(a.ndim)
    # DSC of masks is a voxel count: no mesh needed.
    scores = {"DSC": 2.0 * np.count_nonzero(a & b) / (np.count_nonzero(a) + np.count_nonzero(b))}
    brackets = {}
    if set(keys) - {"DSC"}:
        mesh_scores, brackets = _mesh_metrics(
            a,
            b,
            spacing,
            crop_origin,
            keys,
            meshing=meshing,
            percentile=percentile,
            tau=tau,
            subdivision=subdivision,
            refine=refine,
            quadrature=quadrature,
            bounds=bounds,
        )
        scores |= mesh_scores
    return _with_brackets({key: float(scores[key]) for key in keys}, bounds, brackets)


def _with_brackets(scores: dict[str, float], asked: bool, brackets: dict | None = None) -> Scores:
    """`Scores`, with a bracket for every key when `asked`: the counted metrics' (BIoU, DSC)
    are their values, and so is every metric without `brackets` (an empty mask: the values
    are definitions; module `bounds`).

    With brackets, a value the default subdivision leaves outside its proven bracket is
    moved to the bracket's nearer end: the exact value is in the bracket, so that end is
    closer to it (module `bounds`, `clamp`). A bracket wider than its aim
    (`bounds.WIDTH_AIMS`) is said in a `bounds.WideBracket` warning naming the metric, the
    width and what stopped the refinement."""
    if not asked:
        return Scores(scores)
    if brackets is None:
        return Scores(scores, bounds_lib.point_brackets(scores, scores))
    brackets = bounds_lib.point_brackets(scores) | brackets
    # A metric module `bounds` knows no bound for (one added to the vocabulary with a formula
    # alone): the bracket that holds every value, said as such.
    brackets |= {key: bounds_lib.unbounded() for key in scores if key not in brackets}
    for line in bounds_lib.too_wide(brackets):
        warnings.warn(line, bounds_lib.WideBracket, stacklevel=3)
    return Scores(
        {key: bounds_lib.clamp(value, brackets[key]) for key, value in scores.items()}, brackets
    )


def _mesh_metrics(a, b, spacing, crop_origin, keys, *, meshing, bounds=False, **options):
    """Distance metrics and BIoU of two cropped, non-empty masks (only the asked keys), and
    the distance metrics' brackets if `bounds` (else {})."""
    surface_a = mesh_surface(a, spacing, crop_origin, meshing)
    surface_b = mesh_surface(b, spacing, crop_origin, meshing)
    coinciding = indexes = None
    if meshing == lattice.LATTICE_MESHING:  # elements on the lattice: exact zeros, cube index
        cubes = lattice.Lattice(crop_origin, spacing, a.shape)
        coinciding = lattice.coinciding_elements(surface_a, surface_b, cubes)
        indexes = lattice_index.indexes(surface_a, surface_b, cubes)
    found = _distance_metrics(
        surface_a, surface_b, keys=keys, coinciding=coinciding, indexes=indexes, **options
    )
    scores, threshold = found.scores, found.threshold
    brackets = (
        found.brackets(surface_a, surface_b, options["percentile"], options["tau"], keys)
        if bounds
        else {}
    )
    if "BIoU" not in keys:
        return scores, brackets
    if meshing == lattice.LATTICE_MESHING and lattice_bands.fits(spacing, threshold):
        # Elements on the lattice: inside and within-tau bits per case code (no dense grid).
        scores["BIoU"] = lattice_bands.count_by_tables(
            a, b, spacing, threshold, tau=options["tau"]
        ).biou()
    else:
        # The meshes stay within one voxel of the cropped masks; every band point is inside.
        grid = dense_grid.dense_grid_of_image(
            crop_origin, spacing, -np.ones(a.ndim, int), np.array(a.shape) + 1
        )
        # The band uses the NSD tie rule: dense points at exactly tau (they exist whenever tau
        # is an odd multiple of a tenth of a voxel) are in, whatever the coordinates' rounding.
        scores["BIoU"] = biou.count_bands(
            surface_a,
            surface_b,
            threshold,
            grid,
            index_a=found.index_a,
            index_b=found.index_b,
        ).biou()
    return scores, brackets


def _union_box(a: np.ndarray, b: np.ndarray):
    """First and one-past-last index of the foreground of a | b along every axis."""
    flat = a.ndim == 2  # a 2D mask as one layer of a 3D one
    a, b = (np.ascontiguousarray(mask[None] if flat else mask) for mask in (a, b))
    lower, upper = _union_box_3d(a, b)
    return (lower[1:], upper[1:]) if flat else (lower, upper)


@njit(**JIT)
def _union_box_3d(a, b):
    """(lower, upper): the first and one-past-last index of the foreground of a | b along each
    axis of two 3D bool arrays of one shape, in one pass (numpy's any over two axes at a time
    reads the arrays three times, strided); lower = shape, upper = 0 where both are empty."""
    n0, n1, n2 = a.shape
    lower = np.array([n0, n1, n2])
    upper = np.zeros(3, np.int64)
    for i in range(n0):
        for j in range(n1):
            first = last = -1
            for k in range(n2):
                if a[i, j, k] or b[i, j, k]:
                    if first < 0:
                        first = k
                    last = k
            if first >= 0:
                lower[0], upper[0] = min(lower[0], i), max(upper[0], i + 1)
                lower[1], upper[1] = min(lower[1], j), max(upper[1], j + 1)
                lower[2], upper[2] = min(lower[2], first), max(upper[2], last + 1)
    return lower, upper


def _check_origin(origin, dim: int) -> np.ndarray:
    origin = np.asarray(origin, dtype=float).reshape(-1)
    if len(origin) != dim or not np.all(np.isfinite(origin)):
        raise ValueError(f"origin must be {dim} finite numbers; got {tuple(origin)}")
    return origin


def mesh_surface(mask, spacing, origin, method):
    """Mesh one mask and fix its orientation (outward), see `meshing.mesh_mask`."""
    vertices, cells = meshing_lib.mesh_mask(mask, spacing, origin, method)
    if method == "surface_nets" and mask.ndim == 2:
        cells = _orient_segments_by_mask(vertices, cells, mask, spacing, origin)
    return vertices, orient_outward(vertices, cells)


def _orient_segments_by_mask(vertices, cells, mask, spacing, origin):
    """Orient each 2D segment so its right-hand normal points out of the mask.

    VTK's 2D surface nets emits segments in no consistent order. A step of a quarter voxel
    from the midpoint along the right-hand normal lands in the voxel on that side.
    """
    start, end = vertices[cells[:, 0]], vertices[cells[:, 1]]
    edge = end - start
    normal = np.column_stack([edge[:, 1], -edge[:, 0]])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    probe = 0.5 * (start + end) + 0.25 * spacing.min() * normal
    index = np.rint((probe - origin) / spacing).astype(int)
    inside = np.all((index >= 0) & (index < mask.shape), axis=1)
    inside[inside] = mask[tuple(index[inside].T)]
    return np.where(inside[:, None], cells[:, ::-1], cells)


def _check_surface(surface, name: str, dim: int | None = None):
    try:
        vertices, cells = surface
        vertices = np.asarray(vertices, dtype=float)
        cells = np.asarray(cells)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be (vertices, cells)") from error
    if vertices.ndim != 2 or vertices.shape[1] not in (2, 3):
        raise ValueError(f"{name}: vertices must be (n, 2) or (n, 3); got {vertices.shape}")
    if (
        cells.ndim != 2
        or cells.shape[1] != vertices.shape[1]
        or not np.issubdtype(cells.dtype, np.integer)
    ):
        raise ValueError(
            f"{name}: cells must be integer (m, {vertices.shape[1]}); "
            f"got {cells.dtype} {cells.shape}"
        )
    if len(cells) and (cells.min() < 0 or cells.max() >= len(vertices)):
        raise ValueError(f"{name}: cells index vertices out of range")
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f"{name}: vertices must be finite")
    if dim is not None and vertices.shape[1] != dim:
        raise ValueError(f"{name} has dimension {vertices.shape[1]}, the other surface {dim}")
    return vertices, cells.astype(np.int64)


def compute_surface_metrics(
    surface_a,
    surface_b,
    *,
    percentile: float = DEFAULT_PERCENTILE,
    tau: float = DEFAULT_TAU,
    subdivision: int = DEFAULT_SUBDIVISION,
    grid_step: float | None = None,
    refine: str = "adaptive",
    quadrature: str = "linear",
    bounds: bool = True,
) -> Scores:
    """The same metrics between two closed surfaces given in mm (vertices, cells).

    BIoU and DSC are counted on a regular grid of step `grid_step` (default tau / 10) over the
    bounding box of both surfaces, with exact signed distances; DSC here is the volume overlap
    of the two enclosed regions on that grid. bounds: as in `compute_metrics`.
    """
    _check_parameters(percentile, tau, subdivision, refine, quadrature)
    surface_a = _check_surface(surface_a, "surface_a")
    surface_b = _check_surface(surface_b, "surface_b", surface_a[0].shape[1])
    if len(surface_a[1]) == 0 or len(surface_b[1]) == 0:
        return _with_brackets(_empty_result(len(surface_a[1]) == 0, len(surface_b[1]) == 0), bounds)
    surface_a = (surface_a[0], orient_outward(*surface_a))
    surface_b = (surface_b[0], orient_outward(*surface_b))
    found = _distance_metrics(
        surface_a,
        surface_b,
        percentile=percentile,
        tau=tau,
        subdivision=subdivision,
        refine=refine,
        quadrature=quadrature,
    )
    scores = found.scores
    step = tau / 10 if grid_step is None else float(grid_step)
    points = np.concatenate([surface_a[0], surface_b[0]])
    low, high = points.min(axis=0) - step, points.max(axis=0) + step
    shape = tuple(int(n) for n in np.ceil((high - low) / step))
    grid = dense_grid.DenseGrid(low + 0.5 * step, np.full(len(low), step), shape)
    counts = biou.count_bands(
        surface_a,
        surface_b,
        found.threshold,
        grid,
        index_a=found.index_a,
        index_b=found.index_b,
    )
    scores["BIoU"], scores["DSC"] = counts.biou(), counts.dsc()
    brackets = found.brackets(surface_a, surface_b, percentile, tau, METRIC_KEYS) if bounds else {}
    return _with_brackets({key: float(scores[key]) for key in METRIC_KEYS}, bounds, brackets)
