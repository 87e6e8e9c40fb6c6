"""Every tool sees the masks as the study wrote them: each voxel size on its own axis.

The study's files are written by `maskio.write_mask` (array axis n = physical axis n). A tool
run through its adapter on the arrays must give what the tool gives when called directly on
those files; on an anisotropic, asymmetric pair a reversal of the axes changes every distance,
which `test_the_pair_tells_reversed_axes_apart` proves for the pair used here.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

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
    x, y, z = np.meshgrid(
        *(np.arange(n) * s for n, s in zip((60, 60, 16), SPACING, strict=True)), indexing="ij"
    )
    a = (x - 14) ** 2 + (y - 15) ** 2 + (z - 15) ** 2 < 10**2
    b = (x - 16) ** 2 / 1.2 + (y - 14) ** 2 + (z - 16) ** 2 < 9**2
    return a, b


@pytest.fixture(scope="module")
def study_files(tmp_path_factory):
    """The pair as the voxelizer writes it, and the arrays read back as scoring reads them."""
    folder = tmp_path_factory.mktemp("orientation")
    a, b = anisotropic_pair()
    paths = (
        write_mask(folder / "a.nii.gz", a, SPACING, (10.0, -4.0, 30.0)),
        write_mask(folder / "b.nii.gz", b, SPACING, (10.0, -4.0, 30.0)),
    )
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
    return {"HD": distances.GetHausdorffDistance(), "MASD": distances.GetAverageHausdorffDistance()}


def plastimatch_direct(path_a, path_b) -> dict[str, float]:
    """`plastimatch dice --hausdorff a b`, its "(boundary)" lines read by hand."""
    binary = REGISTRY["plastimatch"].find_binary()
    said = subprocess.run(
        [binary, "dice", "--hausdorff", str(path_a), str(path_b)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    lines = {
        "HD": "Hausdorff distance (boundary)",
        "HD95": "Percent (0.95) Hausdorff distance (boundary)",
        "MASD": "Avg average Hausdorff distance (boundary)",
    }
    return {
        key: float(re.search(rf"^{re.escape(line)}\s*[:=]\s*(\S+)", said, re.M).group(1))
        for key, line in lines.items()
    }


def _run_program(name: str, arguments: list[str]) -> str:
    binary = REGISTRY[name].find_binary()
    return subprocess.run(
        [binary, *arguments], capture_output=True, text=True, check=True, timeout=120
    ).stdout


def anima_direct(path_a, path_b) -> dict[str, float]:
    """`animaSegPerfAnalyzer -r a -i b -o base -d -s -X`, `base_global.xml` read by hand."""
    names = {
        "HD": "HausdorffDistance",
        "MASD": "ContourMeanDistance",
        "ASSD": "SurfaceDistance",
        "DSC": "Dice",
    }
    with tempfile.TemporaryDirectory() as folder:
        _run_program(
            "anima",
            ["-r", str(path_a), "-i", str(path_b), "-o", f"{folder}/direct", "-d", "-s", "-X"],
        )
        root = ElementTree.parse(Path(folder) / "direct_global.xml").getroot()
    measured = {node.get("name"): float(node.text) for node in root.iter("measure")}
    return {key: measured[name] for key, name in names.items()}


def evaluatesegmentation_direct(path_a, path_b) -> dict[str, float]:
    """`EvaluateSegmentation a b -use HDRFDST,AVGDIST,DICE -unit millimeter`, its printed
    summary lines read by hand. HDp is left out: the program draws a random sample for it,
    seeded by the clock (docs/tools.md)."""
    said = _run_program(
        "evaluatesegmentation",
        [str(path_a), str(path_b), "-use", "HDRFDST,AVGDIST,DICE", "-unit", "millimeter"],
    )
    symbols = {"HD": "HDRFDST", "MASD": "AVGDIST", "DSC": "DICE"}
    return {
        key: float(re.search(rf"^{symbol}\s*=\s*(\S+)", said, re.M).group(1))
        for key, symbol in symbols.items()
    }


def metricsreloaded_direct(path_a, path_b) -> dict[str, float]:
    """`BinaryPairwiseMeasures(pred, ref, pixdim=...)` on the files' arrays, b as prediction."""
    from MetricsReloaded.metrics.pairwise_measures import BinaryPairwiseMeasures

    (ref, spacing, _), (pred, _, _) = read_mask(path_a), read_mask(path_b)
    names = {
        "HD": "hd",
        "HD95": "hd_perc",
        "MASD": "masd",
        "ASSD": "assd",
        "NSD": "nsd",
        "DSC": "dsc",
    }
    measured = BinaryPairwiseMeasures(
        pred.astype(np.uint8),
        ref.astype(np.uint8),
        measures=list(names.values()),
        pixdim=list(spacing),
        dict_args={"hd_perc": 95, "nsd": 2.0},
    ).to_dict_meas()
    return {key: float(measured[name]) for key, name in names.items()}


def sitk_arrays(path_a, path_b):
    """The files as a SimpleITK user reads them: (z, y, x) arrays, spacing in numpy order."""
    import SimpleITK as sitk

    images = [sitk.ReadImage(str(path), sitk.sitkUInt8) for path in (path_a, path_b)]
    arrays = [sitk.GetArrayFromImage(image) for image in images]
    return *arrays, images[0].GetSpacing()[::-1]


