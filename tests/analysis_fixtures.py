"""Small results folders with known statistics planted in them, for the analysis tests.

The planted behaviours (per mask pair, per metric, on top of a random reference score):
- deepmind: equal to the reference (Δ = 0 everywhere);
- monai: reference + 0.5 mm for distance metrics, + 0.01 (1 %pt) for NSD, BIoU and DSC;
- metricsreloaded: equal to monai (an identical pair);
- medpy (HD, HD95, MASD, DSC): reference + 2 mm ± noise, one inf and one NaN score;
- miseval (HD, DSC): HD = reference × 2 at voxel sizes other than 1 mm, else reference;
  two rows with status "error";
- anima: not installed, recorded as the scoring stage does: one "unavailable" row with empty
  case, oar, spacing and metric;
- reference-marching-cubes = reference + 0.01; reference-surface-nets = reference − 0.1.

A tool added since the paper, for the tests of the groups (`LATER_TOOL`): its scores, timings
and edge cases come only with `with_later_tool`, `make_timing(later=True)` and
`edge_case_documents(later=True)`, and it is a later tool only while `register_later_tool` has
entered it in the adapter registry (the registry is where a tool's group is read).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from adapters.base import Adapter
from study.analysis.settings import AnalysisSettings
from study.pipeline.config import load_config
from study.records import REFERENCE, SCORE_COLUMNS, TIMING_COLUMNS
from vocabulary import METRIC_KEYS, RATIO_KEYS

SPACINGS = ("1x1x1", "2x2x2", "0.5x0.5x2")
OARS = {
    "Cochlea_L": "small",
    "OpticNrv_L": "small",
    "Glottis": "midsize",
    "Glnd_Submand_L": "midsize",
    "Parotid_L": "large",
    "Bone_Mandible": "large",
    "A_Carotid_L": "tubular",
    "A_Carotid_R": "tubular",
}
CASES = ("case_01", "case_02", "case_03")
TOOLS = ("anima", "deepmind", "medpy", "metricsreloaded", "miseval", "monai")
"""Configured tools of the fixture: 7 implementations with the reference."""

SUPPORTED = {
    "deepmind": METRIC_KEYS,
    "monai": METRIC_KEYS,
    "metricsreloaded": METRIC_KEYS,
    "medpy": ("HD", "HD95", "MASD", "DSC"),
    "miseval": ("HD", "DSC"),
    "anima": ("HD", "MASD", "ASSD", "DSC"),
}


LATER_TOOL = "latertool"
"""A tool added since the paper (HD, HD95, DSC; no MASD, ASSD, NSD, BIoU): HD equal to the
reference; HD95 = reference − 0.25 mm, failing with a ValueError on the anisotropic grid;
DSC = reference + 0.02 (2 %pt). HD time about 20 ms."""

LATER_ERROR = "ValueError: anisotropic spacing is not supported"


class LaterTool(Adapter):
    """The registry entry of `LATER_TOOL`: only its group and label are read."""

    name = LATER_TOOL
    label = "Later Tool"
    metrics = ("HD", "HD95", "DSC")


def register_later_tool(monkeypatch) -> None:
    """Enter `LATER_TOOL` in the adapter registry for one test."""
    import adapters

    monkeypatch.setitem(adapters.REGISTRY, LATER_TOOL, LaterTool())


def with_later_tool(scores: pd.DataFrame) -> pd.DataFrame:
    """`scores` plus the later tool's rows, planted on the reference's (see `LATER_TOOL`)."""
    reference = scores.loc[
        (scores["tool"] == "reference") & scores["metric"].isin(LaterTool.metrics)
    ]
    later = reference.assign(tool=LATER_TOOL, tool_version=f"{LATER_TOOL}-2.0")
    later.loc[later["metric"] == "HD95", "value"] -= 0.25
    later.loc[later["metric"] == "DSC", "value"] += 0.02
    failed = (later["metric"] == "HD95") & (later["spacing"] == "0.5x0.5x2")
    later.loc[failed, ["value", "status", "message"]] = [np.nan, "error", LATER_ERROR]
    return pd.concat([scores, later], ignore_index=True)


def make_config() -> dict:
    """The configuration the fixture corresponds to."""
    return {
        "dataset": {"name": "synthetic"},
        "voxel_sizes": [[1, 1, 1], [2, 2, 2], [0.5, 0.5, 2]],
        "metrics": {"percentile": 95, "tau_mm": 2.0},
        "tools": list(TOOLS),
        "timing": {"voxel_size": [1, 1, 1], "repeats": 2},
    }


def make_settings() -> AnalysisSettings:
    """The analysis settings of `make_config`, validated as the workflow validates it."""
    return AnalysisSettings.from_config(load_config(make_config()))


def _row(case, oar, spacing, tool, metric, value, status="ok", message=""):
    return {
        "dataset": "synthetic",
        "case": case,
        "oar": oar,
        "category": OARS[oar],
        "spacing": spacing,
        "tool": tool,
        "tool_version": f"{tool}-1.0",
        "environment": "study",
        "metric": metric,
        "value": float(value),
        "status": status,
        "message": message,
        "seconds": 0.01,
    }


def _reference_value(rng: np.random.Generator, metric: str) -> float:
    return float(rng.uniform(0.4, 0.95) if metric in RATIO_KEYS else rng.uniform(1, 20))


def _tool_value(tool, metric, spacing, ref, rng):
    """Planted tool score and status for one reference score."""
    relative = metric in RATIO_KEYS
    if tool == "deepmind":
        return ref, "ok"
    if tool in ("monai", "metricsreloaded"):
        return ref + (0.01 if relative else 0.5), "ok"
    if tool == "medpy":
        return ref + (0.0 if relative else 2.0 + rng.normal(0, 0.1)), "ok"
    if tool == "miseval":
        return (ref * 2 if spacing != "1x1x1" and metric == "HD" else ref), "ok"
    return np.nan, "unavailable"


def make_scores(seed: int = 7) -> pd.DataFrame:
    """Scores table with the planted behaviours in the module docstring."""
    rng = np.random.default_rng(seed)
    rows = []
    for spacing in SPACINGS:
        for case in CASES:
            for oar in OARS:
                for metric in METRIC_KEYS:
                    ref = _reference_value(rng, metric)
                    rows.append(_row(case, oar, spacing, "reference", metric, ref))
                    rows.append(
                        _row(case, oar, spacing, "reference-marching-cubes", metric, ref + 0.01)
                    )
                    rows.append(
                        _row(case, oar, spacing, "reference-surface-nets", metric, ref - 0.1)
                    )
                    for tool in TOOLS:
                        if tool == "anima" or metric not in SUPPORTED[tool]:
                            continue
                        value, status = _tool_value(tool, metric, spacing, ref, rng)
                        rows.append(
                            _row(
                                case,
                                oar,
                                spacing,
                                tool,
                                metric,
                                value,
                                status,
                                "not installed" if status == "unavailable" else "",
                            )
                        )
    rows.append(
        {
            "dataset": "synthetic",
            "case": "",
            "oar": "",
            "category": "",
            "spacing": "",
            "tool": "anima",
            "tool_version": "",
            "environment": "study",
            "metric": "",
            "value": np.nan,
            "status": "unavailable",
            "message": "program 'animaSegPerfAnalyzer' not found (set tool_paths.anima)",
            "seconds": np.nan,
        }
    )
    scores = pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
    _plant_nonfinite(scores)
    return scores


def _plant_nonfinite(scores: pd.DataFrame) -> None:
    """One inf and one NaN medpy HD95 at 1 mm; two miseval HD errors at 2 mm."""
    medpy = scores.index[
        (scores["tool"] == "medpy") & (scores["metric"] == "HD95") & (scores["spacing"] == "1x1x1")
    ]
    scores.loc[medpy[0], ["value", "status"]] = [np.inf, "inf"]
    scores.loc[medpy[1], ["value", "status"]] = [np.nan, "nan"]
    miseval = scores.index[
        (scores["tool"] == "miseval") & (scores["metric"] == "HD") & (scores["spacing"] == "2x2x2")
    ]
    scores.loc[miseval[:2], ["value", "status", "message"]] = [np.nan, "error", "boom"]


def edge_case_documents(later: bool = False) -> list[dict]:
    """Edge-case records of three tools (and of the later tool: HD only, ∞ ∞ NaN ✓)."""

    def records(o1, o2, o3, warned=False, metrics=("DSC", "HD")):
        out = []
        for metric in metrics:
            for case, output in zip(
                ("O1", "O2", "O3", "S"), (o1, o2, o3, "unchanged"), strict=True
            ):
                value = {"inf": "inf", "nan": "nan", "0": "0.0", "number": "3.5"}.get(output, "")
                out.append(
                    {
                        "case": case,
                        "metric": metric,
                        "output": output,
                        "value": value,
                        "warned": warned,
                        "message": "",
                    }
                )
        return out

    return [
        {
            "tool": "monai",
            "label": "MONAI",
            "version": "1.6.1",
            "records": records("nan", "nan", "nan", warned=True),
        },
        {
            "tool": "deepmind",
            "label": "Google DeepMind",
            "version": "0.1",
            "records": records("inf", "inf", "nan"),
        },
        {
            "tool": "miseval",
            "label": "MISeval",
            "version": "1.3.0",
            "records": records("number", "number", "0"),
        },
    ] + (
        [
            {
                "tool": LATER_TOOL,
                "label": LaterTool.label,
                "version": "2.0",
                "records": records("inf", "inf", "nan", metrics=("HD",)),
            }
        ]
        if later
        else []
    )


def make_timing(seed: int = 3, later: bool = False) -> pd.DataFrame:
    """HD timings at 1 mm: deepmind ~10 ms, monai ~50 ms, medpy ~1 s (the later tool ~20 ms);
    2 repeats; one error."""
    rng = np.random.default_rng(seed)
    base = {"deepmind": 0.01, "monai": 0.05, "medpy": 1.0, "reference": 0.3}
    if later:
        base[LATER_TOOL] = 0.02  # last, so the others' draws stay the same
    rows = []
    for tool, seconds in base.items():
        for case in CASES:
            for oar, category in OARS.items():
                for repeat in range(2):
                    rows.append(
                        {
                            "dataset": "synthetic",
                            "case": case,
                            "oar": oar,
                            "category": category,
                            "spacing": "1x1x1",
                            "grid": "scan",
                            "shape": "301x301x281",
                            "tool": tool,
                            "tool_version": f"{tool}-1.0",
                            "repeat": repeat,
                            "seconds": seconds * rng.uniform(0.8, 1.25),
                            "status": "ok",
                            "message": "",
                        }
                    )
    rows[0].update(status="error", seconds=float("nan"), message="timeout")
    return pd.DataFrame(rows, columns=list(TIMING_COLUMNS))


def make_manifest(seed: int = 5) -> pd.DataFrame:
    """Manifest with volumes in each category's range; one empty observer."""
    rng = np.random.default_rng(seed)
    centre = {"small": 300.0, "midsize": 4000.0, "large": 40000.0, "tubular": 3000.0}
    rows = []
    for case in CASES:
        for oar, category in OARS.items():
            for observer in ("A", "B"):
                rows.append(
                    {
                        "case": case,
                        "oar": oar,
                        "category": category,
                        "observer": observer,
                        "path": f"{case}/{oar}__{observer}.vtp",
                        "volume_mm3": centre[category] * rng.uniform(0.7, 1.4),
                    }
                )
    rows[-1].update(path="", volume_mm3=0.0)
    return pd.DataFrame(rows)


