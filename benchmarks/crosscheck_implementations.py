"""The reference's two implementations side by side on every pair of the default study.

    python benchmarks/crosscheck_implementations.py [--config config.yaml] [--cases N]
                                                    [--oars NAME ...] [--json FILE] [--quick]

Pairs: the synthetic dataset of the configuration (cases, seed, OARs) voxelized at each of its
voxel sizes, as the study scores them (the study's own generator and voxelizer, in process).
Both implementations (`implementation="compiled"`, the default, and "classic", the 1.1 code
kept for one release) compute all seven metrics; printed are the largest differences per
metric and voxel size, every pair beyond the tolerance (1e-6 mm for HD, HD95, MASD, ASSD;
1e-6 for NSD, BIoU, DSC), and the CPU seconds both took (process time: the machine may be
shared, and both run in this one process, alternating pair by pair).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from vocabulary import METRIC_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crosscheck_meshmetrics as crosscheck  # noqa: E402  (a sibling script, not a package)
from recording import add_record_option, recorded  # noqa: E402

IMPLEMENTATIONS = ("classic", "compiled")
TOLERANCE = 1e-6
"""mm for the distances, plain for NSD, BIoU and DSC."""


def difference(first: float, second: float) -> float:
    """second - first; 0 when both are the same non-finite value, NaN when only one is."""
    if first == second or (math.isnan(first) and math.isnan(second)):
        return 0.0
    return second - first


def study_pairs(config: dict, cases: Sequence[int], oars: Sequence[str] | None):
    """(case, oar, category, spacing, VoxelizedPair) of the configuration's dataset."""
    from study.dataset.synthetic import generate_case
    from study.dataset.voxelize import voxelize_pair
    from study.oars import OARS, selected_oars

    names = list(oars) if oars else selected_oars(config["dataset"]["oars"])
    margin = config["field_of_view"]["margin_mm"]
    for case in cases:
        for oar, meshes in generate_case(case, config["dataset"]["seed"], names).items():
            for spacing in config["voxel_sizes"]:
                spacing = tuple(float(s) for s in spacing)
                yield (
                    case,
                    oar,
                    OARS[oar],
                    spacing,
                    voxelize_pair(meshes["A"], meshes["B"], spacing, margin_mm=margin),
                )


def compare(config: dict, cases: Sequence[int], oars: Sequence[str] | None) -> pd.DataFrame:
    """One row per (pair, metric): both values, their difference, and each call's seconds."""
    import reference

    options = {"percentile": config["metrics"]["percentile"], "tau": config["metrics"]["tau_mm"]}
    rows, warm = [], False
    for case, oar, category, spacing, pair in study_pairs(config, cases, oars):
        if not warm:  # imports, the compiled kernels' first load: not timed
            for implementation in IMPLEMENTATIONS:
                reference.compute_metrics(
                    pair.mask_a, pair.mask_b, spacing, implementation=implementation, **options
                )
            warm = True
        scores, seconds = {}, {}
        for implementation in IMPLEMENTATIONS:
            started = time.process_time()
            scores[implementation] = reference.compute_metrics(
                pair.mask_a,
                pair.mask_b,
                spacing,
                origin=pair.origin,
                implementation=implementation,
                **options,
            )
            seconds[implementation] = time.process_time() - started
        for metric in METRIC_KEYS:
            rows.append(
                {
                    "case": case,
                    "oar": oar,
                    "category": category,
                    "spacing": crosscheck.spacing_label(spacing),
                    "metric": metric,
                    **{
                        implementation: scores[implementation][metric]
                        for implementation in IMPLEMENTATIONS
                    },
                    "difference": difference(*(scores[i][metric] for i in IMPLEMENTATIONS)),
                    **{f"s_{i}": seconds[i] for i in IMPLEMENTATIONS},
                }
            )
        print(
            f"  {case} {oar} {crosscheck.spacing_label(spacing)}: classic "
            f"{seconds['classic']:.2f} s, compiled {seconds['compiled']:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    return pd.DataFrame(rows)


def report(frame: pd.DataFrame) -> None:
    pd.set_option("display.width", 200)
    frame = frame.assign(beyond=~(frame.difference.abs() <= TOLERANCE))
    pairs = frame.drop_duplicates(["case", "oar", "spacing"])
    print(
        f"{len(pairs)} pairs ({pairs.case.nunique()} cases, {pairs.oar.nunique()} OARs, "
        f"voxel sizes {', '.join(pairs.spacing.unique())}); compiled - classic; "
        f"tolerance {TOLERANCE:g}"
    )
    table = frame.assign(abs_difference=frame.difference.abs()).pivot_table(
        index="metric", columns="spacing", values="abs_difference", aggfunc="max", sort=False
    )
    table["all"] = frame.assign(a=frame.difference.abs()).groupby("metric", sort=False).a.max()
    table["pairs beyond"] = frame.groupby("metric", sort=False).beyond.sum()
    print("\n== Largest |difference| per metric and voxel size")
    print(table.to_string(float_format="{:.1e}".format))
    beyond = frame[frame.beyond]
    print(f"\n== Values beyond the tolerance: {len(beyond)}")
    if len(beyond):
        print(
            beyond[["case", "oar", "spacing", "metric", *IMPLEMENTATIONS, "difference"]].to_string(
                index=False, float_format="{:.9g}".format
            )
        )
    seconds = pairs[[f"s_{i}" for i in IMPLEMENTATIONS]]
    ratio = seconds["s_classic"] / seconds["s_compiled"]
    print(
        f"\n== CPU seconds: classic {seconds.s_classic.sum():.1f}, compiled "
        f"{seconds.s_compiled.sum():.1f}; per-pair speed-up (classic / compiled) median "
        f"{ratio.median():.2f}, min {ratio.min():.2f}, max {ratio.max():.2f}"
    )
    by = pairs.assign(ratio=ratio).groupby("spacing", sort=False).ratio.median()
    print("median speed-up per voxel size: " + ", ".join(f"{k} {v:.2f}" for k, v in by.items()))


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(crosscheck.REPO / "config.yaml"))
    parser.add_argument("--cases", type=int, help="first N cases (default: the configuration's)")
    parser.add_argument("--oars", nargs="+", help="OAR names (default: the configuration's)")
    parser.add_argument("--json", type=Path, help="also write every row here")
    parser.add_argument("--quick", action="store_true", help="one case, two small OARs")
    add_record_option(parser, __file__)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    from study.pipeline.config import load_config

    args = parse_arguments(argv)
    commit = crosscheck.reference_commit()
    config = load_config(args.config)
    cases = range(1, 1 + (args.cases or config["dataset"]["cases"]))
    oars = args.oars
    if args.quick:
        cases, oars = range(1, 2), ["Cochlea_L", "Arytenoid"]
    started = time.perf_counter()
    with recorded(args.record):
        frame = compare(config, cases, oars)
        print(f"reference commit {commit}; configuration {args.config}")
        report(frame)
        print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(frame.to_dict(orient="records"), default=float))


if __name__ == "__main__":
    main()
