"""Cross-check the reference against the authors' MeshMetrics package (PyPI `pymeshmetrics`).

    python benchmarks/crosscheck_meshmetrics.py [--cases 1] [--oars all] [--quick] [--json FILE]

Both implementations get the same inputs:

* analytic spheres (concentric and offset) voxelized at every voxel size, with the closed-form
  values of the continuous shapes (`reference.analytic`) printed beside both results;
* the same spheres as finely tessellated surfaces, where the closed-form values are exact up to
  the tessellation (this isolates the distance and BIoU algorithms from voxelization);
* the synthetic HaN-Seg-style OARs (`study.dataset.synthetic`) voxelized at (1,1,1), (2,2,2) and
  (0.5,0.5,2) mm;
* empty masks (one or both), to show how each package reports them.

Printed: per pair and metric the difference reference - pymeshmetrics, flagged (*) when it
exceeds 0.05 mm (HD, HD95, MASD, ASSD) or 0.005 (NSD, BIoU, DSC); a summary per voxel size;
and for the analytic cases which of the two lies closer to the closed-form value.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU, METRIC_KEYS, MM_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

DISTANCE_FLAG_MM = 0.05
RATIO_FLAG = 0.005
SPACINGS: tuple[tuple[float, float, float], ...] = (
    (1.0, 1.0, 1.0),
    (2.0, 2.0, 2.0),
    (0.5, 0.5, 2.0),
)
PERCENTILE, TAU_MM = DEFAULT_PERCENTILE, DEFAULT_TAU
SEED = 20240215

# Sphere geometry of the analytic cases (mm). The gap 1.5 mm < tau makes concentric NSD = 1;
# the 2.5 mm offset puts tau inside the distance distribution, so NSD is fractional. Centres
# sit off the voxel lattice so no symmetry of the grid hides an error.
RADIUS_MM = 10.0
OUTER_RADIUS_MM = 11.5
OFFSET_MM = 2.5
OFFSET_DIRECTION = np.array([1.0, 2.0, 2.0]) / 3.0
MARGIN_MM = 4.0

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Comparison:
    """Both implementations' scores on one input, and the closed-form values if known."""

    source: str  # "analytic-mask", "analytic-surface" or "synthetic"
    name: str
    category: str
    spacing: str
    reference: dict[str, float]
    meshmetrics: dict[str, float]
    analytic: dict[str, float] = field(default_factory=dict)
    mesh_limit: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def difference(self, metric: str) -> float:
        """reference - pymeshmetrics; 0 when both are the same non-finite value."""
        ours, theirs = self.reference[metric], self.meshmetrics[metric]
        if ours == theirs:  # also inf == inf
            return 0.0
        return ours - theirs

    def flagged(self, metric: str) -> bool:
        return is_flagged(metric, self.difference(metric))


def is_flagged(metric: str, difference: float) -> bool:
    """True when |difference| exceeds 0.05 mm (distances) or 0.005 (ratios), or is NaN."""
    limit = DISTANCE_FLAG_MM if metric in MM_KEYS else RATIO_FLAG
    return not abs(difference) <= limit


def spacing_label(spacing: Sequence[float]) -> str:
    return "x".join(f"{s:g}" for s in spacing)


# ---------------------------------------------------------------------------------------------
# The two implementations.


def run_reference(a: np.ndarray, b: np.ndarray, spacing) -> tuple[dict[str, float], float]:
    """Reference scores of two masks and the seconds the call took."""
    import reference

    started = time.perf_counter()
    scores = reference.compute_metrics(a, b, spacing, percentile=PERCENTILE, tau=TAU_MM)
    return scores, time.perf_counter() - started


