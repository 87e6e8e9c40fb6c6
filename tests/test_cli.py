"""Every command that reads a user's mask files, run as a user runs it, on every kind of bad
input: a one-line `error: ...` naming the file or argument on stderr, exit status 2, and no
traceback. Empty masks are not an error: they get the documented scores.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import SimpleITK as sitk

from maskio import write_mask

SPACING = (1.0, 1.0, 2.0)
COMMANDS = {
    "reference": (["-m", "reference"], []),
    "compare": (["-m", "adapters", "compare"], ["--tools", "simpleitk"]),
}


def run(command: str, *arguments) -> subprocess.CompletedProcess:
    head, tail = COMMANDS[command]
    return subprocess.run(
        [sys.executable, *head, *map(str, arguments), *tail],
        capture_output=True,
        text=True,
        timeout=300,
    )


def box(shape=(16, 14, 8), shift=0, value=1) -> np.ndarray:
    mask = np.zeros(shape, dtype=np.uint8)
    mask[3 + shift : 10 + shift, 3:10, 2:6] = value
    return mask


def write_image(path, array, spacing=SPACING, origin=(0.0, 0.0, 0.0), direction=None):
    """Any image (labels, other grids) in the project's axis convention."""
    image = sitk.GetImageFromArray(np.ascontiguousarray(array.T))
    image.SetSpacing(spacing[: array.ndim])
    image.SetOrigin(origin[: array.ndim])
    if direction is not None:
        image.SetDirection(direction)
    sitk.WriteImage(image, str(path))
    return path


@pytest.fixture
def good_a(tmp_path):
    return write_mask(tmp_path / "a.nii.gz", box(), SPACING)


def bad_b(kind: str, folder):
    """A second file that is wrong in one way, and a text its error must contain."""
    path = folder / "b.nii.gz"
    if kind == "missing":
        return folder / "nowhere.nii.gz", "nowhere.nii.gz: file not found"
    if kind == "not an image":
        path.write_text("these are not voxels\n")
        return path, "b.nii.gz: not an image file"
    if kind == "folder":
        (folder / "dir.nii.gz").mkdir()
        return folder / "dir.nii.gz", "dir.nii.gz: not a file"
    if kind == "shape":
        return write_image(path, box(shape=(16, 14, 9))), "not on the same grid: size"
    if kind == "spacing":
        return write_image(path, box(), spacing=(2.0, 2.0, 2.0)), "same grid: spacing"
    if kind == "origin":
        return write_image(path, box(), origin=(7.0, 0.0, 0.0)), "same grid: origin"
    if kind == "direction":
        flipped = (-1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0)
        return write_image(path, box(), direction=flipped), "same grid: direction"
    if kind == "labels":
        return write_image(path, box(value=3)), "b.nii.gz: mask is not binary (it holds [3]"
    if kind == "fractional":
        return (
            write_image(path, box().astype(np.float32) * 0.5),
            "b.nii.gz: mask holds fractional values ([0.5]",
        )
    if kind == "2D":
        return write_image(path, box()[:, :, 3]), "b.nii.gz is 2D"
    raise ValueError(kind)


BAD_FILES = [
    "missing",
    "not an image",
    "folder",
    "shape",
    "spacing",
    "origin",
    "direction",
    "labels",
    "fractional",
    "2D",
]


def assert_user_error(done: subprocess.CompletedProcess, *expected: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    for text in expected:
        assert text in last, last


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", BAD_FILES)
def test_a_bad_second_file_is_named(command, kind, good_a, tmp_path):
    path_b, message = bad_b(kind, tmp_path)
    done = run(command, good_a, path_b)
    assert_user_error(done, "error: ", message)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_label_that_does_not_occur_is_named(command, tmp_path):
    path_a = write_image(tmp_path / "a.nrrd", box(value=2))
    path_b = write_image(tmp_path / "b.nrrd", box(shift=1, value=3))
    done = run(command, path_a, path_b, "--label", 2)
    assert_user_error(done, "b.nrrd: label 2 does not occur (labels present: [3])")


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--percentile", "0"], "argument --percentile: 0 is not in (0, 100]"),
        (["--percentile", "101"], "argument --percentile: 101 is not in (0, 100]"),
        (["--tau", "-1"], "argument --tau: -1 is not positive"),
        (["--tau", "nan"], "argument --tau: 'nan' is not a finite number"),
        (["--label", "0"], "argument --label: '0' is not a label number"),
    ],
)
def test_bad_arguments_are_named(command, arguments, message, good_a):
    assert_user_error(run(command, good_a, good_a, *arguments), message)


