"""Speed and peak memory of the reference beside DeepMind's surface-distance and pymeshmetrics.

    python benchmarks/reference_speed.py [--per-category 2 | --oars all] [--repeats 3]
                                         [--large-size 300] [--quick]

Pairs: synthetic OARs of every category (small, midsize, large, tubular) at 1 mm and
(0.5, 0.5, 2) mm, and one large pair: two offset spheres filling a cube of `--large-size`^3
voxels at 0.5 mm. Every tool is warmed up once (imports, first-call set-up) before timing;
each call is repeated up to `--repeats` times (fewer when one pair already took
`--budget` seconds) and the median kept.

Tools timed, and what is like for like:
* reference, all metrics (HD, HD95, MASD, ASSD, NSD, BIoU, DSC) - like for like with
  pymeshmetrics, which computes the same seven;
* reference without BIoU (HD, HD95, MASD, ASSD, NSD, DSC; `metrics=`) - like for like with
  DeepMind, which has no BIoU;
* reference at centres only (HD95, MASD, ASSD, NSD, DSC with no subdivision, no interpolation,
  no HD bracket): what pymeshmetrics measures, through the reference's meshing and index; not
  a result anyone should report, but it shows what the accuracy work costs on top of it;
* DeepMind surface-distance through the project's adapter (HD, HD95, MASD, ASSD, NSD, DSC);
* pymeshmetrics through the project's adapter (all seven).

Peak memory of the reference on the large pair is read with
getrusage(RUSAGE_CHILDREN).ru_maxrss after running it in a fresh subprocess, so native memory
(VTK, fcpw) counts; a second fresh subprocess that only imports and loads the masks gives the
baseline. Targets (from the issue) are printed as met / not met.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crosscheck_meshmetrics as crosscheck  # noqa: E402  (a sibling script, not a package)
from recording import add_record_option, recorded  # noqa: E402

PERCENTILE, TAU_MM = crosscheck.PERCENTILE, crosscheck.TAU_MM
SPACINGS: tuple[tuple[float, float, float], ...] = ((1.0, 1.0, 1.0), (0.5, 0.5, 2.0))
LARGE_SPACING = (0.5, 0.5, 0.5)
NO_BIOU = ("HD", "HD95", "MASD", "ASSD", "NSD", "DSC")
CENTRES_ONLY = ("HD95", "MASD", "ASSD", "NSD", "DSC")  # HD would start the bracket
TARGET_SPEEDUP_OVER_PYMESHMETRICS = 10.0
TARGET_RATIO_TO_DEEPMIND = 2.0
TARGET_PEAK_MEMORY_GB = 2.0
# "Equal" accuracy: the reference's error may exceed pymeshmetrics' by this much (10 % of the
# cross-check's flag thresholds) and still count as equal.
ACCURACY_SLACK = {"distance": 0.005, "ratio": 0.0005}

Call = Callable[[np.ndarray, np.ndarray, tuple[float, ...]], object]


# ---------------------------------------------------------------------------------------------
# The timed calls.


def reference_all(a, b, spacing):
    import reference

    return reference.compute_metrics(a, b, spacing, percentile=PERCENTILE, tau=TAU_MM)


def reference_without_biou(a, b, spacing):
    import reference

    return reference.compute_metrics(
        a, b, spacing, percentile=PERCENTILE, tau=TAU_MM, metrics=NO_BIOU
    )


def reference_at_centres(a, b, spacing):
    import reference

    return reference.compute_metrics(
        a,
        b,
        spacing,
        percentile=PERCENTILE,
        tau=TAU_MM,
        metrics=CENTRES_ONLY,
        subdivision=0,
        quadrature="midpoint",
    )


def adapter_call(name: str, metrics: Sequence[str]) -> Call:
    from adapters import REGISTRY

    adapter = REGISTRY[name]

    def call(a, b, spacing):
        return adapter.compute(a, b, spacing, metrics=metrics, percentile=PERCENTILE, tau=TAU_MM)

    return call


def tools() -> dict[str, Call]:
    """Tool label -> call."""
    return {
        "reference": reference_all,
        "reference_noBIoU": reference_without_biou,
        "ref_centres": reference_at_centres,
        "deepmind": adapter_call("deepmind", NO_BIOU),
        "pymeshmetrics": adapter_call("meshmetrics", crosscheck.METRICS),
    }


def time_call(call: Call, a, b, spacing, *, repeats: int, budget_s: float) -> float:
    """Median wall seconds of `call`, run `repeats` times or until `budget_s` is spent."""
    seconds: list[float] = []
    while not seconds or (len(seconds) < repeats and sum(seconds) < budget_s):
        started = time.perf_counter()
        call(a, b, spacing)
        seconds.append(time.perf_counter() - started)
    return float(np.median(seconds))


def warm_up(calls: dict[str, Call]) -> None:
    """One call of every tool on a small sphere pair, so imports and set-up are not timed."""
    a, b = crosscheck.analytic_mask_pair("offset", (1.0, 1.0, 1.0))
    for call in calls.values():
        call(a, b, (1.0, 1.0, 1.0))


# ---------------------------------------------------------------------------------------------
# Pairs.


def choose_oars(per_category: int, oars: Sequence[str] | None) -> list[str]:
    """The first `per_category` OARs of each category (HaN-Seg order), or the given names."""
    from study.oars import CATEGORIES, OARS

    if oars is not None:
        return list(oars)
    return [
        name
        for category in CATEGORIES
        for name in [n for n, c in OARS.items() if c == category][:per_category]
    ]


def large_pair(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Two spheres of radius 0.93 * size/4 mm (0.5 mm voxels), 1.5 mm apart, in a size^3 grid."""
    from reference.analytic import ball_mask

    extent = size * LARGE_SPACING[0]
    centre = np.full(3, extent / 2) + 0.13
    radius = 0.465 * extent
    shape = (size,) * 3
    return (
        ball_mask(shape, LARGE_SPACING, radius, centre - [0.75, 0, 0]),
        ball_mask(shape, LARGE_SPACING, radius, centre + [0.75, 0, 0]),
    )