def run_meshmetrics(a: np.ndarray, b: np.ndarray, spacing) -> tuple[dict[str, float], float]:
    """pymeshmetrics scores through the project's adapter (a = ref, b = pred)."""
    from adapters import REGISTRY

    started = time.perf_counter()
    scores = REGISTRY["meshmetrics"].compute(
        a, b, spacing, metrics=METRIC_KEYS, percentile=PERCENTILE, tau=TAU_MM
    )
    return scores, time.perf_counter() - started


def meshmetrics_on_surfaces(surface_a, surface_b, spacing) -> dict[str, float]:
    """pymeshmetrics on two vtkPolyData surfaces; it voxelizes them at `spacing` for BIoU/DSC."""
    from meshmetrics import DistanceMetrics

    tool = DistanceMetrics(verbose=False)
    tool.set_input(ref=surface_a, pred=surface_b, spacing=spacing)
    return {
        "HD": tool.hd(),
        "HD95": tool.hd(PERCENTILE),
        "MASD": tool.masd(),
        "ASSD": tool.assd(),
        "NSD": tool.nsd(TAU_MM),
        "BIoU": tool.biou(TAU_MM),
        "DSC": tool.dsc(),
    }


def mesh_limit_values(a: np.ndarray, b: np.ndarray, spacing, levels: int) -> dict[str, float]:
    """HD, HD95, MASD, ASSD, NSD between the meshes of two masks, from a finely split mesh.

    An independent path to the exact values of the defined metrics on the meshed masks:
    pymeshmetrics' own meshing (discrete marching cubes) and centroid distances (VTK), after
    every triangle is split into 4^levels (vtkLinearSubdivisionFilter keeps the surface
    unchanged). Centroid sampling then errs by at most the size of the small triangles, so the
    values converge to the continuous mesh-to-mesh integrals and extremes, which neither
    implementation's shortcuts (centroids only; selective refinement) can move.
    """
    import vtk
    from meshmetrics import DistanceMetrics, np2sitk, vtk_meshing

    meshes = []
    for mask in (a, b):
        image = np2sitk(mask.astype(np.uint8))
        image.SetSpacing(tuple(float(s) for s in spacing))
        split = vtk.vtkLinearSubdivisionFilter()
        split.SetInputData(vtk_meshing(image))
        split.SetNumberOfSubdivisions(levels)
        split.Update()
        meshes.append(split.GetOutput())
    tool = DistanceMetrics(verbose=False)
    tool.set_input(ref=meshes[0], pred=meshes[1], spacing=spacing)
    return {
        "HD": tool.hd(),
        "HD95": tool.hd(PERCENTILE),
        "MASD": tool.masd(),
        "ASSD": tool.assd(),
        "NSD": tool.nsd(TAU_MM),
    }


# ---------------------------------------------------------------------------------------------
# Inputs.


