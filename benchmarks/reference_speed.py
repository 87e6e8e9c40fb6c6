"""Speed and peak memory of the reference beside DeepMind's surface-distance and pymeshmetrics.

    python benchmarks/reference_speed.py [--per-category 2 | --oars all] [--repeats 3]
                                         [--large-size 300] [--quick]
                                         [--masks REF PRED [--label N ...]]
                                         [--pairs PAIRS_CSV ... [--sample 20]]

Pairs: synthetic OARs of every category (small, midsize, large, tubular) at 1 mm and
(0.5, 0.5, 2) mm, and one large pair: two offset spheres filling a cube of `--large-size`^3
voxels at 0.5 mm; with `--masks`, also the pairs of two mask files of the user's own (one pair
per `--label` value, or the two binary masks), and with `--pairs`, a seeded sample of a study's
mask pairs (its pairs.csv files: results/masks/<dataset>/<voxel size>/<case>/pairs.csv, for
example LIDC-IDRI's reader pairs), all reported apart from the synthetic medians and the
targets they decide. Every tool makes one untimed call on each pair (imports, first-call
set-up, the process's memory grown to the pair); each call is then repeated up to `--repeats`
times (fewer when one pair already took `--budget` seconds) and the median kept. The large
pair is timed once per tool, cold.

Tools timed, and what is like for like (the reference's rows are its plain call,
`bounds=False`, the distance pass the speed targets were set on; its default call, which
proves brackets, is timed apart under "Brackets"):
* reference, all metrics (HD, HD95, MASD, ASSD, NSD, BIoU, DSC) - like for like with
  pymeshmetrics, which computes the same seven;
* reference without BIoU (HD, HD95, MASD, ASSD, NSD, DSC; `metrics=`) - like for like with
  DeepMind, which has no BIoU;
* reference at centres only (HD95, MASD, ASSD, NSD, DSC with no subdivision, no interpolation,
  no HD bracket): what pymeshmetrics measures, through the reference's meshing and index; not
  a result anyone should report, but it shows what the accuracy work costs on top of it;
* DeepMind surface-distance through the project's adapter (HD, HD95, MASD, ASSD, NSD, DSC);
* pymeshmetrics through the project's adapter (all seven), and without BIoU (like for like with
  the reference without BIoU: the two BIoU parts are the differences of the two calls);
* segauge through the project's adapter (HD, HD95, MASD, ASSD, NSD, DSC; its HD95 is fixed at
  the 95th percentile, as the reference's is called here) - like for like with the reference
  without BIoU; the one mesh-based tool of the study.

Distance to the reference: per pair, each of DeepMind, pymeshmetrics and segauge minus the
reference, metric by metric (mm; NSD and DSC as fractions), from the values of the calls that
were timed; printed per pair for segauge and as medians of |difference| per voxel size for
all three.

Brackets: per pair, the default call (all seven metrics with their proven brackets; timed
like the others, "certified") against the plain call (`bounds=False`, no brackets; "cert/ref")
and beside pymeshmetrics, DeepMind and segauge; the width of each
metric's proven bracket (docs/reference.md, "What the brackets prove"), the metrics whose
plain value lies outside its bracket ("outside"), whose certified value does ("cert
outside": none, by construction) and the brackets wider than their aims ("wide"). The large
pair is not certified (the refinement's element cap holds its brackets wide there).

Query points: per pair, the points the reference (without BIoU) hands to the closest-element
search, against its boundary elements (triangles of both meshes), and its time per query
point against the floor: one exact query per boundary element (each mesh's element centres on
the other mesh, index build included), the least any exact mesh method does.

JIT: the compiled kernels' first-call cost in a fresh process on an empty numba cache
(compilation) and on the cache that run left (loading), each the first call's time minus a
second call's; imports are timed apart.

Peak memory of the reference on the large pair is the ru_maxrss a fresh subprocess reports of
itself after running it, so native memory (VTK, fcpw) counts; a second fresh subprocess that
only imports and loads the masks gives the baseline. A first one on a small pair fills numba's
kernel cache, so the peak is the computation's, not the compiler's. Targets (from the issue)
are printed as met / not met.
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

import maskio
from maskio import cli as maskio_cli
from vocabulary import METRIC_KEYS, MM_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crosscheck_meshmetrics as crosscheck  # noqa: E402  (a sibling script, not a package)
from recording import add_record_option, recorded  # noqa: E402

PERCENTILE, TAU_MM = crosscheck.PERCENTILE, crosscheck.TAU_MM
SPACINGS: tuple[tuple[float, float, float], ...] = ((1.0, 1.0, 1.0), (0.5, 0.5, 2.0))
LARGE_SPACING = (0.5, 0.5, 0.5)
NO_BIOU = ("HD", "HD95", "MASD", "ASSD", "NSD", "DSC")
CENTRES_ONLY = ("HD95", "MASD", "ASSD", "NSD", "DSC")  # HD would start the bracket
TARGET_SPEEDUP_OVER_PYMESHMETRICS = 2.0
"""Issue #37: all seven metrics, median of per-pair ratios pymeshmetrics / reference, at
every voxel size."""
TARGET_CATEGORY_SPEEDUP = 1.0
"""... and this median within every organ category."""
TARGET_RATIO_TO_DEEPMIND = 2.0
"""Reference without BIoU / DeepMind, ratio of the median per-pair times."""
TARGET_PEAK_MEMORY_GB = 1.09
"""Peak memory on the large pair, at most what it was before the lattice reference."""
TARGET_MASK_FILE_SPEEDUP = 3.0
"""On the mask files (`--masks`): median of the per-pair ratios, all seven metrics ..."""
TARGET_MASK_FILE_EACH = 2.0
"""... and every pair at least this."""
TARGET_CERTIFIED_RATIO = 1.5
"""Issue #56: the default, certified call at most this many times the plain call
(`bounds=False`), at the median pair and at the slowest (the ratio's largest)."""
# "Equal" accuracy: the reference's error may exceed pymeshmetrics' by this much (10 % of the
# cross-check's flag thresholds) and still count as equal.
ACCURACY_SLACK = {"distance": 0.005, "ratio": 0.0005}

Call = Callable[[np.ndarray, np.ndarray, tuple[float, ...]], object]


# ---------------------------------------------------------------------------------------------
# The timed calls.


def reference_all(a, b, spacing):
    import reference

    return reference.compute_metrics(a, b, spacing, percentile=PERCENTILE, tau=TAU_MM, bounds=False)


def reference_certified(a, b, spacing):
    """The default call: all seven metrics, each value inside its proven bracket
    (`scores.brackets`). A bracket wider than its aim is listed in the table ("wide"),
    not warned about."""
    import warnings

    import reference
    from reference.bounds import WideBracket

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WideBracket)
        return reference.compute_metrics(a, b, spacing, percentile=PERCENTILE, tau=TAU_MM)


