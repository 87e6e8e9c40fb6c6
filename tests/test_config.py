"""Configuration: defaults, presets, and every malformed value failing with the key named."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from adapters import LATER_TOOLS, PAPER_TOOLS, STUDY_TOOLS
from study.oars import CATEGORIES, OARS, selected_oars
from study.pipeline.config import ConfigError, load_config
from study.pipeline.layout import Layout
from study.records import NATIVE, grid_labels

ROOT = Path(__file__).resolve().parent.parent


def test_default_config_matches_documented_keys():
    config = load_config(ROOT / "config.yaml")
    assert config["dataset"] == {
        "name": "synthetic",
        "source": "synthetic",
        "manifest": None,
        "cases": 3,
        "seed": 20240215,
        "oars": "all",
        "dimension": 3,
        "native_grid": False,
        "lidc": {"scans": None, "patients": [], "min_readers": 2, "slice_pairs": None},
    }
    assert config["voxel_sizes"] == [[1, 1, 1], [2, 2, 2], [0.5, 0.5, 2]]
    assert config["field_of_view"]["policy"] == "union_bbox"
    assert config["metrics"] == {
        "percentile": 95,
        "tau_mm": 2.0,
        "scored": ["HD", "HD95", "MASD", "ASSD", "NSD", "BIoU"],
    }
    assert config["tools"] == list(STUDY_TOOLS)  # tools: all


def test_tools_paper_means_the_eleven_and_the_paper_preset_asks_for_them():
    assert load_config({"tools": "paper"})["tools"] == list(PAPER_TOOLS)
    assert load_config(ROOT / "workflow/presets/paper.yaml")["tools"] == list(PAPER_TOOLS)
    assert len(PAPER_TOOLS) == 11 and LATER_TOOLS
    assert set(load_config({"tools": "all"})["tools"]) == set(PAPER_TOOLS) | set(LATER_TOOLS)


def test_tools_takes_no_other_word():
    with pytest.raises(ConfigError, match="tools"):
        load_config({"tools": "later"})


@pytest.mark.parametrize("key", ["tools", "cross_checks"])
def test_an_unregistered_tool_is_named_at_start_up(key):
    with pytest.raises(ConfigError, match=rf"{key}: unknown tools \['nosuchtool'\]"):
        load_config({key: ["monai", "nosuchtool"]})


def test_empty_config_gets_the_same_defaults_as_config_yaml():
    defaults = load_config({})
    written = load_config(ROOT / "config.yaml")
    assert defaults == written


def test_presets():
    test = load_config(ROOT / "workflow/presets/test.yaml")
    paper = load_config(ROOT / "workflow/presets/paper.yaml")
    assert test["dataset"]["cases"] == 1
    assert {OARS[name] for name in selected_oars(test["dataset"]["oars"])} == set(CATEGORIES)
    assert paper["dataset"]["cases"] == 52
    assert len(selected_oars(paper["dataset"]["oars"])) * paper["dataset"]["cases"] == 1560
    assert paper["voxel_sizes"] == [[1, 1, 1], [2, 2, 2], [0.5, 0.5, 2]]


RUN_FORMS = ("make run CONFIG={preset}", ".venv/bin/snakemake --cores all --configfile {preset}")
"""The commands a preset's header may give, both from the project's folder once the README's
set-up has run (`make venv` builds .venv/bin/snakemake); `make run` is what the LIDC run's
and the dry run's tests call."""


PRESETS = sorted((ROOT / "workflow/presets").glob("*.yaml"))


@pytest.mark.parametrize("preset", PRESETS, ids=lambda path: path.name)
def test_each_preset_gives_its_command_whole(preset):
    """Its header's command names the preset and runs from the project's folder as written:
    no bare `snakemake` (not on a user's PATH) and no Snakemake run without its cores."""
    header = " ".join(line for line in preset.read_text().splitlines() if line.startswith("#"))
    name = preset.relative_to(ROOT).as_posix()
    assert any(form.format(preset=name) in header for form in RUN_FORMS), header


