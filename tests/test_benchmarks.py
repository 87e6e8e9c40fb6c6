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
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from adapters import LATER_TOOLS, REGISTRY
from maskio import write_mask
from study.pipeline.config import load_config

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(name: str, *arguments: str) -> str:
    """What the script prints (without its last line, naming the record); it must also have
    recorded all of it in its --record file."""
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "record.md"
        finished = subprocess.run(
            [sys.executable, str(BENCHMARKS / name), *arguments, "--record", str(record)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert finished.returncode == 0, finished.stderr[-3000:]
        printed, kept = finished.stdout, record.read_text()
    assert kept.startswith(f"# {name}\n") and "- command: `python " in kept
    printed, last = printed.rstrip("\n").rsplit("\n", 1)
    assert last == f"recorded in {record}" and printed.strip() in kept
    return printed + "\n"


def load_benchmark(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
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
    for heading in (
        "== Analytic spheres",
        "== Differences reference - pymeshmetrics",
        "== Summary of differences",
        "== Empty masks",
        "flagged:",
    ):
        assert heading in printed


def test_crosscheck_compares_the_same_voxels(crosscheck_run):
    _, saved = crosscheck_run
    sources = {item["source"] for item in saved["comparisons"]}
    assert sources == {"analytic-mask", "analytic-surface", "synthetic"}
    for item in saved["comparisons"]:
        assert (
            set(item["reference"])
            == set(item["meshmetrics"])
            == {"HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC"}
        )
        if item["source"] != "analytic-surface":
            # DSC is a voxel count in both packages: any difference means different inputs.
            assert item["reference"]["DSC"] == pytest.approx(item["meshmetrics"]["DSC"], abs=1e-12)


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
    crosscheck = load_benchmark("crosscheck_meshmetrics")
    assert crosscheck.is_flagged("HD", 0.051) and not crosscheck.is_flagged("HD", -0.05)
    assert crosscheck.is_flagged("NSD", -0.0051) and not crosscheck.is_flagged("DSC", 0.005)
    assert crosscheck.is_flagged("BIoU", math.nan)


def test_crosscheck_empty_masks_reported(crosscheck_run):
    _, saved = crosscheck_run
    rows = {(row["case"], row["tool"]): row for row in saved["empty_masks"]}
    assert math.isinf(rows["a empty", "reference"]["HD"])
    assert math.isnan(rows["both empty", "reference"]["HD"])
    assert rows["both empty", "reference"]["warned"]


@pytest.fixture(scope="module")
def quick_speed_run(tmp_path_factory) -> str:
    """One quick run of the reference's speed benchmark, with two labels of mask files and one
    pair of a study's pairs table (drawn from two): what the tests below read (one run, about
    a minute, instead of three)."""
    return run_script(
        "reference_speed.py",
        "--quick",
        "--masks",
        *map(str, write_label_maps(tmp_path_factory.mktemp("masks"))),
        "--label",
        "1",
        "2",
        "--pairs",
        str(write_pairs_table(tmp_path_factory.mktemp("pairs"))),
        "--sample",
        "1",
    )


def test_reference_speed_quick_run_prints_targets(quick_speed_run):
    printed = quick_speed_run
    for heading in (
        "== Median seconds per pair",
        "== Medians by category",
        "== Large pair",
        "== Analytic accuracy",
        "== Bracket widths",
        "== Targets",
    ):
        assert heading in printed
    brackets = printed.split("== Bracket widths")[1].split("==")[0]
    assert "Cochlea_L" in brackets and "w_HD95" in brackets and "cert/ref" in brackets
    assert "outside" in brackets and "certified" in brackets and "wide" in brackets
    for line in brackets.splitlines()[2:]:  # no certified value outside its bracket
        assert "Cochlea_L" not in line or line.split()[-2] == "-", line
    targets = printed.split("== Targets")[1]
    # "[MET]" or "[NOT MET]": four, and two of the mask files
    assert targets.count("MET]") == 6
    assert "default (certified) call" in targets
    assert "peak memory" in targets and "GB" in targets
    assert "like for like" in targets and "refnoB/dm" in printed
    assert "[for scale]" in targets and "centres/dm" in printed
    assert "[figure] without BIoU, like for like" in targets and "pmm/ref noB" in printed
    assert "[figure] first pair of a spacing and tau" in targets and "ref_cold" in printed
    timed = printed.split("== Median seconds per pair")[1].split("==")[0]
    assert "Cochlea_L" in timed and "0.5x0.5x2" in timed and "1x1x1" in timed
    assert "segauge" in timed and "sg/refnoB" in printed
    assert "[figure] segauge (six metrics, no BIoU)" in targets
    own = printed.split("== segauge minus the reference, per pair")[1].split("==")[0]
    assert "Cochlea_L" in own and "Δsg HD95" in own and "Δsg NSD" in own
    medians = printed.split("== Median |tool - reference| per voxel size")[1].split("==")[0]
    assert all(f"Δ{tool} HD95" in medians for tool in ("dm", "pmm", "sg"))


def write_label_maps(folder: Path) -> tuple[Path, Path]:
    """Two label maps on one (0.8, 0.8, 2) mm grid, written with SimpleITK alone: labels 1
    and 2 are balls, moved by a voxel between the files."""
    import numpy as np
    import SimpleITK as sitk

    from reference.analytic import ball_mask

    shape, spacing = (40, 40, 16), (0.8, 0.8, 2.0)
    paths = []
    for shift in (0.0, 0.8):
        labels = np.zeros(shape, np.uint8)
        labels[ball_mask(shape, spacing, 6.0, (10 + shift, 12, 15))] = 1
        labels[ball_mask(shape, spacing, 4.0, (22, 22 + shift, 15))] = 2
        image = sitk.GetImageFromArray(np.ascontiguousarray(labels.T))  # array axis 0 = x
        image.SetSpacing(spacing)
        paths.append(folder / f"labels_{len(paths)}.nii.gz")
        sitk.WriteImage(image, str(paths[-1]))
    return paths[0], paths[1]


def write_pairs_table(folder: Path) -> Path:
    """A study's pairs.csv of two pairs (mask paths relative to it, as the voxelizer writes
    them): the two balls of `write_label_maps`, each as its own binary pair."""
    import SimpleITK as sitk

    first, second = write_label_maps(folder)
    rows = ["case,oar,category,spacing,path_a,path_b"]
    for label in (1, 2):
        names = []
        for path in (first, second):
            binary = sitk.ReadImage(str(path)) == label
            names.append(f"ball{label}_{path.stem.split('.')[0]}.nii.gz")
            sitk.WriteImage(binary, str(folder / names[-1]))
        rows.append(f"case01,ball{label},small,0.8x0.8x2,{names[0]},{names[1]}")
    table = folder / "pairs.csv"
    table.write_text("\n".join(rows) + "\n")
    return table


def test_reference_speed_times_the_users_mask_files(quick_speed_run):
    """--masks with --label: one timed pair per label, and --pairs: the sampled pair of the
    pairs table, printed apart, with their own target."""
    printed = quick_speed_run
    table = printed.split("== Mask files (--masks, --pairs)")[1].split("==")[0]
    assert "label 1" in table and "label 2" in table and "0.8x0.8x2" in table
    sampled = [name for name in ("case01 ball1", "case01 ball2") if name in table]
    assert len(sampled) == 1, table  # --sample 1 of the table's two
    targets = printed.split("== Targets")[1]
    assert "on the mask files (--masks, --pairs)" in targets and "over 3 pairs" in targets
    assert "first pair of its spacing" in targets
    assert "[figure] mask files: without BIoU, like for like" in targets
    assert "[figure] mask files: segauge (six metrics, no BIoU)" in targets
    own = printed.split("== segauge minus the reference, per pair")[1].split("==")[0]
    assert "label 1" in own and "label 2" in own
    medians = printed.split("== Median |tool - reference| per voxel size")[1].split("==")[0]
    assert "files" in medians
    synthetic = printed.split("== Median seconds per pair")[1].split("==")[0]
    assert "label 1" not in synthetic  # the files stay out of the synthetic medians


def test_reference_speed_names_a_missing_label_before_timing(tmp_path):
    reference, prediction = write_label_maps(tmp_path)
    finished = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "reference_speed.py"),
            "--masks",
            str(reference),
            str(prediction),
            "--label",
            "7",
            "--record",
            str(tmp_path / "record.md"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode != 0
    assert str(reference) in finished.stderr and "label 7 does not occur" in finished.stderr
    assert not (tmp_path / "record.md").exists() and finished.stdout == ""


def test_study_projection_adds_exclusive_jobs_as_wall_time():
    """A rule that ran alone counts as wall time; the rest at the packing they achieved."""
    import pandas as pd

    project = load_benchmark("study_speed").project
    rules = pd.DataFrame(
        {"sum": [10.0, 80.0, 20.0], "scale": [3.0, 2.0, 4.0]},
        index=["time_hd", "score_case", "voxelize_case"],
    )
    # 100 packed job-seconds filled 60 - 10 = 50 s on 2 cores: efficiency 1.
    projected = project(rules, wall=60.0, cores=2, exclusive={"time_hd"})
    assert projected["efficiency"] == pytest.approx(1.0)
    assert projected["wall"] == pytest.approx(10 * 3 + (80 * 2 + 20 * 4) / 2)
    assert projected["core_seconds"] == pytest.approx(30 + 160 + 80)
    # With nothing exclusive, all 110 job-seconds share the 60 s: efficiency 110 / 120.
    shared = project(rules, wall=60.0, cores=2, exclusive=set())
    assert shared["wall"] == pytest.approx(270 / 2 / (110 / 120))


def test_study_dry_run_finds_the_rules_that_run_alone():
    """The parse of Snakemake's own dry-run text: job counts, and time_hd claiming every core."""
    study_speed = load_benchmark("study_speed")
    counts, exclusive = study_speed.dry_run(study_speed.REPO / "workflow/presets/test.yaml", 2)
    assert exclusive == {"time_hd"}
    assert counts["time_hd"] >= 1 and counts["score_case"] >= 1


def test_scoring_projection_scales_calls_by_pairs_and_job_costs_by_jobs():
    scale = load_benchmark("study_speed").scoring_scale
    # 100 job-seconds: 70 in calls, 30 fixed over 30 jobs. Paper: 10x the pairs, 60 jobs.
    assert scale(100.0, 70.0, 30, 60, 10.0) * 100 == pytest.approx(70 * 10 + 1 * 60)
    # A job per case at both sizes: everything grows with the pairs, as before batching.
    assert scale(100.0, 70.0, 30, 300, 10.0) == pytest.approx(10.0)


def test_scan_scoring_projection_scales_each_tools_calls_by_its_measured_ratio():
    """Calls grow by (scan / cropped - 1) of the grid check's own calls, per tool and voxel
    size; the B-empty pair does not count, unchecked tools add nothing, and a voxel size the
    check skipped is named rather than given another's ratio."""
    import pandas as pd

    extra = load_benchmark("study_speed").scan_scoring_extra
    checked = pd.DataFrame(
        [
            ("medpy", "1x1x1", "Glottis", "cropped", 0.1),
            ("medpy", "1x1x1", "Glottis", "scan", 2.0),
            ("medpy", "1x1x1", "Glottis (B empty)", "scan", 50.0),
            ("medpy", "1x1x1", "Glottis (B empty)", "cropped", 0.1),
        ],
        columns=["tool", "spacing", "oar", "grid", "seconds"],
    )
    scores = pd.DataFrame(
        [("medpy", "c1", oar, "1x1x1", 0.5, "ok") for oar in "ab"]
        + [("pymia", "c1", "a", "1x1x1", 9.0, "ok"), ("medpy", "c1", "a", "0.5x0.5x2", 7.0, "ok")],
        columns=["tool", "case", "oar", "spacing", "seconds", "status"],
    )
    seconds, unchecked = extra(scores, checked)
    assert seconds == pytest.approx(1.0 * (20 - 1))
    assert unchecked == ["0.5x0.5x2"]


def test_timed_pairs_follow_the_timing_keys():
    from study.scoring.timing import timed_pair_count

    # The default: two OARs of each of the 4 categories in each of the 3 cases.
    assert timed_pair_count(load_config({})) == 3 * 2 * 4
    assert timed_pair_count(load_config({"timing": {"cases": 1}})) == 1 * 2 * 4
    one_case = {"cases": 1, "pairs_per_category": None}
    assert timed_pair_count(load_config({"timing": one_case})) == 30


def test_scan_grid_benchmark_prints_time_and_memory_per_tool():
    """The scan-grid benchmark end to end, kept small: one OAR at 4 mm, two implementations."""
    printed = run_script(
        "scan_grid.py",
        "--oars",
        "Cochlea_L",
        "--spacing",
        "4",
        "4",
        "4",
        "--repeats",
        "1",
        "--tools",
        "deepmind",
        "reference",
    )
    header, table = printed.split("\n", 1)
    assert "1 pairs (Cochlea_L) at 4x4x4 mm" in header and "scan grid ['76x76x71']" in header
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[2:]}
    assert set(rows) == {"deepmind", "reference"}
    for values in rows.values():
        cropped, scan, _, peak_mb, *errors = map(float, values)
        assert cropped > 0 and scan > 0 and peak_mb > 50 and errors == [0, 0]


def test_worker_overhead_is_measured_and_its_share_computed(tmp_path):
    study_speed = load_benchmark("study_speed")
    a = np.zeros((30, 30, 20), bool)
    a[5:20, 5:20, 5:15] = True
    rows = []
    for i in range(3):
        paths = [
            write_mask(tmp_path / f"{n}{i}.nii.gz", m, (1.0, 1.0, 2.0))
            for n, m in (("a", a), ("b", np.roll(a, i + 1, axis=0)))
        ]
        rows.append({"path_a": str(paths[0]), "path_b": str(paths[1])})
    overhead = study_speed.worker_overhead(pd.DataFrame(rows), ["simpleitk", "anima"], calls=3)
    assert "simpleitk" in overhead.index  # anima only where make tools built it
    row = overhead.loc["simpleitk"]
    assert 0 < row["start"] < 60 and 0 < row["reading"] < 5 and 0 < row["per_call"] < 5
    # 2 starts of 0.5 s and 4 calls 0.1 s beyond their 0.02 s of reading, in 100 s: 1.4 %
    known = pd.DataFrame({"start": [0.5], "per_call": [0.12], "reading": [0.02]}, index=["x"])
    scores = pd.DataFrame(
        {"tool": ["x"] * 4, "case": ["c"] * 4, "oar": list("abcd"), "spacing": ["1"] * 4}
    ).assign(status="ok")
    rules = pd.DataFrame({"sum": [100.0]}, index=["score_case"])
    seconds, share = study_speed.overhead_share(known, scores, rules, jobs=2)
    assert seconds == pytest.approx(1.4) and share == pytest.approx(0.014)


def test_tools_on_balls_prints_each_tool_beside_the_reference_and_the_traps():
    printed = run_script("tools_on_balls.py", "--tools", "skimage", "mikan", "torchmetrics")
    assert printed.count("## Balls of radius 8 mm") == 2
    # scikit-image counts voxels: right at 1 mm, 5.099 voxels at (0.5, 0.5, 2) mm.
    assert "3.742* (+0)" in printed and "5.099* (+0.856)" in printed
    assert "torchmetrics: HD error: ValueError" in printed
    trap = printed.split("## What a user who falls into a trap gets")[1]
    right, wrong = (
        float(value) for value in re.findall(r"HD (\d+\.\d+)", trap.split("\n- torch")[0])
    )
    assert right == pytest.approx(4.2426, abs=1e-4) and abs(wrong - right) > 0.1
    assert "on a 16 x 16 image 3.0000 mm" in trap


def test_projection_counts_only_the_jobs_of_what_the_paper_preset_scores(tmp_path):
    """The default study scores the tools since the paper, the paper preset (tools: paper)
    does not: their jobs are measured but must not grow into the projection."""
    study_speed = load_benchmark("study_speed")
    jobs = {
        "score_case/synthetic/monai/case_01": 4.0,
        "score_case/synthetic/mikan/case_01": 6.0,
        "score_case/synthetic/reference/case_01": 10.0,
        "time_hd/mikan": 3.0,
        "time_hd/monai": 1.0,
        "voxelize_case/synthetic/case_01": 5.0,
    }
    for job, seconds in jobs.items():
        path = tmp_path / "results/benchmarks" / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\n{seconds}\t0:00:{seconds:02.0f}\n")
    rules = study_speed.rule_seconds(tmp_path, left_out=["mikan"])
    assert rules.loc["score_case", ["count", "sum"]].tolist() == [3, 20.0]
    assert rules.loc["score_case", ["kept_count", "kept_sum"]].tolist() == [2, 14.0]
    assert rules.loc["time_hd", ["kept_count", "kept_sum"]].tolist() == [1, 1.0]
    assert rules.loc["voxelize_case", ["kept_count", "kept_sum"]].tolist() == [1, 5.0]

    default = load_config(study_speed.REPO / "config.yaml")
    paper = load_config(study_speed.REPO / "workflow/presets/paper.yaml")
    left_out = study_speed.implementations(default) - study_speed.implementations(paper)
    assert left_out == set(LATER_TOOLS)


def test_torchmetrics_2d_memory_prints_each_slice_and_its_crop():
    """Two small slices: one row for each whole slice and one for its crop, the same crop and
    HD on both, and the verdict on cropping."""
    if REGISTRY["torchmetrics"].unavailable() is not None:
        pytest.skip("torchmetrics is not installed")
    printed = run_script("torchmetrics_2d_memory.py", "--sizes", "32", "48", "--diameters", "6")
    rows = [line for line in printed.splitlines() if line.startswith("| 6 |")]
    assert [row.split("|")[2].strip() for row in rows] == [
        "32 x 32 (whole slice)",
        "27 x 27 (crop)",
        "48 x 48 (whole slice)",
        "27 x 27 (crop)",
    ]
    assert {row.split("|")[-2].strip() for row in rows} == {"1.5652"}
    assert "keeps the HD on every pair, and bounds the memory" in printed


def test_tools_in_2d_prints_each_tool_beside_the_reference_and_its_declared_offer():
    printed = run_script("tools_in_2d.py", "--tools", "skimage", "segauge")
    assert printed.count("## Discs of radius 8 mm") == 2
    # scikit-image counts pixels: right at 1 mm, 6 pixels of 0.5 mm at (0.5, 1.5) mm.
    assert "3* (+0)" in printed and "6* (+3)" in printed
    assert "planned for v0.2" in printed
    assert "- segauge: DSC (not offered: HD, HD95, MASD, ASSD, NSD:" in printed
