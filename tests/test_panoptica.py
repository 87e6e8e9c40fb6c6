"""panoptica, scored in its home environment (`make env-panoptica`): the adapter against a
direct call of the tool, shapes with known answers, and what its names really compute,
checked against scipy distance transforms and the reference.

The tests that run the tool skip, with the reason, where the environment is not built.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import ndimage
from test_adapters import directed_distances, require

import adapters
from adapters import REGISTRY, CallSettings, invoke
from adapters.environments import ENVIRONMENTS
from reference import compute_metrics
from reference.analytic import ball_mask

HOME = ENVIRONMENTS["panoptica"]


def unequal_balls(spacing):
    """Radius 8 and 5 mm, centres 2 mm apart per axis: boundaries of different sizes, so a
    mean of the two directed means and a pooled mean differ (on equal, offset balls the two
    directions are mirror images and every such pair of definitions agrees)."""
    shape = tuple(int(round(32 / s)) for s in spacing)
    return ball_mask(shape, spacing, 8.0, (15, 15, 15)), ball_mask(shape, spacing, 5.0, (17,) * 3)


def boundary(mask):
    """The mask minus its face-connected erosion."""
    structure = ndimage.generate_binary_structure(mask.ndim, 1)
    return mask & ~ndimage.binary_erosion(mask, structure)


# --- without the environment -----------------------------------------------------------------


def test_registered_as_a_later_tool_that_runs_in_its_home_environment():
    assert "panoptica" in adapters.LATER_TOOLS and "panoptica" not in adapters.PAPER_TOOLS
    adapter = REGISTRY["panoptica"]
    assert adapter.runs_in("study") == "panoptica" and adapter.runs_in("paper") == "paper"
    assert "ASSD" not in adapter.metrics and "MASD" in adapter.metrics  # its "ASSD" is MASD
    assert adapter.fixed_percentile == 95


def test_asked_from_the_study_it_answers_for_its_home_environment(monkeypatch, tmp_path):
    """The study's .venv has no panoptica: availability and version are the home
    environment's, and an unbuilt one says how to build it."""
    monkeypatch.setattr("adapters.environments.ENVIRONMENTS_DIR", tmp_path)
    adapter = REGISTRY["panoptica"]
    assert "make env-panoptica" in adapter.unavailable()
    assert adapter.version() == "not installed"
    a = np.zeros((8, 8, 8), bool)
    a[2:5, 2:5, 2:5] = True
    outcome = invoke("panoptica", a, a, (1, 1, 1))
    assert outcome.unavailable == adapter.unavailable()


def test_a_worker_of_another_environment_answers_for_itself(monkeypatch):
    """In the paper's environment (a Python under .envs/ that is not its home) panoptica is
    not installed, and the answer must be that Python's own, not its home environment's."""
    from adapters import environments

    monkeypatch.setattr(sys, "prefix", str(environments.ENVIRONMENTS_DIR / "paper"))
    reason = REGISTRY["panoptica"].unavailable()  # the study's .venv stands in for paper's
    assert reason == "Python package 'panoptica' is not installed (make env-panoptica)"
    assert REGISTRY["panoptica"].version() == "not installed"


# --- in the home environment -----------------------------------------------------------------

DIRECT = """
import json, sys
import numpy as np
from panoptica.metrics import Metric

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
spacing = tuple(json.loads(sys.argv[3]))
out = {name: Metric[name](a, b, voxelspacing=spacing) for name in ("HD", "HD95", "ASSD", "DSC")}
out["NSD"] = Metric.NSD(a, b, voxelspacing=spacing, threshold=2.0)
json.dump({k: float(v) for k, v in out.items()}, sys.stdout)
"""


