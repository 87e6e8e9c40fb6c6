"""Convergence of the default subdivision: default scores minus a much finer uniform level.

python -m reference.convergence [--case 2] [--seed 20240215] [--oars A B ...] [--fine 4]

The fine values come from an independent path: every element split `fine` times (uniform),
HD as the largest distance at the fine element centres and corners (a lower bound of the
surface maximum), the other metrics from the same size-weighted definitions. Default HD comes from
the bracket of module `hausdorff`, so default HD - fine HD must be >= 0 and small.
The script synthesizes the pairs with the study package; the functions here do not need it.
"""

from __future__ import annotations

import argparse

import numpy as np

from reference.api import DEFAULT_SUBDIVISION, DISTANCE_KEYS, _distance_metrics, mesh_surface
from reference.closest import SurfaceIndex
from reference.metrics import directed_distances, split_elements, tie_threshold, weighted_metrics

DEFAULT_OARS = ("Cochlea_L", "OpticNrv_L", "Glnd_Submand_L", "Brainstem", "A_Carotid_L")
"""Two small, one midsize, one large and one tubular OAR."""

SPACINGS = ((1.0, 1.0, 1.0), (2.0, 2.0, 2.0), (0.5, 0.5, 2.0))


def fine_scores(surface_a, surface_b, *, fine: int, percentile: float = 95,
                tau: float = 2.0) -> dict[str, float]:
    """Distance metrics with every element split `fine` times; HD = max at fine centres and
    fine corners (the corners are the mesh vertices and the midpoints added by splitting)."""
    threshold = tie_threshold(tau, surface_a[0], surface_b[0])
    index_a, index_b = SurfaceIndex(*surface_a), SurfaceIndex(*surface_b)
    directions = ((surface_a, index_b), (surface_b, index_a))
    directed = [directed_distances(src[0][src[1]], target, percentile=percentile,
                                   threshold=threshold, subdivision=fine, refine="uniform")
                for src, target in directions]
    scores = weighted_metrics(*directed, percentile=percentile, threshold=threshold,
                                  tau=tau)
    for src, target in directions:
        scores["HD"] = max(scores["HD"], _max_at_fine_corners(src, target, fine))
    return scores


def _max_at_fine_corners(surface, target: SurfaceIndex, fine: int) -> float:
    corners = surface[0][surface[1]]
    for _ in range(fine):
        corners = split_elements(corners)
    points = np.unique(corners.reshape(-1, corners.shape[2]), axis=0)
    return float(target.query(points).distance.max())


def differences(a: np.ndarray, b: np.ndarray, spacing, *, fine: int = 4) -> dict[str, float]:
    """Default minus fine value of HD, HD95, MASD, ASSD, NSD for two non-empty masks."""
    spacing = np.asarray(spacing, float)
    origin = np.zeros(a.ndim)
    surface_a = mesh_surface(a, spacing, origin, "discrete_marching_cubes")
    surface_b = mesh_surface(b, spacing, origin, "discrete_marching_cubes")
    default = _distance_metrics(surface_a, surface_b, percentile=95, tau=2.0,
                                subdivision=DEFAULT_SUBDIVISION, refine="adaptive")[0]
    reference = fine_scores(surface_a, surface_b, fine=fine)
    return {key: float(default[key] - reference[key]) for key in DISTANCE_KEYS}


def main(argv: list[str] | None = None) -> None:
    from study.oars import OARS
    from study.synthetic import generate_case
    from study.voxelize import voxelize_pair

    parser = argparse.ArgumentParser(prog="python -m reference.convergence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20240215)
    parser.add_argument("--oars", nargs="+", default=list(DEFAULT_OARS))
    parser.add_argument("--fine", type=int, default=4, help="uniform subdivision levels")
    args = parser.parse_args(argv)
    meshes = generate_case(args.case, args.seed, oars=args.oars)
    print(f"case {args.case}, seed {args.seed}: default (adaptive, level {DEFAULT_SUBDIVISION},"
          f" HD bracket) minus uniform level {args.fine}; max |difference| per row\n")
    print("| category | spacing (mm) | OARs | " + " | ".join(DISTANCE_KEYS) + " |")
    print("|---|---|---|" + "---|" * len(DISTANCE_KEYS))
    categories = sorted({OARS[name] for name in args.oars})
    for category in categories:
        names = [name for name in args.oars if OARS[name] == category]
        for spacing in SPACINGS:
            worst = dict.fromkeys(DISTANCE_KEYS, 0.0)
            for name in names:
                pair = voxelize_pair(meshes[name]["A"], meshes[name]["B"], spacing)
                diff = differences(pair.mask_a, pair.mask_b, spacing, fine=args.fine)
                worst = {key: max(worst[key], abs(diff[key]), key=abs) for key in worst}
            cells = " | ".join(f"{worst[key]:.4f}" for key in DISTANCE_KEYS)
            print(f"| {category} | {spacing} | {', '.join(names)} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