def write_results(root: Path) -> dict:
    """Write scores, edge cases, timing and a manifest under `root`; return their paths."""
    results = root / "results"
    (results / "edge_cases").mkdir(parents=True)
    (results / "timing").mkdir()
    scores_path = results / "scores.parquet"
    make_scores().to_parquet(scores_path)
    edge_paths = []
    for document in edge_case_documents():
        path = results / "edge_cases" / f"{document['tool']}.json"
        path.write_text(json.dumps(document))
        edge_paths.append(path)
    timing = make_timing()
    timing_paths = []
    for tool, rows in timing.groupby("tool"):
        path = results / "timing" / f"{tool}.parquet"
        rows.to_parquet(path)
        timing_paths.append(path)
    manifest_path = root / "data" / "synthetic" / "manifest.csv"
    manifest_path.parent.mkdir(parents=True)
    make_manifest().to_csv(manifest_path, index=False)
    pairs_paths = write_pairs(results)
    return {
        "results": results,
        "scores": scores_path,
        "edge_cases": edge_paths,
        "timing": timing_paths,
        "manifest": manifest_path,
        "pairs": pairs_paths,
    }


def write_pairs(results: Path) -> list[Path]:
    """A pairs.csv and its masks per voxel size and case, as the voxelizer lays them out:
    observer B's box is A's shifted by one voxel (DSC 0.75)."""
    from maskio import write_mask

    a = np.zeros((10, 10, 10), bool)
    a[2:6, 2:6, 2:6] = True
    paths = []
    for spacing in SPACINGS:
        for case in CASES:
            folder = results / "masks" / "synthetic" / spacing / case
            folder.mkdir(parents=True)
            rows = []
            for oar, category in OARS.items():
                for observer, mask in (("A", a), ("B", np.roll(a, 1, axis=0))):
                    write_mask(folder / f"{oar}__{observer}.nii.gz", mask, (1.0, 1.0, 1.0))
                rows.append(
                    {
                        "case": case,
                        "oar": oar,
                        "category": category,
                        "spacing": spacing,
                        "path_a": f"{oar}__A.nii.gz",
                        "path_b": f"{oar}__B.nii.gz",
                    }
                )
            paths.append(folder / "pairs.csv")
            pd.DataFrame(rows).to_csv(paths[-1], index=False)
    return paths


