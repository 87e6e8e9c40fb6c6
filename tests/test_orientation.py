"""Every ITK-based tool sees the masks as the study wrote them: each voxel size on its own axis.

The study's files are written by `maskio.write_mask` (array axis n = physical axis n). A tool
run through its adapter on the arrays must give what the tool gives when called directly on
those files; on an anisotropic, asymmetric pair a reversal of the axes changes every distance,
which `test_the_pair_tells_reversed_axes_apart` proves for the pair used here.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from adapters import REGISTRY
from adapters.base import ProgramAdapter
from maskio import read_mask, write_mask

SPACING = (0.5, 0.5, 2.0)


def anisotropic_pair() -> tuple[np.ndarray, np.ndarray]:
    """A ball and an offset ellipsoid on the (0.5, 0.5, 2) mm grid: curved boundaries, whose
    voxelization differs along the 2 mm axis from the 0.5 mm ones, and no symmetry that would
    survive swapping the x and z axes."""
    x, y, z = np.meshgrid(*(np.arange(n) * s for n, s in zip((60, 60, 16), SPACING,
                                                                 strict=True)), indexing="ij")
    a = (x - 14) ** 2 + (y - 15) ** 2 + (z - 15) ** 2 < 10 ** 2
    b = (x - 16) ** 2 / 1.2 + (y - 14) ** 2 + (z - 16) ** 2 < 9 ** 2
    return a, b


@pytest.fixture(scope="module")
def study_files(tmp_path_factory):
    """The pair as the voxelizer writes it, and the arrays read back as scoring reads them."""
    folder = tmp_path_factory.mktemp("orientation")
    a, b = anisotropic_pair()
    paths = (write_mask(folder / "a.nii.gz", a, SPACING, (10.0, -4.0, 30.0)),
             write_mask(folder / "b.nii.gz", b, SPACING, (10.0, -4.0, 30.0)))
    (mask_a, spacing, _), (mask_b, _, _) = (read_mask(path) for path in paths)
    return paths, mask_a, mask_b, spacing


def require(name: str):
    reason = REGISTRY[name].unavailable()
    if reason is not None:
        pytest.skip(f"{name} unavailable: {reason}")
    return REGISTRY[name]


def simpleitk_direct(path_a, path_b) -> dict[str, float]:
    """HausdorffDistanceImageFilter on the files as SimpleITK reads them."""
    import SimpleITK as sitk

    distances = sitk.HausdorffDistanceImageFilter()
    distances.Execute(sitk.ReadImage(str(path_a)), sitk.ReadImage(str(path_b)))
    return {"HD": distances.GetHausdorffDistance(),
            "MASD": distances.GetAverageHausdorffDistance()}


def plastimatch_direct(path_a, path_b) -> dict[str, float]:
    """`plastimatch dice --hausdorff a b`, its "(boundary)" lines read by hand."""
    binary = REGISTRY["plastimatch"].find_binary()
    said = subprocess.run([binary, "dice", "--hausdorff", str(path_a), str(path_b)],
                          capture_output=True, text=True, check=True, timeout=120).stdout
    lines = {"HD": "Hausdorff distance (boundary)",
             "HD95": "Percent (0.95) Hausdorff distance (boundary)",
             "MASD": "Avg average Hausdorff distance (boundary)"}
    return {key: float(re.search(rf"^{re.escape(line)}\s*[:=]\s*(\S+)", said, re.M).group(1))
            for key, line in lines.items()}


DIRECT_CALLS = {"simpleitk": simpleitk_direct, "plastimatch": plastimatch_direct}


@pytest.mark.parametrize("name", sorted(DIRECT_CALLS))
def test_adapter_equals_a_direct_call_on_the_study_files(name, study_files):
    adapter = require(name)
    paths, a, b, spacing = study_files
    direct = DIRECT_CALLS[name](*paths)
    through_adapter = adapter.compute(a, b, spacing, metrics=sorted(direct))
    assert through_adapter == pytest.approx(direct, rel=1e-9, abs=1e-9)


PROGRAM_TOOLS = sorted(name for name, adapter in REGISTRY.items()
                       if isinstance(adapter, ProgramAdapter))


@pytest.mark.parametrize("name", PROGRAM_TOOLS)
def test_program_tools_read_arrays_and_study_files_alike(name, study_files):
    """In memory (compare, probe) the adapter writes its own files; in the study it reads the
    voxelizer's. Both must be the same masks to the tool."""
    adapter = require(name)
    paths, a, b, spacing = study_files
    metrics = [m for m in ("HD", "MASD") if m in adapter.metrics]
    from_arrays = adapter.compute(a, b, spacing, metrics=metrics)
    from_files = adapter.compute(a, b, spacing, metrics=metrics, files=paths)
    assert from_arrays == pytest.approx(from_files, rel=1e-9, abs=1e-9)


def test_the_pair_tells_reversed_axes_apart(study_files, tmp_path):
    """The checks above could not fail if reversing the axes left the tool's answer unchanged:
    on this pair Plastimatch's MASD moves when the files are written the former adapters' way
    (the (x, y, z) array handed to SimpleITK as if it were (z, y, x), spacing reversed)."""
    import SimpleITK as sitk

    require("plastimatch")
    paths, a, b, spacing = study_files
    reversed_paths = []
    for name, mask in (("a", a), ("b", b)):
        image = sitk.GetImageFromArray(np.ascontiguousarray(mask, dtype=np.uint8))
        image.SetSpacing(tuple(reversed(spacing)))
        sitk.WriteImage(image, str(tmp_path / f"{name}.nii.gz"))
        reversed_paths.append(tmp_path / f"{name}.nii.gz")
    right, wrong = plastimatch_direct(*paths), plastimatch_direct(*reversed_paths)
    assert abs(right["MASD"] - wrong["MASD"]) > 1e-5


def test_files_carry_each_voxel_size_on_its_axis(study_files):
    import SimpleITK as sitk

    paths, a, _, _ = study_files
    image = sitk.ReadImage(str(paths[0]))
    assert image.GetSpacing() == SPACING and image.GetSize() == a.shape