def test_the_lidc_presets_score_every_voxel_size_and_the_native_grid():
    paper = load_config(ROOT / "workflow/presets/lidc.yaml")
    small = load_config(ROOT / "workflow/presets/lidc-test.yaml")
    assert paper["voxel_sizes"] == [[1, 1, 1], [2, 2, 2], [0.5, 0.5, 2]]
    assert grid_labels(paper) == ["1x1x1", "2x2x2", "0.5x0.5x2", NATIVE]
    assert paper["tools"] == list(STUDY_TOOLS) and small["tools"] == list(STUDY_TOOLS)
    assert paper["dataset"]["manifest"] == "data/lidc/pairs.csv"
    assert small["dataset"]["manifest"] == "data/lidc-test/pairs.csv"
    # Every study certifies its yardstick unless its config says otherwise: the published
    # run, CI's small run of it, the default study and a config that leaves the key out.
    assert paper["reference"]["brackets"] and small["reference"]["brackets"]
    assert load_config(ROOT / "config.yaml")["reference"]["brackets"]
    assert load_config({})["reference"]["brackets"]
    layout = Layout(paper)
    assert layout.spacings[-1] == NATIVE and NATIVE not in layout.voxel_spacings


@pytest.mark.parametrize(
    "dataset, message",
    [
        ({"native_grid": True}, "native_grid needs masks drawn on a grid of their own"),
        ({"source": "lidc", "manifest": "x.csv"}, "dataset.manifest is written by the lidc"),
        ({"source": "lidc", "lidc": {"min_readers": 5}}, "dataset.lidc.min_readers"),
        ({"source": "lidc", "lidc": {"scans": 0}}, "dataset.lidc.scans"),
    ],
)
def test_a_dataset_the_sources_cannot_make_is_refused(dataset, message):
    with pytest.raises(ConfigError, match=message):
        load_config({"dataset": dataset})


def test_layout_paths():
    layout = Layout(load_config({"dataset": {"cases": 2}}))
    assert layout.cases == ["case_01", "case_02"]
    assert layout.dataset_targets() == ["data/synthetic/manifest.csv"]
    targets = layout.voxelize_targets()
    assert len(targets) == 6
    assert "results/masks/synthetic/0.5x0.5x2/case_02/pairs.csv" in targets


def test_timing_runs_on_scan_sized_masks_of_its_cases_by_default():
    layout = Layout(load_config({"dataset": {"cases": 4}}))
    # The default times the first 3 cases, at 2 mm.
    assert layout.timed_grid == "scan" and layout.timed_cases == ["case_01", "case_02", "case_03"]
    assert layout.timing_pairs() == [
        f"results/masks/synthetic/scan/2x2x2/case_0{n}/pairs.csv" for n in (1, 2, 3)
    ]
    # Not a scored mask: the scan-sized ones are voxelized for the timing alone.
    assert not set(layout.timing_pairs()) & set(layout.voxelize_targets())


@pytest.mark.parametrize(
    "fov, timing, grid, masks",
    [
        ("union_bbox", {"grid": "scoring", "cases": None}, "union_bbox", "results/masks/synthetic"),
        ("scan", {"grid": "scan", "cases": None}, "scan", "results/masks/synthetic"),
        ("scan", {"grid": "scoring", "cases": 5}, "scan", "results/masks/synthetic"),
    ],
)
def test_timing_reuses_the_scored_masks_when_they_are_on_its_grid(fov, timing, grid, masks):
    layout = Layout(
        load_config({"dataset": {"cases": 2}, "field_of_view": {"policy": fov}, "timing": timing})
    )
    assert layout.timed_grid == grid and layout.timed_cases == ["case_01", "case_02"]
    assert layout.timing_pairs() == [f"{masks}/2x2x2/case_0{n}/pairs.csv" for n in (1, 2)]
    assert set(layout.timing_pairs()) <= set(layout.voxelize_targets())