def reference_cold(a, b, spacing):
    """All seven metrics as the first pair of its spacing and tau in a process: without the
    BIoU tables earlier pairs measured (`lattice_bands`)."""
    from reference import lattice_bands

    lattice_bands.forget_tables()
    return reference_all(a, b, spacing)


def reference_without_biou(a, b, spacing):
    import reference

    return reference.compute_metrics(
        a, b, spacing, percentile=PERCENTILE, tau=TAU_MM, metrics=NO_BIOU, bounds=False
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
        bounds=False,
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
        "certified": reference_certified,
        "ref_cold": reference_cold,
        "reference_noBIoU": reference_without_biou,
        "ref_centres": reference_at_centres,
        "deepmind": adapter_call("deepmind", NO_BIOU),
        "pymeshmetrics": adapter_call("meshmetrics", METRIC_KEYS),
        "pmm_noBIoU": adapter_call("meshmetrics", NO_BIOU),
        "segauge": adapter_call("segauge", NO_BIOU),
    }


COMPARED = {"deepmind": "dm", "pymeshmetrics": "pmm", "segauge": "sg"}
"""The tools whose values are set against the reference's (label -> short column name)."""

DELTA = "Δ"
"""Prefix of the columns of a tool's value minus the reference's: "Δsg HD95"."""


def differences(values: dict) -> dict:
    """Each compared tool's value minus the reference's, per metric both compute."""
    ours = values["reference"]
    return {
        f"{DELTA}{short} {metric}": float(values[label][metric]) - float(ours[metric])
        for label, short in COMPARED.items()
        for metric in NO_BIOU
        if metric in values.get(label, {})
    }


