"""Masks in files and in memory: the project's one axis convention and its one loading path.

Axis convention (every package of the project relies on it): axis n of a mask array is
physical axis n (x, y, z), so `spacing[n]` and `origin[n]` belong to array axis n. SimpleITK
and ITK programs see the same voxels with the header a scanner would write: `to_image` and
`from_image` transpose between the two, so a file written here and read by any ITK-based tool
has its 2 mm axis where the array has it.

Direction cosines are carried, not applied: distances between two masks on one grid do not
depend on them (a rotation or flip of both), but two masks whose directions differ are not on
one grid, and `load_pair` refuses them like any other geometry mismatch.

User input errors raise `InputError`, whose message starts with the file (or argument) and
says what is wrong; command-line entry points print it as `error: <message>` and exit with 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GRID_TOLERANCE_MM = 1e-4
"""Spacing and origin of two files on "the same grid" may differ by this much (mm): headers
written by different programs round differently (NRRD keeps 6 to 17 significant digits)."""

DIRECTION_TOLERANCE = 1e-6
"""Largest difference between two files' direction cosines on the same grid."""


class InputError(ValueError):
    """The user's input is wrong (a file or an argument); the message names it and why."""


@dataclass(frozen=True)
class Mask:
    """A binary mask with its grid: spacing and origin in mm, direction cosines (row major)."""

    array: np.ndarray
    spacing: tuple[float, ...]
    origin: tuple[float, ...]
    direction: tuple[float, ...]


@dataclass(frozen=True)
class MaskPair:
    """Two masks checked to lie on one grid (reference a, prediction b)."""

    a: np.ndarray
    b: np.ndarray
    spacing: tuple[float, ...]
    origin: tuple[float, ...]


def _sitk():
    # SimpleITK costs about 0.3 s to import; users of the convention alone need not pay it.
    import SimpleITK

    return SimpleITK


def _check_grid(where: str, ndim: int, spacing: Sequence[float], origin: Sequence[float]) -> None:
    if ndim not in (2, 3):
        raise InputError(f"{where}: mask must be 2D or 3D, got {ndim} dimensions")
    if len(spacing) != ndim or len(origin) != ndim:
        raise InputError(
            f"{where}: spacing {tuple(spacing)} and origin {tuple(origin)} must "
            f"have one value per mask axis ({ndim})"
        )
    if not all(math.isfinite(float(s)) and float(s) > 0 for s in spacing):
        raise InputError(f"{where}: voxel size must be positive and finite, got {tuple(spacing)}")
    if not all(math.isfinite(float(o)) for o in origin):
        raise InputError(f"{where}: origin must be finite, got {tuple(origin)}")


def to_image(
    mask: np.ndarray,
    spacing: Sequence[float],
    origin: Sequence[float] | None = None,
    *,
    where: str = "mask",
):
    """A uint8 SimpleITK image of `mask` (array axis n = image axis n), spacing in its header.

    `where` names the mask in error messages (a file about to be written, say)."""
    mask = np.asarray(mask)
    origin = (0.0,) * mask.ndim if origin is None else origin
    _check_grid(where, mask.ndim, spacing, origin)
    if mask.dtype != bool and not np.isin(mask, (0, 1)).all():
        raise InputError(
            f"{where}: mask to write is not binary (values {np.unique(mask)[:10].tolist()})"
        )
    # SimpleITK's numpy view runs (z, y, x): the transpose puts array axis 0 on image axis x.
    image = _sitk().GetImageFromArray(np.ascontiguousarray(mask.astype(np.uint8).T))
    image.SetSpacing([float(s) for s in spacing])
    image.SetOrigin([float(o) for o in origin])
    return image


def from_image(
    image, where: str = "image"
) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
    """(array in (x, y, z) axis order, spacing, origin) of a one-component SimpleITK image."""
    if image.GetNumberOfComponentsPerPixel() != 1:
        raise InputError(
            f"{where}: image has {image.GetNumberOfComponentsPerPixel()} components "
            "per voxel (a multi-layer segmentation?); expected one label per voxel"
        )
    array = np.ascontiguousarray(_sitk().GetArrayViewFromImage(image).T)
    spacing, origin = tuple(image.GetSpacing()), tuple(image.GetOrigin())
    _check_grid(where, array.ndim, spacing, origin)
    return array, spacing, origin