@pytest.mark.parametrize(
    "overrides, key",
    [
        ({"voxel_sizes": [[1, 1, 0]]}, "voxel_sizes[0][2]"),
        ({"voxel_sizes": [[1, -1, 1]]}, "voxel_sizes[0][1]"),
        ({"voxel_sizes": [[1, 1, math.nan]]}, "voxel_sizes[0]"),
        ({"voxel_sizes": [[1, 1]]}, "voxel_sizes[0]"),
        ({"voxel_sizes": [[1, 1, 1], [1, 1, 1]]}, "voxel_sizes"),
        ({"dataset": {"oars": ["Parotid_L", "Spleen"]}}, "dataset.oars"),
        ({"dataset": {"cases": 0}}, "dataset.cases"),
        ({"dataset": {"source": "zenodo"}}, "dataset.source"),
        ({"dataset": {"source": "manifest"}}, "dataset.manifest"),
        ({"field_of_view": {"policy": "fixed"}}, "field_of_view.size_mm"),
        ({"field_of_view": {"policy": "union_bbox", "margin_mm": -1}}, "field_of_view.margin_mm"),
        ({"metrics": {"percentile": 120}}, "metrics.percentile"),
        ({"metrics": {"tau_mm": math.nan}}, "metrics.tau_mm"),
        ({"metrics": {"scored": ["HD", "Dice"]}}, "metrics.scored[1]"),
        ({"timing": {"voxel_size": [3, 3, 3]}}, "timing.voxel_size"),
        ({"timing": {"grid": "cropped"}}, "timing.grid"),
        ({"timing": {"cases": 0}}, "timing.cases"),
        ({"grid_check": {"voxel_sizes": [[3, 3, 3]]}}, "grid_check.voxel_sizes"),
        ({"grid_check": {"voxel_sizes": []}}, "grid_check.voxel_sizes"),
        ({"field_of_view": {"scan_mm": [300, 300]}}, "field_of_view.scan_mm"),
        ({"field_of_view": {"scan_mm": [300, 300, math.inf]}}, "field_of_view.scan_mm"),
        ({"reference": {"meshings": ["marching_cubes"]}}, "reference.meshings"),
        ({"voxel_size": [[1, 1, 1]]}, "voxel_size"),
    ],
)
def test_bad_values_name_the_key(overrides, key):
    with pytest.raises(ConfigError) as error:
        load_config(overrides)
    assert key in str(error.value)


def test_bad_files_name_the_file(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="nope.yaml: config file not found"):
        load_config(missing)
    broken = tmp_path / "broken.yaml"
    broken.write_text("dataset: {name: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml: not valid YAML"):
        load_config(broken)
    listing = tmp_path / "list.yaml"
    listing.write_text(yaml.safe_dump([1, 2]))
    with pytest.raises(ConfigError, match="list.yaml: top level must be a mapping"):
        load_config(listing)
    typo = tmp_path / "typo.yaml"
    typo.write_text("metrics: {percentile: 95, tau: 2}\n")
    with pytest.raises(ConfigError, match=r"typo.yaml: metrics: .*'tau' was unexpected"):
        load_config(typo)


def test_a_2d_study_needs_every_size_in_2d_and_says_which_is_not():
    two_d = {"dataset": {"dimension": 2}, "voxel_sizes": [[1, 1], [0.5, 2]]}
    with pytest.raises(ConfigError, match=r"timing.voxel_size has 3 entries.*dimension is 2"):
        load_config(two_d)
    fixed = two_d | {"timing": {"voxel_size": [1, 1]}}
    with pytest.raises(ConfigError, match=r"field_of_view.scan_mm has 3 entries"):
        load_config(fixed)
    config = load_config(fixed | {"field_of_view": {"scan_mm": [350, 350]}})
    assert grid_labels(config) == ["1x1", "0.5x2"]
    # 1 x 1 and 0.5 x 2 both have pixels of 1 mm^2: the first of equals.
    assert config["grid_check"]["voxel_sizes"] == [[1, 1]]
    with pytest.raises(ConfigError, match=r"voxel_sizes\[1\] has 3 entries"):
        load_config({"voxel_sizes": [[1, 1], [1, 1, 1]], "dataset": {"dimension": 2}})
    with pytest.raises(ConfigError, match="2D shapes"):
        load_config(
            fixed
            | {
                "field_of_view": {"scan_mm": [350, 350]},
                "dataset": {"dimension": 2, "oars": ["Cochlea_L"]},
            }
        )


def test_the_2d_presets_load_and_certify_their_yardstick():
    for name in ("test-2d", "lidc-2d"):
        config = load_config(ROOT / f"workflow/presets/{name}.yaml")
        assert config["dataset"]["dimension"] == 2
        assert all(len(size) == 2 for size in config["voxel_sizes"])
        assert config["reference"]["brackets"], name  # as the 3D LIDC presets