def time_synthetic(calls, oars, case: int, seed: int, *, repeats: int, budget_s: float):
    from study.dataset.synthetic import generate_case
    from study.dataset.voxelize import voxelize_pair
    from study.oars import OARS

    rows = []
    for oar, meshes in generate_case(case, seed, oars).items():
        for spacing in SPACINGS:
            pair = voxelize_pair(meshes["A"], meshes["B"], spacing)
            if not (pair.mask_a.any() and pair.mask_b.any()):
                continue
            row = {
                "pair": oar,
                "category": OARS[oar],
                "spacing": crosscheck.spacing_label(spacing),
                "voxels": int(np.prod(pair.shape)),
            }
            for label, call in calls.items():
                row[label] = time_call(
                    call, pair.mask_a, pair.mask_b, spacing, repeats=repeats, budget_s=budget_s
                )
            rows.append(row)
            print(f"  timed {oar} {row['spacing']}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Peak memory in a fresh process.


def measure_in_child(masks: Path, compute: bool, timeout_s: float) -> dict:
    """Run this script on the saved large pair in a fresh interpreter; its peak RSS in bytes."""
    command = [sys.executable, __file__, "--child", str(masks)] + (
        [] if compute else ["--no-compute"]
    )
    finished = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    if finished.returncode != 0:
        raise RuntimeError(f"memory probe failed: {finished.stderr.strip()[-2000:]}")
    said = json.loads(finished.stdout.strip().splitlines()[-1])
    # Linux reports ru_maxrss in KiB; the maximum over every child waited for so far.
    said["peak_bytes"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return said


def child(masks: Path, compute: bool) -> None:
    """Body of the fresh process: import, load the pair, optionally run the reference."""
    import reference  # noqa: F401  (imports count in the baseline too)

    with np.load(masks) as saved:
        a, b = saved["a"], saved["b"]
    result = {"seconds": None, "scores": None}
    if compute:
        started = time.perf_counter()
        result["scores"] = reference_all(a, b, LARGE_SPACING)
        result["seconds"] = time.perf_counter() - started
    print(json.dumps(result))


def memory_of_large_pair(a, b, timeout_s: float) -> tuple[dict, dict]:
    """(baseline, with the reference) results of the two fresh processes."""
    with tempfile.TemporaryDirectory() as folder:
        masks = Path(folder) / "large_pair.npz"
        np.savez(masks, a=a, b=b)
        baseline = measure_in_child(masks, compute=False, timeout_s=timeout_s)
        measured = measure_in_child(masks, compute=True, timeout_s=timeout_s)
    return baseline, measured


# ---------------------------------------------------------------------------------------------
# Accuracy on the analytic cases (for the "equal or better accuracy" target).


def accuracy_verdicts(spacings, limit_levels: int, surface_resolution: int) -> pd.DataFrame:
    """Per analytic input and metric: the reference's and pymeshmetrics' errors against truth.

    Truth: for masks, the exact values between the meshes of the voxelized masks (split-mesh
    limit, distance metrics) and the closed form (BIoU, DSC, which the limit does not give);
    for tessellated spheres, the closed form.
    """
    items = [
        *crosscheck.analytic_mask_comparisons(spacings, limit_levels),
        *crosscheck.analytic_surface_comparisons(surface_resolution, (0.5, 0.5, 0.5)),
    ]
    rows = []
    for item in items:
        for metric in crosscheck.METRICS:
            truth = item.mesh_limit.get(metric, item.analytic.get(metric))
            if truth is None:
                continue
            kind = "distance" if metric in crosscheck.DISTANCE_METRICS else "ratio"
            error_ours = abs(item.reference[metric] - truth)
            error_theirs = abs(item.meshmetrics[metric] - truth)
            verdict = (
                "better"
                if error_ours < error_theirs - ACCURACY_SLACK[kind]
                else "worse"
                if error_ours > error_theirs + ACCURACY_SLACK[kind]
                else "equal"
            )
            rows.append(
                {
                    "input": item.name,
                    "grid": item.spacing,
                    "metric": metric,
                    "truth": truth,
                    "err_ref": error_ours,
                    "err_pmm": error_theirs,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Report.


def add_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["pmm/ref"] = frame["pymeshmetrics"] / frame["reference"]
    frame["ref/dm"] = frame["reference"] / frame["deepmind"]
    frame["refnoB/dm"] = frame["reference_noBIoU"] / frame["deepmind"]
    frame["centres/dm"] = frame["ref_centres"] / frame["deepmind"]
    return frame


def targets(
    timings: pd.DataFrame, accuracy: pd.DataFrame, peak_gb: float | None, memory_note: str
) -> list[str]:
    """One line per target of the issue, saying met or not met and the numbers behind it."""

    def verdict(ok: bool) -> str:
        return "MET" if ok else "NOT MET"

    speedup = float(timings["pmm/ref"].median())
    worse = accuracy[accuracy.verdict == "worse"]
    lines = [
        f"[{verdict(speedup >= TARGET_SPEEDUP_OVER_PYMESHMETRICS and worse.empty)}] "
        f">= {TARGET_SPEEDUP_OVER_PYMESHMETRICS:g}x faster than pymeshmetrics with equal or "
        f"better accuracy: median per-pair speed-up {speedup:.2f}x (all metrics both); "
        f"analytic accuracy: {(accuracy.verdict == 'better').sum()} better, "
        f"{(accuracy.verdict == 'equal').sum()} equal, {len(worse)} worse"
    ]
    medians = timings[["reference_noBIoU", "deepmind"]].median()
    ratio = medians["reference_noBIoU"] / medians["deepmind"]
    lines.append(
        f"[{verdict(ratio <= TARGET_RATIO_TO_DEEPMIND)}] median per-case time <= "
        f"{TARGET_RATIO_TO_DEEPMIND:g}x DeepMind's: {medians['reference_noBIoU']:.3f} s "
        f"vs {medians['deepmind']:.3f} s = {ratio:.2f}x (reference without BIoU, "
        "like for like)"
    )
    centres = timings["ref_centres"].median()
    lines.append(
        f"[for scale] the reference's meshing and index at centres only (no "
        f"subdivision, interpolation or HD bracket; what pymeshmetrics measures): "
        f"{centres:.3f} s = {centres / medians['deepmind']:.2f}x DeepMind's median"
    )
    if peak_gb is None:
        lines.append(f"[NOT MET] peak memory < {TARGET_PEAK_MEMORY_GB:g} GB: {memory_note}")
    else:
        lines.append(
            f"[{verdict(peak_gb < TARGET_PEAK_MEMORY_GB)}] peak memory < "
            f"{TARGET_PEAK_MEMORY_GB:g} GB on the large pair: {peak_gb:.2f} GB "
            f"({memory_note})"
        )
    return lines


def print_tables(timings: pd.DataFrame, large: pd.DataFrame, accuracy: pd.DataFrame) -> None:
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    seconds = "{:.3f}".format
    print("== Median seconds per pair (one call computing all of a tool's metrics)")
    print(timings.to_string(index=False, float_format=seconds))
    numeric = [c for c in timings.columns if c not in ("pair", "category", "spacing", "voxels")]
    for by in (["category", "spacing"], ["category"], ["spacing"]):
        print(f"\n== Medians by {' and '.join(by)}")
        print(timings.groupby(by)[numeric].median().to_string(float_format=seconds))
    print("\n== All synthetic pairs: medians")
    print(timings[numeric].median().to_string(float_format=seconds))
    print("\n== Large pair (one run each)")
    print(large.to_string(index=False, float_format=seconds))
    print("\n== Analytic accuracy (errors against the exact values; see crosscheck_meshmetrics)")
    print(accuracy.to_string(index=False, float_format="{:.4f}".format))


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--per-category",
        type=int,
        default=2,
        help="OARs per category (first ones in HaN-Seg order; default 2)",
    )
    parser.add_argument("--oars", nargs="+", help="OAR names or 'all' (overrides per-category)")
    parser.add_argument("--case", type=int, default=1)
    parser.add_argument("--seed", type=int, default=crosscheck.SEED)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        help="stop repeating a tool on a pair after this many seconds",
    )
    parser.add_argument(
        "--large-size",
        type=int,
        default=300,
        help="edge of the large pair's cube in voxels (0.5 mm)",
    )
    parser.add_argument(
        "--large-timeout",
        type=float,
        default=600.0,
        help="seconds the reference may take on the large pair",
    )
    parser.add_argument("--limit-levels", type=int, default=3)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny run for tests: one small OAR, a 40^3 large pair, one repeat",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-compute", action="store_true", help=argparse.SUPPRESS)
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    if args.quick:
        args.oars, args.large_size, args.repeats, args.limit_levels = ["Cochlea_L"], 24, 1, 1
    if args.oars == ["all"]:
        from study.oars import OARS

        args.oars = list(OARS)
    if args.repeats < 1 or args.per_category < 1 or args.large_size < 20:
        parser.error("--repeats and --per-category must be >= 1, --large-size >= 20")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_arguments(argv)
    if args.child is not None:
        child(args.child, compute=not args.no_compute)
        return
    with recorded(args.record):
        measure_and_print(args)


def measure_and_print(args: argparse.Namespace) -> None:
    """Memory of the large pair, then every tool's time per pair, ratios and targets."""
    started, commit = time.perf_counter(), crosscheck.reference_commit()
    # Memory first, before this process starts any other child, so the maximum is ours.
    a, b = large_pair(args.large_size)
    try:
        baseline, measured = memory_of_large_pair(a, b, args.large_timeout)
        peak_gb, note = (
            measured["peak_bytes"] / 1e9,
            (
                f"baseline without computing {baseline['peak_bytes'] / 1e9:.2f} GB; "
                f"{args.large_size}^3 voxels"
            ),
        )
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        measured, peak_gb, note = {"seconds": np.nan}, None, f"not measured: {error}"

    calls = tools()
    warm_up(calls)
    timings = add_ratios(
        time_synthetic(
            calls,
            choose_oars(args.per_category, args.oars),
            args.case,
            args.seed,
            repeats=args.repeats,
            budget_s=args.budget,
        )
    )
    large = {
        "pair": f"spheres {args.large_size}^3",
        "reference (fresh process)": measured["seconds"],
    }
    for label, call in calls.items():
        if label != "reference":
            large[label] = time_call(call, a, b, LARGE_SPACING, repeats=1, budget_s=0)
    spacings = ((2.0, 2.0, 2.0),) if args.quick else crosscheck.SPACINGS
    accuracy = accuracy_verdicts(spacings, args.limit_levels, 40 if args.quick else 150)

    import reference

    print(
        f"reference {reference.__version__} (commit {commit}); "
        f"case {args.case}, seed {args.seed}; repeats {args.repeats}; warm-up done"
    )
    print_tables(timings, pd.DataFrame([large]), accuracy)
    print("\n== Targets")
    for line in targets(timings, accuracy, peak_gb, note):
        print(line)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