def time_call(
    call: Call, a, b, spacing, *, repeats: int, budget_s: float, warm: bool = True
) -> float:
    """Median wall seconds of `call`, run `repeats` times or until `budget_s` is spent, after
    one untimed call when `warm`: the first calls on a new pair pay for growing the process's
    memory to its size (the first tool timed on label 1 of a 3 mm CT took 0.110 s at the
    median of three calls, against 0.078 s once warm, and the tools timed after it did not
    pay). The untimed call also does each tool's imports and set-up."""
    if warm:
        call(a, b, spacing)
    seconds: list[float] = []
    while not seconds or (len(seconds) < repeats and sum(seconds) < budget_s):
        started = time.perf_counter()
        call(a, b, spacing)
        seconds.append(time.perf_counter() - started)
    return float(np.median(seconds))


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


def time_pair(calls, a, b, spacing, *, repeats: int, budget_s: float) -> dict:
    """Every tool's median seconds on one pair, the compared tools' differences from the
    reference (values of the timed calls), the reference's query profile and its brackets'
    widths."""
    values: dict[str, object] = {}

    def keeping(label: str, call: Call) -> Call:
        def kept(*arguments):
            values[label] = call(*arguments)
            return values[label]

        return kept

    row = {
        label: time_call(keeping(label, call), a, b, spacing, repeats=repeats, budget_s=budget_s)
        for label, call in calls.items()
    }
    return (
        row
        | differences(values)
        | query_profile(a, b, spacing, repeats=repeats)
        | bracket_widths(values["reference"], values["certified"])
    )


WIDTH = "w_"
"""Prefix of the bracket-width columns."""


OUTSIDE = "outside"
"""Column naming the metrics whose plain value (`bounds=False`) lies outside its proven
bracket ("-": none)."""

CERTIFIED_OUTSIDE = "cert outside"
"""Column naming the metrics whose certified value lies outside its bracket (always "-")."""

WIDE = "wide"
"""Column naming the brackets wider than their aims (`bounds.WIDTH_AIMS`; "-": none)."""

BRACKET_COLUMNS = (OUTSIDE, CERTIFIED_OUTSIDE, WIDE)


