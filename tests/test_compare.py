"""The compare command: tools beside the reference, with Δ and flags."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import SimpleITK as sitk

from adapters.__main__ import main
from adapters.compare import compare, format_comparison
from maskio import InputError, load_pair


def write(path, mask, spacing=(1.0, 1.0, 2.0)):
    """A label map in the project's axis convention (array axis n = image axis n)."""
    image = sitk.GetImageFromArray(np.ascontiguousarray(mask.astype(np.uint8).T))
    image.SetSpacing(spacing)
    sitk.WriteImage(image, str(path))
    return path


def labelled_pair(tmp_path):
    a = np.zeros((16, 16, 10), dtype=np.uint8)
    a[3:11, 3:11, 2:7] = 2
    a[12:14, 12:14, 1:3] = 5  # another label, ignored with --label 2
    b = np.roll(a, 2, axis=0)
    return write(tmp_path / "a.nii.gz", a), write(tmp_path / "b.nii.gz", b)


@pytest.fixture
def fake_reference(monkeypatch):
    """A reference that answers HD = 4 mm and DSC = 0.75, standing in for the real one; it
    takes no `bounds`, so compare must call the default (certified) call, as the study does."""
    module = types.ModuleType("reference")
    module.compute_metrics = lambda a, b, spacing, percentile, tau: {"HD": 4.0, "DSC": 0.75}
    monkeypatch.setitem(sys.modules, "reference", module)


def test_load_pair_selects_the_label_and_keeps_the_axes(tmp_path):
    path_a, path_b = labelled_pair(tmp_path)
    pair = load_pair(path_a, path_b, label=2)
    assert pair.spacing == (1.0, 1.0, 2.0) and pair.a.shape == (16, 16, 10)
    assert pair.a.sum() == 8 * 8 * 5 and pair.b.sum() == pair.a.sum()
    with pytest.raises(InputError, match="a.nii.gz: mask is not binary"):
        load_pair(path_a, path_b)  # a label map taken whole would mix two organs


def test_load_pair_rejects_mismatches(tmp_path):
    path_a, _ = labelled_pair(tmp_path)
    other = write(tmp_path / "c.nii.gz", np.zeros((16, 16, 10)), spacing=(1.0, 1.0, 1.0))
    with pytest.raises(InputError, match="not on the same grid: spacing"):
        load_pair(path_a, other, label=2)
    with pytest.raises(InputError, match="nothing.nii.gz: file not found"):
        load_pair(path_a, tmp_path / "nothing.nii.gz")


def test_compare_gives_delta_and_flags(tmp_path, fake_reference):
    result = compare(*labelled_pair(tmp_path), label=2, tools=["simpleitk", "miseval"])
    assert result.outcomes["simpleitk"].values["HD"] == pytest.approx(2.0)
    text = format_comparison(result)
    assert "2 (-2)" in text  # SimpleITK HD 2 mm against the stand-in reference's 4 mm
    assert "2* (-2)" in text  # MISeval: 2 voxels, flagged as ignoring the voxel size
    assert "ignores the voxel size" in text


def test_compare_without_reference_degrades_clearly(tmp_path, monkeypatch):
    module = types.ModuleType("reference")  # no compute_metrics in it yet
    monkeypatch.setitem(sys.modules, "reference", module)
    result = compare(*labelled_pair(tmp_path), label=2, tools=["simpleitk"])
    assert result.reference is None
    assert "reference.compute_metrics is not available" in format_comparison(result)


def test_compare_lists_unavailable_tools(tmp_path, monkeypatch, capsys, fake_reference):
    monkeypatch.delenv("ANIMA_SEG_PERF_ANALYZER", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("adapters.base.BUILT_TOOLS_DIR", tmp_path / "no-tools-built")
    path_a, path_b = labelled_pair(tmp_path)
    assert (
        main(["compare", str(path_a), str(path_b), "--label", "2", "--tools", "simpleitk", "anima"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "SimpleITK" in printed and "anima: unavailable" in printed
    with pytest.raises(SystemExit) as stopped:
        main(["compare", str(path_a), str(path_b), "--tools", "nosuchtool"])
    assert stopped.value.code == 2 and "invalid choice: 'nosuchtool'" in capsys.readouterr().err