# --------------------------------------------------------------------------------------------
# A crowded run: every tool, four grids, many pairs (the published LIDC-IDRI run's shape)
# --------------------------------------------------------------------------------------------

LIDC_GRIDS = ("1x1x1", "2x2x2", "0.5x0.5x2", "native")
"""The grids of the published LIDC-IDRI run: the paper's three voxel sizes and the native."""

CROWDED_UNAVAILABLE = ("anima", "evaluatesegmentation")
"""The tools a crowded run records as not installed (neither is on PyPI)."""

CROWDED_FAILING = "torchmetrics"
"""The tool whose HD fails on every pair of a crowded run (torchmetrics' HD on 3D masks) but
those whose reference is inf, where it gives inf: "5∞ 1573E" at 2 mm, as in the LIDC run."""

INF_REFERENCE_PAIRS = 5
"""Pairs whose reference score is inf at 2 mm in a crowded run (a mask empty at that size, as in
the LIDC-IDRI run): no Δ exists there; on the next pair each tool gives inf or raises."""


def crowded_tools() -> list[str]:
    """The paper's tools and those since, in tool order (the cross-check left out): 17 today."""
    from adapters import REGISTRY
    from study.analysis.labels import ordered_tools, tool_group

    return [t for t in ordered_tools(REGISTRY) if tool_group(t) in ("paper", "later")]


