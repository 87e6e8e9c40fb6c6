"""Reading and writing binary masks (NIfTI, NRRD, anything SimpleITK reads).

Array convention: axis n of the returned array is physical axis n (x, y, z), so spacing[n]
and origin[n] belong to array axis n. SimpleITK's numpy view runs the other way (z, y, x);
this module transposes on the way in and out, so files keep a physically correct header.
Direction cosines are not applied: distances between two masks on one grid do not depend on
them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import SimpleITK as sitk


def _check_geometry(path: Path, mask: np.ndarray, spacing, origin) -> None:
    if mask.ndim not in (2, 3):
        raise ValueError(f"{path}: mask must be 2D or 3D, got {mask.ndim} dimensions")
    if len(spacing) != mask.ndim or len(origin) != mask.ndim:
        raise ValueError(f"{path}: spacing {tuple(spacing)} and origin {tuple(origin)} must have "
                         f"one value per mask axis ({mask.ndim})")
    if not all(math.isfinite(float(s)) and float(s) > 0 for s in spacing):
        raise ValueError(f"{path}: voxel size must be positive and finite, got {tuple(spacing)}")
    if not all(math.isfinite(float(o)) for o in origin):
        raise ValueError(f"{path}: origin must be finite, got {tuple(origin)}")


def write_mask(path: str | Path, mask: np.ndarray, spacing: Sequence[float],
               origin: Sequence[float]) -> None:
    """Write a binary mask as an 8-bit image (compressed when the format allows, e.g. .nii.gz)."""
    path = Path(path)
    mask = np.asarray(mask)
    _check_geometry(path, mask, spacing, origin)
    if mask.dtype != bool and not np.isin(mask, (0, 1)).all():
        raise ValueError(f"{path}: mask to write is not binary (values {np.unique(mask)[:10]})")
    image = sitk.GetImageFromArray(np.ascontiguousarray(mask.astype(np.uint8).T))
    image.SetSpacing([float(s) for s in spacing])
    image.SetOrigin([float(o) for o in origin])
    path.parent.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(image, str(path), useCompression=True)


def read_image(path: str | Path) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
    """(array in (x, y, z) axis order, spacing, origin) of any scalar image SimpleITK reads."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: mask file not found")
    try:
        image = sitk.ReadImage(str(path))
    except RuntimeError as error:
        raise ValueError(f"{path}: not an image SimpleITK can read ({error})") from error
    if image.GetNumberOfComponentsPerPixel() != 1:
        raise ValueError(f"{path}: image has {image.GetNumberOfComponentsPerPixel()} components "
                         "per voxel (a multi-layer segmentation?); expected one label per voxel")
    array = np.ascontiguousarray(sitk.GetArrayViewFromImage(image).T)
    spacing, origin = tuple(image.GetSpacing()), tuple(image.GetOrigin())
    _check_geometry(path, array, spacing, origin)
    return array, spacing, origin


def read_mask(path: str | Path, label: int | None = None
              ) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
    """(bool mask, spacing, origin) from a file: binary, or a label map with `label` chosen.

    Without `label`, the file must hold only 0 and 1; with it, the label must occur.
    """
    array, spacing, origin = read_image(path)
    values = np.unique(array)
    if label is None:
        if not np.isin(values, (0, 1)).all():
            raise ValueError(f"{path}: mask is not binary (values {values[:10].tolist()}); "
                             "give the label number of the organ")
        return array.astype(bool), spacing, origin
    if label not in values:
        raise ValueError(f"{path}: label {label} does not occur (labels present: "
                         f"{values[values != 0][:20].tolist()})")
    return array == label, spacing, origin
