"""maskio: the axis convention, the grid check and the library's use of it."""

from __future__ import annotations

import numpy as np
import pytest
import SimpleITK as sitk

from maskio import (
    GRID_TOLERANCE_MM,
    InputError,
    array_shape,
    from_image,
    load_pair,
    pair_from_images,
    to_image,
    write_mask,
)


def asymmetric_mask() -> np.ndarray:
    mask = np.zeros((7, 5, 3), dtype=bool)
    mask[1:6, 2, 1] = True  # a rod along x
    mask[1, 1:4, 0:3] = True  # a plate in y-z at x = 1
    return mask


def test_array_axes_are_image_axes(tmp_path):
    # NIfTI headers hold float32: sizes exact in float32 keep the comparisons exact.
    mask, spacing, origin = asymmetric_mask(), (0.5, 0.75, 2.0), (1.0, -2.0, 30.0)
    image = sitk.ReadImage(str(write_mask(tmp_path / "m.nii.gz", mask, spacing, origin)))
    assert image.GetSize() == mask.shape and image.GetSpacing() == spacing
    assert image.GetOrigin() == origin
    # Voxel (i, j, k) of the array is image index (i, j, k), at origin + index * spacing.
    for index in zip(*np.nonzero(mask), strict=True):
        assert image[tuple(int(i) for i in index)] == 1
    assert image.TransformIndexToPhysicalPoint((5, 2, 1)) == (3.5, -0.5, 32.0)
    back, read_spacing, read_origin = from_image(image)
    assert np.array_equal(back, mask) and read_spacing == spacing and read_origin == origin


def test_array_shape_reads_the_header_in_the_arrays_axis_order(tmp_path):
    volume = write_mask(tmp_path / "v.nii.gz", asymmetric_mask(), (0.5, 0.75, 2.0), (0, 0, 0))
    assert array_shape(volume) == (7, 5, 3)
    plane = write_mask(tmp_path / "p.nii.gz", np.ones((4, 9), bool), (0.7, 0.7), (0, 0))
    assert array_shape(plane) == (4, 9)
    with pytest.raises(InputError, match=r"absent\.nii\.gz: file not found"):
        array_shape(tmp_path / "absent.nii.gz")
    (tmp_path / "text.nii.gz").write_text("not an image")
    with pytest.raises(InputError, match=r"text\.nii\.gz: not an image file"):
        array_shape(tmp_path / "text.nii.gz")


def test_headers_rounded_differently_are_one_grid(tmp_path):
    mask = asymmetric_mask()
    path_a = write_mask(tmp_path / "a.nrrd", mask, (0.5, 0.5, 2.0), (1.0, 2.0, 3.0))
    nudge = GRID_TOLERANCE_MM / 2
    path_b = write_mask(tmp_path / "b.nrrd", mask, (0.5 + nudge, 0.5, 2.0), (1.0, 2.0 - nudge, 3.0))
    pair = load_pair(path_a, path_b)
    assert pair.spacing == (0.5, 0.5, 2.0) and pair.origin == (1.0, 2.0, 3.0)
    path_c = write_mask(tmp_path / "c.nrrd", mask, (0.5, 0.5, 2.0), (1.0, 2.0 + 3 * nudge, 3.0))
    with pytest.raises(InputError, match=r"a.nrrd and .*c.nrrd are not on the same grid: origin"):
        load_pair(path_a, path_c)


def test_a_grid_mismatch_is_reported_before_labels(tmp_path):
    labels = asymmetric_mask().astype(np.uint8) * 4
    image = to_image(asymmetric_mask(), (1.0, 1.0, 1.0))
    sitk.WriteImage(image, str(tmp_path / "binary.nii.gz"))
    other = sitk.GetImageFromArray(np.ascontiguousarray(labels.T))
    other.SetSpacing((1.0, 1.0, 3.0))
    sitk.WriteImage(other, str(tmp_path / "labels.nii.gz"))
    with pytest.raises(InputError, match="same grid: spacing"):
        load_pair(tmp_path / "binary.nii.gz", tmp_path / "labels.nii.gz")


def test_compute_metrics_checks_files_and_images_like_the_commands(tmp_path):
    from reference import compute_metrics

    mask = np.zeros((12, 12, 8), dtype=bool)
    mask[3:9, 3:9, 2:6] = True
    path_a = write_mask(tmp_path / "a.nii.gz", mask, (1.0, 1.0, 2.0))
    path_b = write_mask(tmp_path / "b.nii.gz", mask, (1.0, 1.0, 2.0), (7.0, 0.0, 0.0))
    with pytest.raises(InputError, match="same grid: origin"):
        compute_metrics(path_a, path_b)
    with pytest.raises(InputError, match="same grid: origin"):
        compute_metrics(sitk.ReadImage(str(path_a)), sitk.ReadImage(str(path_b)))
    shifted = write_mask(tmp_path / "c.nii.gz", np.roll(mask, 2, axis=2), (1.0, 1.0, 2.0))
    from_files = compute_metrics(path_a, shifted, metrics=["HD", "DSC"])
    assert from_files == {"HD": pytest.approx(4.0), "DSC": pytest.approx(0.5)}  # 2 slices of 2 mm
    with pytest.raises(ValueError, match="spacing and origin come from the images"):
        compute_metrics(path_a, shifted, (1.0, 1.0, 1.0))


def test_images_in_memory_are_checked_too():
    image_a = to_image(asymmetric_mask(), (1.0, 1.0, 1.0))
    image_b = to_image(asymmetric_mask(), (1.0, 1.0, 1.0))
    image_b.SetDirection((1, 0, 0, 0, -1, 0, 0, 0, 1))
    with pytest.raises(InputError, match="image a and image b are not on the same grid: direc"):
        pair_from_images(image_a, image_b)