def test_a_label_map_gives_one_organ_with_label(tmp_path):
    """Two labels in each file: --label picks one organ; the reference scores that organ."""
    labels_a, labels_b = box(value=2), box(shift=2, value=2)
    labels_a[12:15, 11:13, 0:2] = labels_b[12:15, 11:13, 0:2] = 5
    path_a = write_image(tmp_path / "a.nii.gz", labels_a)
    path_b = write_image(tmp_path / "b.nii.gz", labels_b)
    done = run("reference", path_a, path_b, "--label", 2, "--json")
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)["scores"]
    assert scores["HD"] == pytest.approx(2.0, abs=1e-9)  # the boxes 2 voxels apart along x
    assert scores["DSC"] == pytest.approx(5 / 7)


def test_empty_masks_give_the_documented_scores(tmp_path, good_a):
    empty = write_mask(tmp_path / "empty.nii.gz", np.zeros((16, 14, 8), bool), SPACING)
    one = run("reference", good_a, empty, "--json")
    assert one.returncode == 0 and "mask b is empty" in one.stderr
    scores = json.loads(one.stdout.replace("Infinity", "1e999"))["scores"]
    assert scores["HD"] == float("inf") and scores["NSD"] == scores["DSC"] == 0.0
    both = run("reference", empty, empty, "--json")
    assert both.returncode == 0 and "both masks are empty" in both.stderr
    assert all(np.isnan(v) for v in json.loads(both.stdout)["scores"].values())
    compared = run("compare", good_a, empty)
    assert compared.returncode == 0, compared.stderr
    assert "inf" in compared.stdout


def test_the_reference_prints_what_the_library_computes(tmp_path):
    from reference import compute_metrics

    a, b = box(), box(shift=2)
    paths = [write_mask(tmp_path / f"{n}.nii.gz", m, SPACING) for n, m in (("a", a), ("b", b))]
    done = run("reference", *paths, "--no-bounds", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == pytest.approx(compute_metrics(a, b, SPACING), abs=1e-12)
    lines = run("reference", *paths).stdout.splitlines()  # with the brackets by default
    assert [line.split()[0] for line in lines] == list(json.loads(done.stdout))
    assert all("width" in line for line in lines)


def test_hanseg_listing_errors_are_named(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "study.dataset.realdata",
            "hanseg",
            tmp_path / "obs1",
            tmp_path / "obs2",
            tmp_path / "pairs.csv",
        ],
        capture_output=True,
        text=True,
    )
    assert_user_error(done, "obs1: observer folder not found")


def test_the_tool_list_names_every_registered_tool():
    from adapters import REGISTRY

    done = subprocess.run(
        [sys.executable, "-m", "adapters", "list"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert set(rows) == set(REGISTRY)
    assert all(("version" in row) != ("unavailable:" in row) for row in rows.values())


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["probe", "--out", "x", "--tools", "nosuchtool"], "invalid choice: 'nosuchtool'"),
        (["timing", "--out", "x", "--pairs", "missing.csv"], "error: missing.csv: pairs file not"),
        (["timing", "--out", "x", "--pairs", "p.csv", "--repeats", "0"], "'0' is not a whole"),
    ],
)
def test_study_commands_name_bad_arguments(arguments, message, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "study", *arguments], capture_output=True, text=True, cwd=tmp_path
    )
    assert_user_error(done, message)