def write_mask(
    path: str | Path,
    mask: np.ndarray,
    spacing: Sequence[float],
    origin: Sequence[float] | None = None,
) -> Path:
    """Write a binary mask as an 8-bit image (compressed where the format allows: .nii.gz)."""
    path = Path(path)
    image = to_image(mask, spacing, origin, where=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    _sitk().WriteImage(image, str(path), useCompression=True)
    return path


def read_image(path: str | Path):
    """The SimpleITK image in `path`; InputError in plain words if absent or not an image."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    sitk = _sitk()
    try:
        return sitk.ReadImage(str(path))
    except RuntimeError:
        # SimpleITK's own message is a C++ trace; what a user needs is the file and the cause.
        raise InputError(
            f"{path}: not an image file SimpleITK can read (NIfTI, NRRD, MHA, ...)"
        ) from None


def array_shape(path: str | Path) -> tuple[int, ...]:
    """The shape of the mask array in `path` (axis n = physical axis n, as `read_mask` gives
    it), from the header alone: the pixels are not read."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    reader = _sitk().ImageFileReader()
    reader.SetFileName(str(path))
    try:
        reader.ReadImageInformation()
    except RuntimeError:
        raise InputError(
            f"{path}: not an image file SimpleITK can read (NIfTI, NRRD, MHA, ...)"
        ) from None
    return tuple(int(n) for n in reader.GetSize())  # SimpleITK's (x, y, z) order


def _binary(where: str, array: np.ndarray, label: int | None) -> np.ndarray:
    """`array == label`, or the array itself if it holds only 0 and 1 (no label given)."""
    values = np.unique(array)
    fractional = values[values != np.round(values)]
    if fractional.size:
        # A probability map or a resampled mask: no label can make it binary.
        shown = fractional[:5].tolist()
        raise InputError(
            f"{where}: mask holds fractional values ({shown}, ...); expected a "
            "binary mask or a label map of whole numbers"
        )
    if label is None:
        if not np.isin(values, (0, 1)).all():
            shown = values[values != 0][:10].tolist()
            raise InputError(
                f"{where}: mask is not binary (it holds {shown} besides 0); choose "
                "one with --label N"
            )
        return array.astype(bool)
    if label not in values:
        present = values[values != 0][:20].tolist()
        raise InputError(f"{where}: label {label} does not occur (labels present: {present})")
    return array == label


def _load_values(path: str | Path) -> Mask:
    """The image in `path` as a Mask whose array still holds the file's values."""
    image = read_image(path)
    array, spacing, origin = from_image(image, where=str(path))
    return Mask(array, spacing, origin, tuple(image.GetDirection()))


def _with_label(mask: Mask, where: str, label: int | None) -> Mask:
    return Mask(_binary(where, mask.array, label), mask.spacing, mask.origin, mask.direction)


def load_mask(path: str | Path, label: int | None = None) -> Mask:
    """The mask in `path` with its whole grid (direction included): a binary file, or the
    voxels of `label` in a label map."""
    return _with_label(_load_values(path), str(path), label)


def read_mask(
    path: str | Path, label: int | None = None
) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
    """(bool mask, spacing, origin) in `path`: a binary file, or the voxels of `label` in a
    label map. Without `label` the file must hold only 0 and 1; with it, the label must occur."""
    mask = load_mask(path, label)
    return mask.array, mask.spacing, mask.origin


def check_same_grid(first: Mask, second: Mask, name_first: str, name_second: str) -> None:
    """InputError naming both files and the first field in which their grids differ."""
    if first.array.ndim != second.array.ndim:
        raise InputError(
            f"{name_first} is {first.array.ndim}D but {name_second} is {second.array.ndim}D"
        )
    fields = [
        ("size", first.array.shape, second.array.shape, 0),
        ("spacing", first.spacing, second.spacing, GRID_TOLERANCE_MM),
        ("origin", first.origin, second.origin, GRID_TOLERANCE_MM),
        ("direction", first.direction, second.direction, DIRECTION_TOLERANCE),
    ]
    for name, one, other, tolerance in fields:
        if not np.allclose(one, other, rtol=0, atol=tolerance):
            raise InputError(
                f"{name_first} and {name_second} are not on the same grid: {name} "
                f"{_show(one)} vs {_show(other)} (resample one onto the other "
                "first)"
            )


def _show(values) -> str:
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def load_pair(path_a: str | Path, path_b: str | Path, label: int | None = None) -> MaskPair:
    """Masks a (reference) and b (prediction) from two files on one grid.

    Size, spacing, origin and direction must agree (spacing and origin within
    GRID_TOLERANCE_MM); without `label` both files must be binary, with it the label must
    occur in both. Empty masks are returned as they are: what an empty mask scores is the
    metric's business, not a loading error.
    """
    a, b = _load_values(path_a), _load_values(path_b)
    check_same_grid(a, b, str(path_a), str(path_b))  # before labels: the graver mistake
    a, b = _with_label(a, str(path_a), label), _with_label(b, str(path_b), label)
    return MaskPair(a.array, b.array, a.spacing, a.origin)


def pair_from_images(image_a, image_b) -> MaskPair:
    """`load_pair` for two SimpleITK images already in memory (binary, one grid)."""
    masks = []
    for name, image in (("image a", image_a), ("image b", image_b)):
        array, spacing, origin = from_image(image, where=name)
        masks.append(Mask(array, spacing, origin, tuple(image.GetDirection())))
    check_same_grid(*masks, "image a", "image b")
    masks = [
        _with_label(mask, name, None)
        for mask, name in zip(masks, ("image a", "image b"), strict=True)
    ]
    return MaskPair(masks[0].array, masks[1].array, masks[0].spacing, masks[0].origin)


__all__ = [
    "DIRECTION_TOLERANCE",
    "GRID_TOLERANCE_MM",
    "InputError",
    "Mask",
    "MaskPair",
    "check_same_grid",
    "from_image",
    "load_mask",
    "load_pair",
    "pair_from_images",
    "read_image",
    "read_mask",
    "to_image",
    "write_mask",
]
