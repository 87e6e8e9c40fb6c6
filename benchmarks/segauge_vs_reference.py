"""Where segauge's distances part from the reference's: definition, point sampling, meshing.

    python benchmarks/segauge_vs_reference.py [--masks REF PRED --label N ...] [--record FILE]

segauge meshes each mask (marching cubes at level 0.5 with the spacing, triangles split until
no edge is longer than the smallest voxel size) and measures, from each triangle's centre, the
distance to the nearest of the other mesh's sample points (its vertices and triangle centres).
Per pair, HD95, MASD and NSD (tau 2 mm) are taken four ways, each one change from the last:

* segauge: its own values (`surface_metrics`);
* + HDp: the same distances with the reference's HD95, the larger of the two directed
  area-weighted step percentiles (segauge pools both directions and interpolates); MASD and
  NSD do not change;
* + exact: the same triangle centres, each measured exactly to the other mesh's triangles
  (the reference's closest-element search) rather than to its nearest sample point;
* reference: the reference (its own meshing, subdivision where tau and the percentile run
  through an element, interpolation).

So "HDp" is the definition's share of segauge - reference, "exact" the point sampling's, and
what remains (reference - exact) the meshing and quadrature. The meshes are rebuilt here the
way segauge builds them, and checked to give its distances to round-off before anything is
swapped. Pairs: two balls of radius 8 mm, centres (1, 2, 3) mm and (0, 0, 3) mm apart, at 1 mm
and (0.5, 0.5, 2) mm; with --masks, the pairs of two mask files too (one per --label).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

import maskio
from maskio import cli as maskio_cli
from reference.analytic import offset_ball_masks
from vocabulary import DEFAULT_PERCENTILE, DEFAULT_TAU

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

PERCENTILE, TAU_MM = DEFAULT_PERCENTILE, DEFAULT_TAU
SPACINGS = ((1.0, 1.0, 1.0), (0.5, 0.5, 2.0))
OFFSETS = ((1.0, 2.0, 3.0), (0.0, 0.0, 3.0))
STEPS = ("segauge", "+ HDp", "+ exact", "reference")


def rebuilt_mesh(mask: np.ndarray, spacing: Sequence[float]):
    """The surface segauge measures on, built from its documented steps (trimesh mesh)."""
    import trimesh
    from skimage.measure import marching_cubes

    padded = np.pad(mask.astype(np.float32), 1)
    vertices, faces, _, _ = marching_cubes(padded, level=0.5, spacing=tuple(spacing))
    mesh = trimesh.Trimesh(vertices=vertices, faces=faces, process=False)
    return mesh.subdivide_to_size(min(spacing))


def step_percentile(distances: np.ndarray, weights: np.ndarray, percentile: float) -> float:
    """The smallest distance at which the weight within reaches `percentile` %."""
    order = np.argsort(distances)
    reached = np.cumsum(weights[order]) >= percentile / 100 * weights.sum() * (1 - 1e-12)
    return float(distances[order][np.argmax(reached)])


def pooled_percentile(distances: np.ndarray, weights: np.ndarray, percentile: float) -> float:
    """segauge's reading: both directions in one set, each distance at the middle of its
    weight on the cumulative distribution, interpolated."""
    order = np.argsort(distances)
    middles = np.cumsum(weights[order]) - weights[order] / 2
    return float(np.interp(percentile / 100, middles / weights.sum(), distances[order]))


def summary(directed: list[tuple[np.ndarray, np.ndarray]], pooled_hdp: bool) -> dict:
    """HD95, MASD, NSD of (distances, weights) of both directions."""
    pooled = [np.concatenate(parts) for parts in zip(*directed, strict=True)]
    hdp = (
        pooled_percentile(*pooled, PERCENTILE)
        if pooled_hdp
        else max(step_percentile(d, w, PERCENTILE) for d, w in directed)
    )
    return {
        "HD95": hdp,
        "MASD": float(np.mean([np.average(d, weights=w) for d, w in directed])),
        "NSD": float(pooled[1][pooled[0] <= TAU_MM].sum() / pooled[1].sum()),
    }


def four_ways(a: np.ndarray, b: np.ndarray, spacing: Sequence[float]) -> dict[str, dict]:
    """STEPS -> {metric: value} on one pair (a the reference's first mask, b segauge's pred)."""
    import segauge

    import reference
    from reference.closest import SurfaceIndex

    own = segauge.surface_metrics(b, a, spacing, nsd_tolerance=TAU_MM)
    found = segauge.compute_surface_distances(b, a, spacing)
    sampled = [(found.d_pg, found.w_pg), (found.d_gp, found.w_gp)]
    meshes = [rebuilt_mesh(m, spacing) for m in (b, a)]
    exact = []
    for (distances, weights), mesh, other in zip(sampled, meshes, meshes[::-1], strict=True):
        centres = np.asarray(mesh.triangles_center)
        nearest = SurfaceIndex(np.asarray(other.vertices), np.asarray(other.faces)).query(centres)
        if len(centres) != len(distances) or not np.allclose(
            np.sort(mesh.area_faces), np.sort(weights), rtol=1e-9, atol=1e-12
        ):
            raise RuntimeError("the rebuilt meshes are not segauge's")
        if np.any(nearest.distance > distances + 1e-9):  # same triangles, same order
            raise RuntimeError("an exact distance exceeds segauge's sampled one")
        exact.append((nearest.distance, np.asarray(mesh.area_faces)))
    ours = reference.compute_metrics(a, b, spacing, percentile=PERCENTILE, tau=TAU_MM)
    check = summary(sampled, pooled_hdp=True)
    if not all(np.isclose(check[m], own[m.lower()], atol=1e-9) for m in check):
        raise RuntimeError(f"segauge's own values not reproduced: {check} vs {own}")
    return {
        "segauge": check,
        "+ HDp": summary(sampled, pooled_hdp=False),
        "+ exact": summary(exact, pooled_hdp=False),
        "reference": {m: float(ours[m]) for m in check},
    }


def rows_of(name: str, a, b, spacing) -> list[dict]:
    ways = four_ways(a, b, spacing)
    label = "x".join(f"{s:g}" for s in spacing)
    rows = []
    for metric in ("HD95", "MASD", "NSD"):
        values = {step: ways[step][metric] for step in STEPS}
        rows.append(
            {"pair": name, "spacing": label, "metric": metric}
            | values
            | {
                "Δ sg-ref": values["segauge"] - values["reference"],
                "definition": values["segauge"] - values["+ HDp"],
                "sampling": values["+ HDp"] - values["+ exact"],
                "meshing": values["+ exact"] - values["reference"],
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--masks", nargs=2, type=Path, metavar=("REF", "PRED"))
    parser.add_argument("--label", nargs="+", type=maskio_cli.label, metavar="N")
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    with recorded(args.record):
        rows = []
        for offset in OFFSETS:
            for spacing in SPACINGS:
                a, b = offset_ball_masks(spacing, radii=(8.0, 8.0), offset=offset)
                rows += rows_of(f"balls {offset}", a, b, spacing)
        for label in (args.label or [None]) if args.masks else []:
            pair = maskio.load_pair(*args.masks, label)
            if pair.a.any() and pair.b.any():
                rows += rows_of(f"label {label}", pair.a, pair.b, pair.spacing)
        pd.set_option("display.width", 200)
        frame = pd.DataFrame(rows)
        print("== segauge, one change at a time, and the reference (mm; NSD a fraction)")
        print("definition = segauge - (+ HDp); sampling = (+ HDp) - (+ exact);")
        print("meshing = (+ exact) - reference (meshing and quadrature)")
        print(frame.to_string(index=False, float_format="{:+.4f}".format))


if __name__ == "__main__":
    main()
