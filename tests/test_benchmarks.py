"""Smoke tests of the benchmark scripts: each runs end to end on tiny inputs (--quick).

The scripts are run as programs, the way users run them; the cross-check's JSON output is
checked against facts that hold whatever the reference's speed: both packages count DSC on the
same voxels, the tessellated spheres agree with their closed form, and the flag rule follows
its thresholds.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(name: str, *arguments: str) -> str:
    finished = subprocess.run([sys.executable, str(BENCHMARKS / name), *arguments],
                              capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished.stdout


def load_crosscheck():
    spec = importlib.util.spec_from_file_location("crosscheck_meshmetrics",
                                                  BENCHMARKS / "crosscheck_meshmetrics.py")
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve their annotations through sys.modules while the class is built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def crosscheck_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("crosscheck") / "crosscheck.json"
    printed = run_script("crosscheck_meshmetrics.py", "--quick", "--json", str(out))
    return printed, json.loads(out.read_text())


def test_crosscheck_prints_every_section(crosscheck_run):
    printed, _ = crosscheck_run
    for heading in ("== Analytic spheres", "== Differences reference - pymeshmetrics",
                    "== Summary of differences", "== Empty masks", "flagged:"):
        assert heading in printed


def test_crosscheck_compares_the_same_voxels(crosscheck_run):
    _, saved = crosscheck_run
    sources = {item["source"] for item in saved["comparisons"]}
    assert sources == {"analytic-mask", "analytic-surface", "synthetic"}
    for item in saved["comparisons"]:
        assert set(item["reference"]) == set(item["meshmetrics"]) == {
            "HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC"}
        if item["source"] != "analytic-surface":
            # DSC is a voxel count in both packages: any difference means different inputs.
            assert item["reference"]["DSC"] == pytest.approx(item["meshmetrics"]["DSC"],
                                                             abs=1e-12)


def test_crosscheck_surfaces_match_the_closed_form(crosscheck_run):
    _, saved = crosscheck_run
    surfaces = [c for c in saved["comparisons"] if c["source"] == "analytic-surface"]
    assert len(surfaces) == 2
    for item in surfaces:
        for metric in ("HD", "HD95", "MASD", "ASSD"):
            # 40-step tessellation: the polygon lies within ~0.04 mm of the sphere.
            for tool in ("reference", "meshmetrics"):
                assert item[tool][metric] == pytest.approx(item["analytic"][metric], abs=0.05)


def test_crosscheck_mesh_limit_bounds_centroid_hd(crosscheck_run):
    """Centroids are surface points, so a centroid-only HD can never exceed the true HD."""
    _, saved = crosscheck_run
    masks = [c for c in saved["comparisons"] if c["source"] == "analytic-mask"]
    assert masks
    for item in masks:
        assert item["meshmetrics"]["HD"] <= item["mesh_limit"]["HD"] + 1e-6


def test_crosscheck_flag_rule():
    crosscheck = load_crosscheck()
    assert crosscheck.is_flagged("HD", 0.051) and not crosscheck.is_flagged("HD", -0.05)
    assert crosscheck.is_flagged("NSD", -0.0051) and not crosscheck.is_flagged("DSC", 0.005)
    assert crosscheck.is_flagged("BIoU", math.nan)


def test_crosscheck_empty_masks_reported(crosscheck_run):
    _, saved = crosscheck_run
    rows = {(row["case"], row["tool"]): row for row in saved["empty_masks"]}
    assert math.isinf(rows["a empty", "reference"]["HD"])
    assert math.isnan(rows["both empty", "reference"]["HD"])
    assert rows["both empty", "reference"]["warned"]


def test_reference_speed_quick_run_prints_targets():
    printed = run_script("reference_speed.py", "--quick")
    for heading in ("== Median seconds per pair", "== Medians by category", "== Large pair",
                    "== Analytic accuracy", "== Targets"):
        assert heading in printed
    targets = printed.split("== Targets")[1]
    assert targets.count("MET]") == 3  # "[MET]" or "[NOT MET]", one per target
    assert "peak memory" in targets and "GB" in targets
    assert "like for like" in targets and "refnoB/dm" in printed
    timed = printed.split("== Median seconds per pair")[1].split("==")[0]
    assert "Cochlea_L" in timed and "0.5x0.5x2" in timed and "1x1x1" in timed
