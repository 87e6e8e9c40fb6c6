"""Where every file of the workflow lives: the one owner of the project's paths.

Rules take their outputs, logs and benchmarks from here and their inputs from other rules'
outputs (`rules.<name>.output`); the plans (`scoring_plan`, `analysis_plan`) list their files
from here; scripts get every path from Snakemake. Patterns keep Snakemake's wildcards in
braces ({dataset}, {case}, {spacing}, {tool}, {batch}, {grid}, {name}, {fmt}).

Generated meshes go to data/<name>/; everything else, the meshes of a user's own masks
included, goes to results/, so a user's folders are only ever read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

from study.records import NATIVE, grid_labels, spacing_label


class Layout:
    """Every path of the workflow: fixed patterns as class attributes, and the paths that
    depend on a validated config (its dataset's meshes, cases and masks) on an instance."""

    # Patterns of the voxelize, scoring and analysis stages.
    PAIRS = "results/masks/{dataset}/{spacing}/{case}/pairs.csv"
    """Pairs table of one case at one voxel size; its masks lie beside it."""

    SCAN_PAIRS = "results/masks/{dataset}/scan/{spacing}/{case}/pairs.csv"
    """Pairs table of the scan-sized masks timed when the scored masks are on other grids."""

    SCORES = "results/scores/{dataset}/{tool}/{batch}.parquet"
    UNAVAILABLE = "results/scores/{dataset}/{tool}/unavailable.parquet"
    SCORES_TABLE = "results/scores.parquet"
    EDGE_CASES = "results/edge_cases/{tool}.json"
    TIMING = "results/timing/{tool}.parquet"
    GRID_CHECK_MASKS = "results/grid_check/masks/{grid}/{spacing}/pairs.csv"
    GRID_CHECK = "results/grid_check/{tool}.parquet"
    TABLE = "results/tables/{name}.{fmt}"
    FIGURE = "results/figures/{name}.{fmt}"
    FINDINGS = "results/findings.{fmt}"
    CARDS = "results/cards.{fmt}"
    RECOMMENDATIONS = "results/recommendations.{fmt}"
    VERDICTS = "results/verdicts.html"
    """The verdicts at a glance, an HTML fragment the report's opening page includes."""

    @staticmethod
    def log(rule: str, *wildcards: str) -> str:
        """A job's log: results/logs/<rule>/<wildcards joined by />.log."""
        return _job_file("logs", rule, wildcards, ".log")

    @staticmethod
    def benchmark(rule: str, *wildcards: str) -> str:
        """A job's time and memory record (Snakemake `benchmark:`), named like its log."""
        return _job_file("benchmarks", rule, wildcards, ".tsv")

    def __init__(self, config: Mapping):
        dataset = config["dataset"]
        self.dataset = dataset["name"]
        self.source = dataset["source"]
        self._config_dataset = dataset
        self.spacings = grid_labels(config)
        """Every grid scored: the voxel sizes, then the native grid when asked for."""
        self.voxel_spacings = [label for label in self.spacings if label != NATIVE]
        """The grids the meshes are voxelized on."""
        self.timing_spacing = spacing_label(config["timing"]["voxel_size"])
        fov = config["field_of_view"]
        self.scoring_grid = fov["policy"]
        self.size_mm = fov["size_mm"] if fov["policy"] == "fixed" else None
        """The fixed box every scored pair is voxelized in (policy fixed), else None."""
        self.scored_scan_mm = fov["scan_mm"] if fov["policy"] == "scan" else None
        """The scan-sized box of every scored mask (policy scan), else None."""
        self.timing_grid = config["timing"]["grid"]
        self._timed_cases = config["timing"]["cases"]
        self.mesh_root = (
            f"data/{self.dataset}"
            if self.source == "synthetic"
            else f"results/meshes/{self.dataset}"
        )

    @functools.cached_property
    def cases(self) -> list[str]:
        """Case names: numbered for synthetic data, the manifest's (read once) otherwise."""
        dataset = self._config_dataset
        if self.source == "synthetic":
            from study.dataset.synthetic import case_id

            return [case_id(n) for n in range(1, dataset["cases"] + 1)]
        from study.dataset.realdata import read_pair_manifest

        return sorted(read_pair_manifest(dataset["manifest"])["case"].unique())

    def case_manifest(self) -> str:
        """Pattern of one case's mesh manifest ({case}); its meshes lie beside it."""
        return f"{self.mesh_root}/meshes/{{case}}/manifest.csv"

    @staticmethod
    def mesh_root_of(case_manifest: str) -> str:
        """The dataset folder a case manifest (`case_manifest`) lies in: <root>/meshes/<case>/."""
        return str(Path(case_manifest).parents[2])

    def dataset_manifest(self) -> str:
        return f"{self.mesh_root}/manifest.csv"

    @property
    def timed_grid(self) -> str:
        """Field-of-view policy of the timed masks: 'scan', or the scored masks' policy."""
        return "scan" if self.timing_grid == "scan" else self.scoring_grid

    @property
    def timed_cases(self) -> list[str]:
        """The cases the HD timing runs on: the first timing.cases (every case if null)."""
        return self.cases[: self._timed_cases] if self._timed_cases else self.cases

    def timing_pairs(self) -> list[str]:
        """pairs.csv files of the timed masks: the scored ones when they are on the timing's
        grid, else scan-sized masks voxelized for the timing alone."""
        own_masks = self.timed_grid == "scan" and self.scoring_grid != "scan"
        pattern = self.SCAN_PAIRS if own_masks else self.PAIRS
        return [
            pattern.format(dataset=self.dataset, spacing=self.timing_spacing, case=case)
            for case in self.timed_cases
        ]

    def dataset_targets(self) -> list[str]:
        return [self.dataset_manifest()]

    def voxelize_targets(self) -> list[str]:
        return [
            self.PAIRS.format(dataset=self.dataset, spacing=spacing, case=case)
            for spacing in self.spacings
            for case in self.cases
        ]


def _job_file(folder: str, rule: str, wildcards, suffix: str) -> str:
    return "/".join(["results", folder, rule, *wildcards]) + suffix