def bracket_widths(plain: dict, certified) -> dict:
    """The width of every metric's bracket (`certified.brackets`), the metrics whose plain and
    certified values lie outside it, and the brackets wider than their aims."""
    from reference.bounds import WIDTH_AIMS

    brackets = certified.brackets

    def outside(scores):
        return ",".join(key for key, one in brackets.items() if not one.holds(scores[key])) or "-"

    wide = [key for key, one in brackets.items() if one.width > WIDTH_AIMS.get(key, np.inf)]
    return (
        {WIDTH + key: one.width for key, one in brackets.items()}
        | {OUTSIDE: outside(plain), CERTIFIED_OUTSIDE: outside(certified)}
        | {WIDE: ",".join(wide) or "-"}
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
            rows.append(
                {
                    "pair": oar,
                    "category": OARS[oar],
                    "spacing": crosscheck.spacing_label(spacing),
                    "voxels": int(np.prod(pair.shape)),
                }
                | time_pair(
                    calls, pair.mask_a, pair.mask_b, spacing, repeats=repeats, budget_s=budget_s
                )
            )
            print(f"  timed {oar} {rows[-1]['spacing']}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def load_mask_files(reference_path, prediction_path, labels) -> dict[str, object]:
    """`--masks`: pair name -> `maskio.MaskPair`, one per label (or the two binary masks).

    Read before anything is timed, so a wrong path or label stops the run at once with
    maskio's message (which names the file and the problem)."""
    return timeable(
        (
            "binary masks" if label is None else f"label {label}",
            maskio.load_pair(reference_path, prediction_path, label),
        )
        for label in labels or [None]
    )


def load_study_pairs(tables: Sequence[Path], sample: int, seed: int) -> dict[str, object]:
    """`--pairs`: pair name ("case oar (voxel size)") -> `maskio.MaskPair`, for a sample of
    `sample` rows (drawn with `seed`; all when fewer) of a study's pairs.csv files."""
    from study.scoring.score import read_pairs

    rows = read_pairs(tables)
    rows = rows.sample(n=min(sample, len(rows)), random_state=seed).sort_index()
    return timeable(
        (f"{row.case} {row.oar} ({row.spacing})", maskio.load_pair(row.path_a, row.path_b))
        for row in rows.itertuples(index=False)
    )


def timeable(named_pairs) -> dict[str, object]:
    """The (name, pair) items with two non-empty masks, as a dict; each other one is said on
    stderr (an empty mask has nothing to time)."""
    pairs = {}
    for name, pair in named_pairs:
        if pair.a.any() and pair.b.any():
            pairs[name] = pair
        else:
            print(f"  skipped {name}: a mask is empty (nothing to time)", file=sys.stderr)
    return pairs


def time_mask_files(calls, pairs: dict, *, repeats: int, budget_s: float) -> pd.DataFrame:
    """The timings of `time_synthetic` on the pairs of `load_mask_files`."""
    rows = []
    for name, pair in pairs.items():
        rows.append(
            {
                "pair": name,
                "spacing": crosscheck.spacing_label(pair.spacing),
                "voxels": int(np.prod(pair.a.shape)),
            }
            | time_pair(calls, pair.a, pair.b, pair.spacing, repeats=repeats, budget_s=budget_s)
        )
        print(f"  timed {name}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def query_profile(a, b, spacing, *, repeats: int) -> dict:
    """Query points of the reference without BIoU, and the floor: one exact query per element.

    Every closest-element search of the reference goes through `_query` of its index (the
    lattice index, or fcpw's `SurfaceIndex`); both are wrapped here to count the points. The
    floor meshes both (cropped) masks as the reference does, indexes them and queries each
    mesh's element centres on the other, exactly.
    """
    from reference import api
    from reference.closest import SurfaceIndex
    from reference.lattice_index import LatticeIndex

    searched = [0]
    originals = {index: index.__dict__["_query"] for index in (SurfaceIndex, LatticeIndex)}

    def counting(original):
        def search(self, points, *arguments):
            searched[0] += len(points)
            return original(self, points, *arguments)

        return search

    for index, original in originals.items():
        index._query = counting(original)
    try:
        reference_without_biou(a, b, spacing)
    finally:
        for index, original in originals.items():
            index._query = original
    lower, upper = api._union_box(a, b)
    box = tuple(slice(lo, hi) for lo, hi in zip(lower, upper, strict=True))
    spacing_array = np.asarray(spacing, float)

    def floor_pass():
        surfaces = [
            api.mesh_surface(
                m[box], spacing_array, lower * spacing_array, "discrete_marching_cubes"
            )
            for m in (a, b)
        ]
        indexes = [SurfaceIndex(*surface) for surface in surfaces]
        for (vertices, cells), index in zip(surfaces, indexes[::-1], strict=True):
            index.query(vertices[cells].mean(axis=1))
        return sum(len(cells) for _, cells in surfaces)

    elements = floor_pass()
    floor = time_call(lambda *_: floor_pass(), a, b, spacing, repeats=repeats, budget_s=5.0)
    return {"elements": elements, "queried": searched[0], "floor": floor}


# ---------------------------------------------------------------------------------------------
# The compiled kernels' first-call cost in fresh processes.


def jit_child() -> None:
    """Body of a fresh process: import the API, then time two calls on a small pair."""
    started = time.perf_counter()
    import reference.api  # noqa: F401  (VTK, fcpw: imports, timed apart)
    import reference.elements  # noqa: F401  (numba; compiling happens at the first call)

    imported = time.perf_counter() - started
    a, b = crosscheck.analytic_mask_pair("offset", (1.0, 1.0, 1.0))
    seconds = []
    for _ in range(2):
        started = time.perf_counter()
        reference_all(a, b, (1.0, 1.0, 1.0))
        seconds.append(time.perf_counter() - started)
    print(json.dumps({"import": imported, "first": seconds[0], "second": seconds[1]}))


def first_call_costs(timeout_s: float = 600.0) -> dict[str, dict]:
    """{"cold": ..., "warm": ...}: fresh processes on an empty numba cache, then on the one
    the first left (NUMBA_CACHE_DIR points both at a temporary folder)."""
    import os

    costs = {}
    with tempfile.TemporaryDirectory() as folder:
        environment = dict(os.environ, NUMBA_CACHE_DIR=folder)
        for label in ("cold", "warm"):
            finished = subprocess.run(
                [sys.executable, __file__, "--jit-child"],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=environment,
            )
            if finished.returncode != 0:
                raise RuntimeError(f"JIT probe failed: {finished.stderr.strip()[-2000:]}")
            costs[label] = json.loads(finished.stdout.strip().splitlines()[-1])
    return costs


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
    return json.loads(finished.stdout.strip().splitlines()[-1])


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
    # This process's own peak (Linux reports ru_maxrss in KiB).
    result["peak_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(result))


def memory_of_large_pair(a, b, timeout_s: float) -> tuple[dict, dict]:
    """(baseline, with the reference) results of the two fresh processes, after a third on a
    small pair has compiled the kernels into numba's cache: on a cold cache the compiler's
    own memory raised the measured peak from 1.07 to 1.18 GB."""
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small_pair.npz"
        np.savez(small, **dict(zip("ab", large_pair(24), strict=True)))
        measure_in_child(small, compute=True, timeout_s=timeout_s)
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
        for metric in METRIC_KEYS:
            truth = item.mesh_limit.get(metric, item.analytic.get(metric))
            if truth is None:
                continue
            kind = "distance" if metric in MM_KEYS else "ratio"
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
    frame["pmm/ref noB"] = frame["pmm_noBIoU"] / frame["reference_noBIoU"]
    frame["us/query"] = 1e6 * frame["reference_noBIoU"] / frame["queried"]
    frame["us/floor"] = 1e6 * frame["floor"] / frame["elements"]
    frame["queried/elem"] = frame["queried"] / frame["elements"]
    frame["ref/dm"] = frame["reference"] / frame["deepmind"]
    frame["refnoB/dm"] = frame["reference_noBIoU"] / frame["deepmind"]
    frame["centres/dm"] = frame["ref_centres"] / frame["deepmind"]
    frame["cert/ref"] = frame["certified"] / frame["reference"]
    frame["pmm/cert"] = frame["pymeshmetrics"] / frame["certified"]
    frame["sg/refnoB"] = frame["segauge"] / frame["reference_noBIoU"]
    frame["sg/dm"] = frame["segauge"] / frame["deepmind"]
    return frame


def targets(
    timings: pd.DataFrame,
    accuracy: pd.DataFrame,
    peak_gb: float | None,
    memory_note: str,
    jit: dict | None,
) -> list[str]:
    """One line per target of issue #37 (met or not met, with the numbers behind it), and the
    figures it asks to be printed."""

    def verdict(ok: bool) -> str:
        return "MET" if ok else "NOT MET"

    speedup = float(timings["pmm/ref"].median())
    spacings = timings.groupby("spacing")["pmm/ref"].median()
    categories = timings.groupby("category")["pmm/ref"].median()
    worse = accuracy[accuracy.verdict == "worse"]
    met = (
        spacings.min() >= TARGET_SPEEDUP_OVER_PYMESHMETRICS
        and categories.min() >= TARGET_CATEGORY_SPEEDUP
    )
    lines = [
        f"[{verdict(met)}] all seven metrics: median pair >= "
        f"{TARGET_SPEEDUP_OVER_PYMESHMETRICS:g}x pymeshmetrics' speed at every voxel size and "
        f">= {TARGET_CATEGORY_SPEEDUP:g}x in every organ category: {speedup:.2f}x overall; "
        + ", ".join(f"{key} {value:.2f}x" for key, value in spacings.items())
        + "; "
        + ", ".join(f"{key} {value:.2f}x" for key, value in categories.items())
    ]
    cold = timings["pymeshmetrics"] / timings["ref_cold"]
    lines.append(
        f"[figure] first pair of a spacing and tau in a process (BIoU tables not yet measured): "
        f"pymeshmetrics / reference median per pair {float(cold.median()):.2f}x, worst "
        f"{float(cold.min()):.2f}x; BIoU's tables cost (cold minus warm, median per pair) "
        f"{float((timings['ref_cold'] - timings['reference']).median()):.3f} s"
    )
    medians = timings[["reference_noBIoU", "deepmind"]].median()
    ratio = medians["reference_noBIoU"] / medians["deepmind"]
    lines.append(
        f"[{verdict(ratio <= TARGET_RATIO_TO_DEEPMIND)}] without BIoU <= "
        f"{TARGET_RATIO_TO_DEEPMIND:g}x DeepMind's median per-pair time: "
        f"{medians['reference_noBIoU']:.3f} s vs {medians['deepmind']:.3f} s = "
        f"{ratio:.2f}x (median of per-pair ratios "
        f"{float(timings['refnoB/dm'].median()):.2f}x; like for like)"
    )
    lines += biou_split(timings)
    if peak_gb is None:
        lines.append(f"[NOT MET] peak memory <= {TARGET_PEAK_MEMORY_GB:g} GB: {memory_note}")
    else:
        lines.append(
            f"[{verdict(peak_gb <= TARGET_PEAK_MEMORY_GB)}] peak memory <= "
            f"{TARGET_PEAK_MEMORY_GB:g} GB on the large pair: {peak_gb:.2f} GB "
            f"({memory_note})"
        )
    lines.append(
        f"[figure] time per query point (reference without BIoU): median "
        f"{float(timings['us/query'].median()):.2f} us over "
        f"{float(timings['queried/elem'].median()):.2f} query points per boundary "
        f"element; floor (one exact query per element, index included) "
        f"{float(timings['us/floor'].median()):.2f} us per element"
    )
    if jit is None:
        lines.append("[figure] JIT first-call cost: not measured")
    else:
        lines.append(
            "[figure] JIT first-call cost (first minus second call, fresh process): "
            + "; ".join(
                f"{label} cache {cost['first'] - cost['second']:.2f} s"
                for label, cost in jit.items()
            )
            + f" (imports apart: {jit['warm']['import']:.2f} s)"
        )
    lines.append(
        f"[for scale] analytic accuracy against pymeshmetrics: "
        f"{(accuracy.verdict == 'better').sum()} better, "
        f"{(accuracy.verdict == 'equal').sum()} equal, {len(worse)} worse"
    )
    lines += segauge_figures(timings)
    lines += certification_targets(timings)
    centres = timings["ref_centres"].median()
    lines.append(
        f"[for scale] the reference's meshing and index at centres only (no "
        f"subdivision, interpolation or HD bracket; what pymeshmetrics measures): "
        f"{centres:.3f} s = {centres / medians['deepmind']:.2f}x DeepMind's median"
    )
    return lines


def certification_targets(timings: pd.DataFrame, pairs: str = "") -> list[str]:
    """The default, certified call's cost against the plain call (`TARGET_CERTIFIED_RATIO`),
    and pymeshmetrics' time against the certified call."""
    ratio = timings["cert/ref"]
    met = float(ratio.median()) <= TARGET_CERTIFIED_RATIO >= float(ratio.max())
    return [
        f"[{'MET' if met else 'NOT MET'}] {pairs}default (certified) call <= "
        f"{TARGET_CERTIFIED_RATIO:g}x the plain call (bounds=False): median per pair "
        f"{float(ratio.median()):.2f}x, largest {float(ratio.max()):.2f}x; pymeshmetrics / "
        f"certified median per pair {float(timings['pmm/cert'].median()):.2f}x; brackets wider "
        f"than their aims on {int((timings[WIDE] != '-').sum())} of {len(timings)} pairs"
    ]


def segauge_figures(timings: pd.DataFrame, pairs: str = "") -> list[str]:
    """segauge's time against the reference without BIoU and DeepMind (the same six metrics),
    and its largest distance to the reference per metric."""
    largest = ", ".join(
        f"{metric} {timings[f'{DELTA}sg {metric}'].abs().max():.3f}" for metric in NO_BIOU
    )
    return [
        f"[figure] {pairs}segauge (six metrics, no BIoU): median per pair "
        f"{float(timings['segauge'].median()):.3f} s = "
        f"{float(timings['sg/refnoB'].median()):.2f}x the reference without BIoU, "
        f"{float(timings['sg/dm'].median()):.2f}x DeepMind (medians of per-pair ratios); "
        f"largest |segauge - reference|: {largest}"
    ]


def biou_split(timings: pd.DataFrame, pairs: str = "") -> list[str]:
    """Where the all-seven ratio comes from: the two tools without BIoU, like for like, and
    BIoU alone (each pair's all-seven time minus its time without BIoU). `pairs` names the
    pairs in the line when they are not the synthetic ones."""
    reference_biou = (timings["reference"] - timings["reference_noBIoU"]).median()
    theirs_biou = (timings["pymeshmetrics"] - timings["pmm_noBIoU"]).median()
    return [
        f"[figure] {pairs}without BIoU, like for like: pymeshmetrics / reference median per-pair "
        f"{float(timings['pmm/ref noB'].median()):.2f}x; BIoU alone (all seven minus without "
        f"BIoU, median per pair): reference {reference_biou:.3f} s, pymeshmetrics "
        f"{theirs_biou:.3f} s"
    ]


def mask_file_targets(files: pd.DataFrame) -> list[str]:
    """The all-seven target on the `--masks` pairs (issue #37: real scans), and the same
    split as on the synthetic pairs."""
    speedup = files["pmm/ref"]
    first_pair = files["pymeshmetrics"] / files["ref_cold"]
    met = (
        float(speedup.median()) >= TARGET_MASK_FILE_SPEEDUP
        and float(speedup.min()) >= TARGET_MASK_FILE_EACH
    )
    return [
        f"[{'MET' if met else 'NOT MET'}] on the mask files (--masks, --pairs): all seven metrics, "
        f"median pair >= {TARGET_MASK_FILE_SPEEDUP:g}x pymeshmetrics' speed and every pair >= "
        f"{TARGET_MASK_FILE_EACH:g}x: median {float(speedup.median()):.2f}x (range "
        f"{float(speedup.min()):.2f}-{float(speedup.max()):.2f}x over {len(files)} pairs; "
        f"first pair of its spacing {float(first_pair.min()):.2f}x at worst); without BIoU "
        f"{float(files['refnoB/dm'].median()):.2f}x DeepMind's time (median per pair)",
        *biou_split(files, pairs="mask files: "),
        *certification_targets(files, pairs="mask files: "),
        *segauge_figures(files, pairs="mask files: "),
    ]


def print_tables(
    timings: pd.DataFrame,
    large: pd.DataFrame,
    accuracy: pd.DataFrame,
    files: pd.DataFrame | None = None,
) -> None:
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    seconds = "{:.3f}".format
    widths = [c for c in timings.columns if c.startswith(WIDTH)] + list(BRACKET_COLUMNS)
    deltas = [c for c in timings.columns if c.startswith(DELTA)]
    print("== Median seconds per pair (one call computing all of a tool's metrics)")
    print(timings.drop(columns=widths + deltas).to_string(index=False, float_format=seconds))
    numeric = [
        c
        for c in timings.columns
        if c not in ("pair", "category", "spacing", "voxels", *widths, *deltas)
    ]
    for by in (["category", "spacing"], ["category"], ["spacing"]):
        print(f"\n== Medians by {' and '.join(by)}")
        print(timings.groupby(by)[numeric].median().to_string(float_format=seconds))
    print("\n== All synthetic pairs: medians")
    print(timings[numeric].median().to_string(float_format=seconds))
    print("\n== Large pair (one run each)")
    print(large.to_string(index=False, float_format=seconds))
    print("\n== Analytic accuracy (errors against the exact values; see crosscheck_meshmetrics)")
    print(accuracy.to_string(index=False, float_format="{:.4f}".format))
    if files is not None:
        print("\n== Mask files (--masks, --pairs): median seconds per pair")
        print(files.drop(columns=widths + deltas).to_string(index=False, float_format=seconds))
    print_differences(timings, files, deltas)
    print_brackets(timings if files is None else pd.concat([timings, files]), widths)


def print_differences(timings: pd.DataFrame, files: pd.DataFrame | None, deltas) -> None:
    """segauge minus the reference per pair, and every compared tool's median |difference|
    per voxel size (the mask files a group of their own)."""
    both = timings if files is None else pd.concat([timings, files.assign(category="files")])
    print("\n== segauge minus the reference, per pair (mm; NSD and DSC as fractions)")
    own = [c for c in deltas if c.startswith(f"{DELTA}sg ")]
    print(both[["pair", "spacing", *own]].to_string(index=False, float_format="{:+.4f}".format))
    grouped = both.assign(group=both["spacing"].where(both["category"] != "files", "files"))
    apart = "" if files is None else " (the mask files apart)"
    print(f"\n== Median |tool - reference| per voxel size{apart}")
    medians = grouped.groupby("group", sort=False)[deltas].agg(lambda c: c.abs().median())
    print(medians.T.to_string(float_format="{:.4f}".format))


def print_brackets(frame: pd.DataFrame, widths: list[str]) -> None:
    """Per pair: the plain call (`bounds=False`, no brackets) and the default, certified one,
    median seconds, beside the other tools; each bracket's width (mm; NSD, BIoU, DSC as
    fractions), the metrics whose plain or certified value lies outside its bracket, and the
    brackets wider than their aims."""
    print(
        "\n== Bracket widths: plain call (bounds=False, no brackets) and default call "
        "(certified), median seconds per pair; widths in mm, NSD as a fraction"
    )
    others = [c for c in ("pymeshmetrics", "deepmind", "segauge") if c in frame.columns]
    columns = ["pair", "spacing", "reference", "certified", "cert/ref", "pmm/cert", *others]
    shown = frame[columns + widths].rename(columns={"reference": "plain"})
    print(shown.to_string(index=False, float_format="{:.3g}".format))
    print(
        "largest width per metric: "
        + ", ".join(
            f"{c[len(WIDTH) :]} {frame[c].max():.3g}" for c in widths if c.startswith(WIDTH)
        )
    )


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
        "--masks",
        nargs=2,
        type=Path,
        metavar=("REF", "PRED"),
        help="also time the pairs of these two mask files (same grid; for example real scans)",
    )
    parser.add_argument(
        "--label",
        nargs="+",
        type=maskio_cli.label,
        metavar="N",
        help="with --masks: the label values to time, one pair each (default: binary files)",
    )
    parser.add_argument(
        "--pairs",
        nargs="+",
        type=Path,
        metavar="PAIRS_CSV",
        help="also time a sample of a study's mask pairs (its pairs.csv files)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=20,
        help="with --pairs: how many pairs, drawn with --seed (default 20)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny run for tests: one small OAR, a 40^3 large pair, one repeat",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--jit-child", action="store_true", help=argparse.SUPPRESS)
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
    if args.label and not args.masks:
        parser.error("--label needs --masks REF PRED")
    if args.sample < 1:
        parser.error("--sample must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_arguments(argv)
    if args.jit_child:
        jit_child()
        return
    if args.child is not None:
        child(args.child, compute=not args.no_compute)
        return
    try:
        mask_files = load_mask_files(*args.masks, args.label) if args.masks else {}
        if args.pairs:
            mask_files |= load_study_pairs(args.pairs, args.sample, args.seed)
    except (maskio.InputError, FileNotFoundError) as error:
        sys.exit(f"error: {error}")
    with recorded(args.record):
        measure_and_print(args, mask_files)


def measure_and_print(args: argparse.Namespace, mask_files: dict) -> None:
    """Memory of the large pair, then every tool's time per pair (synthetic, then the pairs of
    `load_mask_files`), ratios and targets."""
    started, commit = time.perf_counter(), crosscheck.reference_commit()
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

    try:
        jit = first_call_costs()
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"JIT probe: {error}", file=sys.stderr)
        jit = None
    calls = tools()
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
    files = (
        add_ratios(time_mask_files(calls, mask_files, repeats=args.repeats, budget_s=args.budget))
        if mask_files
        else None
    )
    large = {
        "pair": f"spheres {args.large_size}^3",
        "reference (fresh process)": measured["seconds"],
    }
    # One call each, not warmed: a tool's 2 to 70 s there dwarf the memory it grows, and a
    # second call would double the benchmark's longest part.
    for label, call in calls.items():
        # The fresh process's call is the cold one; the certificate is timed on the pairs.
        if label not in ("reference", "ref_cold", "certified"):
            large[label] = time_call(call, a, b, LARGE_SPACING, repeats=1, budget_s=0, warm=False)
    spacings = ((2.0, 2.0, 2.0),) if args.quick else crosscheck.SPACINGS
    accuracy = accuracy_verdicts(spacings, args.limit_levels, 40 if args.quick else 150)

    import reference

    print(
        f"reference {reference.__version__} (commit {commit}); "
        f"case {args.case}, seed {args.seed}; repeats {args.repeats} after an untimed call"
    )
    print_tables(timings, pd.DataFrame([large]), accuracy, files)
    print("\n== Targets")
    for line in targets(timings, accuracy, peak_gb, note, jit):
        print(line)
    for line in [] if files is None else mask_file_targets(files):
        print(line)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