def pair_names(pairs: int) -> pd.DataFrame:
    """`pairs` LIDC-like reader pairs: case, oar (nodule and annotations), about nine a scan."""
    k = np.arange(pairs)
    return pd.DataFrame(
        {
            "case": [f"LIDC-IDRI-{n // 9 + 1:04d}_s{n // 9 + 1}" for n in k],
            "oar": [f"nodule{n % 9 // 3 + 1}_a{2 * n + 1}_b{2 * n + 2}" for n in k],
        }
    )


def make_crowded_scores(pairs: int = 8, seed: int = 11) -> pd.DataFrame:
    """Scores of every tool in `crowded_tools` (its own metrics of `TESTED_KEYS`) on `pairs`
    pairs at `LIDC_GRIDS`: Δ small noise around 0; at 2 mm the reference inf on the first
    `INF_REFERENCE_PAIRS` pairs (every second tool errors there, the others give inf);
    `CROWDED_FAILING`'s HD an error on every pair the reference scored;
    `CROWDED_UNAVAILABLE` not installed."""
    from adapters import REGISTRY
    from vocabulary import TESTED_KEYS

    rng = np.random.default_rng(seed)
    grid = pair_names(pairs).merge(pd.DataFrame({"spacing": LIDC_GRIDS}), how="cross")
    grid = grid.merge(pd.DataFrame({"metric": TESTED_KEYS}), how="cross")
    grid["value"] = np.where(
        grid["metric"].isin(RATIO_KEYS),
        rng.uniform(0.4, 0.95, len(grid)),
        rng.gamma(2, 3, len(grid)),
    )
    inf = (grid["spacing"] == "2x2x2") & (
        grid.groupby(["spacing", "metric"]).cumcount() < INF_REFERENCE_PAIRS
    )
    grid.loc[inf, "value"] = np.inf
    parts = [_crowded_rows(grid, "reference", np.full(len(grid), "ok"))]
    for k, tool in enumerate(crowded_tools()):
        if tool in CROWDED_UNAVAILABLE:
            parts.append(_placeholder(tool))
            continue
        rows = grid.loc[grid["metric"].isin(REGISTRY[tool].metrics)].copy()
        rows["value"] += rng.normal(0, 0.2, len(rows)) * np.where(
            rows["metric"].isin(RATIO_KEYS), 0.05, 1.0
        )
        inf = np.isinf(rows["value"])
        # Beside the pairs the reference leaves undefined, each tool misses on some it
        # defines: every second tool raises there, the others give inf.
        missed = (rows["spacing"] == "2x2x2") & (
            rows.groupby(["spacing", "metric"]).cumcount() == INF_REFERENCE_PAIRS
        )
        if tool == CROWDED_FAILING:
            failed = (rows["metric"] == "HD") & ~inf
        else:
            failed = missed & (k % 2 == 0)
            rows.loc[missed & (k % 2 == 1), "value"] = np.inf
        rows.loc[failed, "value"] = np.nan
        parts.append(_crowded_rows(rows, tool, np.where(failed, "error", "ok")))
    return pd.DataFrame(pd.concat(parts, ignore_index=True), columns=list(SCORE_COLUMNS))