def test_the_adapter_equals_a_direct_call_in_the_home_environment(tmp_path):
    """An asymmetric pair at anisotropic voxels, so a spacing handed over in another axis
    order would not give the same numbers. (Every metric of panoptica's is symmetric in its
    two arguments, so no check can tell which mask went where.)"""
    require("panoptica")
    spacing = (0.5, 0.75, 2.0)  # exact in the float32 of a NIfTI header, which the worker reads
    shape = (64, 42, 16)
    a = ball_mask(shape, spacing, 9.0, (15, 15, 15))
    b = ball_mask(shape, spacing, 7.0, (18, 14, 17))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    done = subprocess.run(
        [HOME.python, "-c", DIRECT, str(tmp_path / "a.npy"), str(tmp_path / "b.npy")]
        + [json.dumps(spacing)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    direct = json.loads(done.stdout)
    outcome = invoke("panoptica", a, b, spacing, settings=CallSettings(tau=2.0))
    assert outcome.error is None and not outcome.failed, (outcome.error, outcome.failed)
    direct["MASD"] = direct.pop("ASSD")
    assert outcome.values == direct  # the same arithmetic on the same arrays: bit for bit


def test_spacing_goes_along_the_array_axes():
    """Cubes 8 voxels wide, offset by 2 voxels along one axis at a time, 2.5 mm along that
    axis and 1 mm along the others: HD = HD95 = 5 mm whichever axis it is."""
    require("panoptica")
    a = np.zeros((16, 16, 16), bool)
    a[4:12, 4:12, 4:12] = True
    for axis in range(3):
        spacing = tuple(2.5 if i == axis else 1.0 for i in range(3))
        b = np.roll(a, 2, axis=axis)
        values = invoke("panoptica", a, b, spacing, metrics=("HD", "HD95", "DSC")).values
        assert values == {"HD": 5.0, "HD95": 5.0, "DSC": 0.75}, axis


def test_its_assd_is_the_mean_of_the_directed_means_and_its_nsd_the_mean_of_fractions():
    """panoptica's "ASSD" is the study's MASD (mean of the two directed means), not the
    pooled mean; its NSD averages the two directed fractions within tau instead of counting
    both boundaries together. Checked against scipy on the tool's own boundaries, and
    against the reference's MASD, ASSD and NSD."""
    require("panoptica")
    tau = 2.0
    for spacing in ((1.0, 1.0, 1.0), (0.5, 0.5, 2.0)):
        a, b = unequal_balls(spacing)
        values = invoke("panoptica", a, b, spacing, settings=CallSettings(tau=tau)).values
        d_ab, d_ba = directed_distances(a, b, spacing), directed_distances(b, a, spacing)
        pooled = np.concatenate([d_ab, d_ba])
        assert d_ab.size > 2 * d_ba.size  # boundaries of very different sizes
        assert values["MASD"] == pytest.approx((d_ab.mean() + d_ba.mean()) / 2, rel=1e-12)
        assert abs(values["MASD"] - pooled.mean()) > 0.2
        mean_of_fractions = ((d_ab <= tau).mean() + (d_ba <= tau).mean()) / 2
        assert values["NSD"] == pytest.approx(mean_of_fractions, rel=1e-12)
        assert abs(values["NSD"] - (pooled <= tau).mean()) > 0.05
        assert values["HD95"] == pytest.approx(np.percentile(pooled, 95), rel=1e-12)
        assert values["HD"] == pytest.approx(pooled.max(), rel=1e-12)
        reference = compute_metrics(a, b, spacing, metrics=("MASD", "ASSD", "NSD"), tau=tau)
        assert abs(values["MASD"] - reference["MASD"]) < 0.05  # the same definition
        assert reference["ASSD"] - values["MASD"] > 0.2
        assert values["NSD"] - reference["NSD"] > 0.05


def to_phantom(mask, spacing):
    """95th percentile of the distances from the mask's boundary to the point one voxel
    before the array's first corner, index (-1, 0, 0): where the distance transform puts the
    nearest boundary voxel of an empty mask."""
    offsets = (np.argwhere(boundary(mask)) - np.array([-1, 0, 0])) * np.asarray(spacing)
    return np.percentile(np.linalg.norm(offsets, axis=1), 95)


def test_empty_masks():
    """One mask empty: HD fails (the max of no distances), HD95 is a number, the distance
    to a point just outside the array's first corner (the distance transform of a boundary
    that does not exist), so it grows with the field of view; MASD and NSD are NaN with
    numpy's warnings; DSC 0. Both empty: HD95 fails too, and DSC is still 0."""
    require("panoptica")
    spacing = (1.0, 1.0, 1.0)
    a, _ = unequal_balls(spacing)
    empty = np.zeros_like(a)
    for first, second in ((empty, a), (a, empty)):
        outcome = invoke("panoptica", first, second, spacing)
        assert set(outcome.failed) == {"HD"} and "zero-size array" in outcome.failed["HD"]
        assert math.isnan(outcome.values["MASD"]) and math.isnan(outcome.values["NSD"])
        assert outcome.values["DSC"] == 0.0 and "Mean of empty slice." in outcome.warnings
        assert outcome.values["HD95"] == pytest.approx(to_phantom(a, spacing), rel=1e-12)
    padded = np.pad(a, ((8, 0), (0, 0), (0, 0)))
    further = invoke("panoptica", padded, np.zeros_like(padded), spacing, metrics=("HD95",))
    assert further.values["HD95"] == pytest.approx(to_phantom(padded, spacing), rel=1e-12)
    assert further.values["HD95"] > outcome.values["HD95"] + 4  # the same ball, 8 mm further
    both = invoke("panoptica", empty, empty, spacing)
    assert set(both.failed) == {"HD", "HD95"} and both.values["DSC"] == 0.0