def mikan_direct(path_a, path_b) -> dict[str, float]:
    """The README's call: `mikan.Evaluator(gt, pred)` on the images SimpleITK reads."""
    import mikan
    import SimpleITK as sitk

    gt, pred = (sitk.ReadImage(str(path), sitk.sitkUInt8) for path in (path_a, path_b))
    names = {"HD": "hd", "HD95": "hd95", "MASD": "masd", "ASSD": "assd", "DSC": "dice"}
    values = mikan.Evaluator(gt, pred).labels(1).metrics(list(names.values()))
    return dict(zip(names, values, strict=True))


def grandchallenge_direct(path_a, path_b) -> dict[str, float]:
    """`grand_challenge_metrics.stats` on the arrays as read, `voxelspacing` to match."""
    from grand_challenge_metrics import stats

    a, b, spacing = sitk_arrays(path_a, path_b)
    confusion = stats.calculate_confusion_matrix(a, b, labels=[0, 1])
    return {
        "HD": stats.hausdorff_distance(a, b, voxelspacing=spacing),
        "HD95": stats.percentile_hausdorff_distance(a, b, 0.95, voxelspacing=spacing),
        "MASD": stats.mean_contour_distance(a, b, voxelspacing=spacing),
        "DSC": stats.dice_from_confusion_matrix(confusion)[1],
    }


def segauge_direct(path_a, path_b) -> dict[str, float]:
    """Its README's `segauge.evaluate([segauge.Case(id, pred=..., gt=...)])` on the files, which
    it reads with nibabel, the spacing from the ground truth's header; tau as `nsd_tolerance`."""
    import segauge

    case = segauge.Case("pair", pred=str(path_b), gt=str(path_a))
    row = segauge.evaluate([case], nsd_tolerance=2.0, detection=False).rows[0]
    names = {"HD": "hd", "HD95": "hd95", "MASD": "masd", "ASSD": "assd", "NSD": "nsd"}
    return {key: row[name] for key, name in names.items()} | {"DSC": row["dice"]}


def skimage_direct(path_a, path_b) -> dict[str, float]:
    """`skimage.metrics.hausdorff_distance` on the arrays as read (it takes no spacing)."""
    from skimage.metrics import hausdorff_distance

    a, b, _ = sitk_arrays(path_a, path_b)
    return {"HD": hausdorff_distance(a, b)}


def torchmetrics_direct(path_a, path_b) -> dict[str, float]:
    """`dice_score` on index tensors of the arrays as read (its HD is 2D only)."""
    import torch
    from torchmetrics.functional.segmentation import dice_score

    a, b, _ = sitk_arrays(path_a, path_b)
    target, preds = (torch.from_numpy(m[np.newaxis].astype(np.int64)) for m in (a, b))
    dice = dice_score(preds, target, num_classes=2, include_background=False, input_format="index")
    return {"DSC": dice.item()}


DIRECT_CALLS = {
    "simpleitk": simpleitk_direct,
    "plastimatch": plastimatch_direct,
    "anima": anima_direct,
    "evaluatesegmentation": evaluatesegmentation_direct,
    "metricsreloaded": metricsreloaded_direct,
    "mikan": mikan_direct,
    "grandchallenge": grandchallenge_direct,
    "segauge": segauge_direct,
    "skimage": skimage_direct,
    "torchmetrics": torchmetrics_direct,
}
"""Each tool called the way the study called it (docs/tools.md), on the study's own files."""


@pytest.mark.parametrize("name", sorted(DIRECT_CALLS))
def test_adapter_equals_a_direct_call_on_the_study_files(name, study_files):
    adapter = require(name)
    paths, a, b, spacing = study_files
    direct = DIRECT_CALLS[name](*paths)
    through_adapter = adapter.compute(a, b, spacing, metrics=sorted(direct))
    assert through_adapter == pytest.approx(direct, rel=1e-9, abs=1e-9)


PROGRAM_TOOLS = sorted(
    name for name, adapter in REGISTRY.items() if isinstance(adapter, ProgramAdapter)
)


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


REVERSAL_SHOWS_IN = {"plastimatch": "MASD", "evaluatesegmentation": "MASD", "anima": "ASSD"}
"""A metric of each program tool that moves when its files hold the axes reversed."""


@pytest.mark.parametrize("name", sorted(REVERSAL_SHOWS_IN))
def test_the_pair_tells_reversed_axes_apart(name, study_files, tmp_path):
    """The checks above could not fail if reversing the axes left the tool's answer unchanged:
    on this pair each program's answer moves when the files are written the former adapters'
    way (the (x, y, z) array handed to SimpleITK as if it were (z, y, x), spacing reversed).
    An exact tool would not move (the geometry is only transposed); these do, through their
    boundary extraction and scan order."""
    import SimpleITK as sitk

    require(name)
    paths, a, b, spacing = study_files
    reversed_paths = []
    for label, mask in (("a", a), ("b", b)):
        image = sitk.GetImageFromArray(np.ascontiguousarray(mask, dtype=np.uint8))
        image.SetSpacing(tuple(reversed(spacing)))
        sitk.WriteImage(image, str(tmp_path / f"{label}.nii.gz"))
        reversed_paths.append(tmp_path / f"{label}.nii.gz")
    metric = REVERSAL_SHOWS_IN[name]
    right = DIRECT_CALLS[name](*paths)[metric]
    wrong = DIRECT_CALLS[name](*reversed_paths)[metric]
    assert abs(right - wrong) > 1e-5


def test_files_carry_each_voxel_size_on_its_axis(study_files):
    import SimpleITK as sitk

    paths, a, _, _ = study_files
    image = sitk.ReadImage(str(paths[0]))
    assert image.GetSpacing() == SPACING and image.GetSize() == a.shape