def _crowded_rows(rows: pd.DataFrame, tool: str, status) -> pd.DataFrame:
    """Score rows of one tool from a frame of case, oar, spacing, metric and value; an inf
    value that is not an error has status inf, as the scoring stage records it."""
    status = np.where((status == "ok") & np.isinf(rows["value"]), "inf", status)
    return rows.assign(
        dataset="lidc",
        category="small",
        tool=tool,
        tool_version=f"{tool}-1.0",
        environment="study",
        status=status,
        message=np.where(status == "error", "boom", ""),
        seconds=0.01,
    )


def _placeholder(tool: str) -> pd.DataFrame:
    """The one row the scoring stage records for a tool that is not installed."""
    row = dict.fromkeys(SCORE_COLUMNS, "")
    row.update(tool=tool, environment="study", value=np.nan, status="unavailable", seconds=np.nan)
    row["message"] = "not installed"
    row["dataset"] = "lidc"
    return pd.DataFrame([row])


def make_pair_manifest(pairs: int, seed: int = 13) -> pd.DataFrame:
    """A mesh manifest of `pairs` LIDC-like reader pairs (two rows each, readers A and B):
    nodule volumes log-uniform from 5 to 20,000 mm³, the readers within about 30 % of each
    other, the category from the pair's mean volume as LIDC's is (its diameter class)."""
    from study.oars import nodule_category

    rng = np.random.default_rng(seed)
    names = pair_names(pairs)
    nodule = 10 ** rng.uniform(np.log10(5), np.log10(2e4), pairs)
    names["category"] = [nodule_category(v) for v in nodule]
    readers = []
    for observer in ("A", "B"):
        readers.append(
            names.assign(
                observer=observer,
                path=[
                    f"{c}/{o}__{observer}.vtp"
                    for c, o in zip(names["case"], names["oar"], strict=True)
                ],
                volume_mm3=nodule * rng.uniform(0.75, 1.3, pairs),
            )
        )
    return pd.concat(readers, ignore_index=True).sort_values(["case", "oar"], ignore_index=True)


def assert_the_yardstick_certified(scores: pd.DataFrame) -> None:
    """A run's scores table with `reference.brackets` on: each finite value of the yardstick
    lies in its proven bracket, and no other row carries one."""
    reference = scores[(scores["tool"] == REFERENCE) & np.isfinite(scores["value"])]
    low, high, value = reference["reference_low"], reference["reference_high"], reference["value"]
    assert len(reference) and low.notna().all()
    assert ((low <= value) & (value <= high)).all()
    assert scores.loc[scores["tool"] != REFERENCE, "reference_low"].isna().all()