def sphere_geometry(spacing, outer_radius: float):
    """Grid shape and a centre off the lattice for spheres of up to `outer_radius` (+ offset)."""
    spacing = np.asarray(spacing, float)
    extent = 2 * (outer_radius + OFFSET_MM + MARGIN_MM)
    shape = tuple(int(n) for n in np.ceil(extent / spacing) + 1)
    # 0.37, 0.21, 0.13 of a voxel: no mirror symmetry of the sphere coincides with the grid's.
    centre = (np.array(shape) // 2) * spacing + np.array([0.37, 0.21, 0.13]) * spacing
    return shape, centre


def analytic_values(kind: str) -> dict[str, float]:
    from reference import analytic

    if kind == "concentric":
        return analytic.concentric(RADIUS_MM, OUTER_RADIUS_MM, TAU_MM, 3)
    return analytic.offset_spheres(RADIUS_MM, OFFSET_MM, TAU_MM, PERCENTILE)


def analytic_mask_pair(kind: str, spacing) -> tuple[np.ndarray, np.ndarray]:
    """Voxelized concentric (radii 10 and 11.5 mm) or offset (10 mm, 2.5 mm apart) spheres."""
    from reference.analytic import ball_mask

    shape, centre = sphere_geometry(spacing, OUTER_RADIUS_MM)
    a = ball_mask(shape, spacing, RADIUS_MM, centre)
    if kind == "concentric":
        return a, ball_mask(shape, spacing, OUTER_RADIUS_MM, centre)
    return a, ball_mask(shape, spacing, RADIUS_MM, centre + OFFSET_MM * OFFSET_DIRECTION)


def analytic_surface_pair(kind: str, resolution: int):
    """The same spheres as tessellations: (vertices, cells) for the reference, vtkPolyData."""
    from reference.analytic import sphere_surface

    centre = np.zeros(3)
    other_radius, other_centre = (
        (OUTER_RADIUS_MM, centre)
        if kind == "concentric"
        else (RADIUS_MM, centre + OFFSET_MM * OFFSET_DIRECTION)
    )
    return (
        sphere_surface(RADIUS_MM, centre, resolution),
        sphere_surface(other_radius, other_centre, resolution),
    )


def polydata(surface) -> object:
    """vtkPolyData of a (vertices, triangles) surface, coordinates in the order given."""
    from reference.meshing import to_polydata, vtk_points

    vertices, cells = surface
    return to_polydata(vtk_points(np.asarray(vertices, dtype=float)), cells)


def analytic_mask_comparisons(spacings, limit_levels: int) -> Iterator[Comparison]:
    for spacing in spacings:
        for kind in ("concentric", "offset"):
            a, b = analytic_mask_pair(kind, spacing)
            ours, ours_s = run_reference(a, b, spacing)
            theirs, theirs_s = run_meshmetrics(a, b, spacing)
            yield Comparison(
                "analytic-mask",
                f"spheres {kind}",
                "analytic",
                spacing_label(spacing),
                ours,
                theirs,
                analytic_values(kind),
                mesh_limit_values(a, b, spacing, limit_levels),
                {"reference": ours_s, "meshmetrics": theirs_s},
            )


def analytic_surface_comparisons(resolution: int, grid_spacing) -> Iterator[Comparison]:
    """Tessellated spheres; pymeshmetrics voxelizes them at `grid_spacing` for BIoU and DSC."""
    import reference

    for kind in ("concentric", "offset"):
        surface_a, surface_b = analytic_surface_pair(kind, resolution)
        started = time.perf_counter()
        ours = reference.compute_surface_metrics(
            surface_a, surface_b, percentile=PERCENTILE, tau=TAU_MM
        )
        ours_s = time.perf_counter() - started
        started = time.perf_counter()
        theirs = meshmetrics_on_surfaces(polydata(surface_a), polydata(surface_b), grid_spacing)
        theirs_s = time.perf_counter() - started
        yield Comparison(
            "analytic-surface",
            f"spheres {kind}",
            "analytic",
            f"surface ({spacing_label(grid_spacing)})",
            ours,
            theirs,
            analytic_values(kind),
            {},
            {"reference": ours_s, "meshmetrics": theirs_s},
        )


def synthetic_comparisons(
    cases: Sequence[int], oars: Sequence[str] | None, spacings, seed: int = SEED
) -> Iterator[Comparison]:
    """Every OAR pair of every case at every voxel size; empty observers are skipped."""
    from study.dataset.synthetic import case_id, generate_case
    from study.dataset.voxelize import voxelize_pair
    from study.oars import OARS

    for case in cases:
        for oar, meshes in generate_case(case, seed, oars).items():
            for spacing in spacings:
                pair = voxelize_pair(meshes["A"], meshes["B"], spacing)
                if not (pair.mask_a.any() and pair.mask_b.any()):
                    print(
                        f"skipped {case_id(case)} {oar} {spacing_label(spacing)}: "
                        "an observer is empty at this voxel size",
                        file=sys.stderr,
                    )
                    continue
                ours, ours_s = run_reference(pair.mask_a, pair.mask_b, spacing)
                theirs, theirs_s = run_meshmetrics(pair.mask_a, pair.mask_b, spacing)
                yield Comparison(
                    "synthetic",
                    f"{case_id(case)} {oar}",
                    OARS[oar],
                    spacing_label(spacing),
                    ours,
                    theirs,
                    {},
                    {},
                    {"reference": ours_s, "meshmetrics": theirs_s},
                )


def empty_mask_outputs() -> pd.DataFrame:
    """What each package returns when mask a, or both masks, are empty (1 mm grid)."""
    from reference.analytic import ball_mask

    shape, spacing = (12, 12, 12), (1.0, 1.0, 1.0)
    full = ball_mask(shape, spacing, 4.0, (6.2, 6.1, 5.9))
    empty = np.zeros(shape, bool)
    rows = []
    for case, (a, b) in {"a empty": (empty, full), "both empty": (empty, empty)}.items():
        for tool, run in (("reference", run_reference), ("pymeshmetrics", run_meshmetrics)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                scores, _ = run(a, b, spacing)
            rows.append(
                {
                    "case": case,
                    "tool": tool,
                    **{m: scores[m] for m in METRIC_KEYS},
                    "warned": bool(caught),
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# Reports.


def analytic_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """Per analytic input and metric: closed form, both results, errors and the closer one."""
    rows = []
    for item in comparisons:
        for metric in METRIC_KEYS:
            if metric not in item.analytic:
                continue
            exact = float(item.analytic[metric])
            error_ours = item.reference[metric] - exact
            error_theirs = item.meshmetrics[metric] - exact
            limit = float(item.mesh_limit.get(metric, np.nan))
            rows.append(
                {
                    "input": item.name,
                    "grid": item.spacing,
                    "metric": metric,
                    "analytic": exact,
                    "mesh_limit": limit,
                    "reference": item.reference[metric],
                    "pymeshmetrics": item.meshmetrics[metric],
                    "err_ref": error_ours,
                    "err_pmm": error_theirs,
                    "closer": closer(error_ours, error_theirs),
                    "closer_to_limit": closer(
                        item.reference[metric] - limit, item.meshmetrics[metric] - limit
                    ),
                    "flag": "*" if item.flagged(metric) else "",
                }
            )
    return pd.DataFrame(rows)


def closer(error_ours: float, error_theirs: float) -> str:
    """Which implementation has the smaller error; "tie" within 1e-4, "-" when unknown."""
    if math.isnan(error_ours) or math.isnan(error_theirs):
        return "-"
    if abs(abs(error_ours) - abs(error_theirs)) <= 1e-4:
        return "tie"
    return "reference" if abs(error_ours) < abs(error_theirs) else "pymeshmetrics"


def difference_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """One row per input pair: reference - pymeshmetrics per metric, '*' where flagged."""
    rows = []
    for item in comparisons:
        row = {
            "source": item.source,
            "pair": item.name,
            "category": item.category,
            "spacing": item.spacing,
        }
        for metric in METRIC_KEYS:
            row[metric] = f"{item.difference(metric):+.4f}{'*' if item.flagged(metric) else ''}"
        rows.append(row)
    return pd.DataFrame(rows)


def summary_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """Per source, voxel size and metric: count, mean, min, max of the difference, flags."""
    rows = [
        {
            "source": item.source,
            "spacing": item.spacing,
            "metric": metric,
            "difference": item.difference(metric),
            "flagged": item.flagged(metric),
        }
        for item in comparisons
        for metric in METRIC_KEYS
    ]
    frame = pd.DataFrame(rows)
    grouped = frame.groupby(["source", "spacing", "metric"], sort=False)
    summary = grouped.difference.agg(n="count", mean="mean", min="min", max="max")
    summary["flagged"] = grouped.flagged.sum()
    return summary.reset_index()


def reference_commit() -> str:
    """Last commit touching reference/ (+ a note if reference/ has uncommitted edits).

    Called before the reference is imported, so a printed table names the code it measured.
    """

    def git(*arguments: str) -> str:
        said = subprocess.run(
            ["git", "-C", str(REPO), *arguments], capture_output=True, text=True, timeout=10
        )
        return said.stdout.strip()

    try:
        commit = git("log", "-1", "--format=%h %cs", "--", "reference") or "unknown"
        edited = git("status", "--porcelain", "--", "reference")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + (" + uncommitted edits" if edited else "")


def print_report(comparisons: Sequence[Comparison], empties: pd.DataFrame, commit: str) -> None:
    import meshmetrics

    import reference

    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 1000)
    print(
        f"reference {reference.__version__} (commit {commit}), "
        f"pymeshmetrics {meshmetrics.__version__}; p = {PERCENTILE:g}, tau = {TAU_MM:g} mm"
    )
    print(
        f"flag: |reference - pymeshmetrics| > {DISTANCE_FLAG_MM} mm (HD, HD95, MASD, ASSD) "
        f"or > {RATIO_FLAG} (NSD, BIoU, DSC)\n"
    )
    analytic = [c for c in comparisons if c.analytic]
    if analytic:
        print("== Analytic spheres: closed form of the continuous shapes (analytic) and the exact")
        print("   values between the meshes of the voxelized masks (mesh_limit, split meshes)")
        print(analytic_table(analytic).to_string(index=False, float_format="{:.4f}".format))
        print()
    print("== Differences reference - pymeshmetrics per pair (* = flagged)")
    print(difference_table(comparisons).to_string(index=False))
    print("\n== Summary of differences per voxel size")
    print(summary_table(comparisons).to_string(index=False, float_format="{:+.4f}".format))
    flagged = sum(c.flagged(m) for c in comparisons for m in METRIC_KEYS)
    print(f"\nflagged: {flagged} of {len(comparisons) * len(METRIC_KEYS)} (pair, metric) values")
    print("\n== Empty masks (values as returned; warned = a warning was issued)")
    print(empties.to_string(index=False))


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", type=int, nargs="+", default=[1], help="synthetic case numbers (default: 1)"
    )
    parser.add_argument("--oars", nargs="+", default=["all"], help="OAR names, or 'all' (default)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--surface-resolution",
        type=int,
        default=150,
        help="theta/phi resolution of the tessellated spheres",
    )
    parser.add_argument(
        "--limit-levels",
        type=int,
        default=3,
        help="splits (x4 triangles each) for the mesh-limit values",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny run for tests: 2 mm grid, one small OAR, coarse spheres",
    )
    parser.add_argument("--json", type=Path, help="also write every comparison to this file")
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    args.spacings = SPACINGS
    if args.quick:
        args.spacings, args.oars = ((2.0, 2.0, 2.0),), ["Cochlea_L"]
        args.surface_resolution, args.limit_levels = 40, 2
    if args.oars == ["all"]:
        args.oars = None
    if args.surface_resolution < 8:
        parser.error("--surface-resolution must be at least 8")
    if not 0 <= args.limit_levels <= 5:
        parser.error("--limit-levels must be between 0 and 5")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_arguments(argv)
    started, commit = time.perf_counter(), reference_commit()
    with recorded(args.record):
        comparisons = [
            *analytic_mask_comparisons(args.spacings, args.limit_levels),
            *analytic_surface_comparisons(args.surface_resolution, (0.5, 0.5, 0.5)),
            *synthetic_comparisons(args.cases, args.oars, args.spacings, args.seed),
        ]
        empties = empty_mask_outputs()
        print_report(comparisons, empties, commit)
        print(f"\n{len(comparisons)} pairs in {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "comparisons": [asdict(c) for c in comparisons],
                    "empty_masks": empties.to_dict(orient="records"),
                },
                default=_json_number,
                indent=1,
            )
        )


def _json_number(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


if __name__ == "__main__":
    main()
