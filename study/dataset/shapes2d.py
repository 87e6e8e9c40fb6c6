"""The synthetic 2D set: pairs of plane shapes of known geometry, one pair per category.

Each case holds four pairs of outlines (closed polygons of `SEGMENTS` vertices, fine enough
that they are the shapes to within 1e-3 mm), drawn by two "observers" that differ the way
readers of a slice do, by a seeded amount:

- Discs (small): two discs of radius r, B shifted by s from A. HD = s, and every grid
  voxelizes them anew, so the masks differ from the discs by the staircase;
- Disc_in_ellipse (midsize): a disc of radius r in an ellipse of semi-axes (r + e1, r - e2),
  both about one centre;
- Thin_bars (tubular): a bar 1.5 mm wide and 30 mm long and the same bar moved across by a
  fraction of its width and turned by a small angle: thinner than a 2 mm pixel, so coarse
  grids lose it in places (the 2D analogue of the thin tubular organs);
- Squares (large): a square of side 24 mm and the same square turned about its centre.

Centres get a sub-pixel jitter per case, so no grid samples two cases alike. The meshes go to
<folder>/meshes/<case>/ with the synthetic generator's manifest (`study.dataset.meshes`), so
the workflow voxelizes them at the 2D voxel sizes as it does the 3D organs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from vtkmodules.vtkCommonDataModel import vtkPolyData

from study.dataset.meshes import check_closed, outline_from_loops
from study.dataset.synthetic import write_case_meshes

SEGMENTS = 720
"""Vertices per round outline: a chord's sagitta at radius 10 mm is then 1e-4 mm."""

Pair = dict[str, vtkPolyData]


def _ellipse(centre, radii, angle=0.0) -> np.ndarray:
    t = np.linspace(0.0, 2 * np.pi, SEGMENTS, endpoint=False)
    points = np.column_stack([radii[0] * np.cos(t), radii[1] * np.sin(t)])
    return _turned(points, angle) + centre


def _rectangle(centre, sides, angle=0.0) -> np.ndarray:
    half = np.asarray(sides, float) / 2
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
    return _turned(corners, angle) + centre


def _turned(points: np.ndarray, angle_deg: float) -> np.ndarray:
    angle = np.radians(angle_deg)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return points @ rotation.T


def _discs(rng: np.random.Generator, centre: np.ndarray) -> list[np.ndarray]:
    radius = rng.uniform(3.0, 5.0)
    direction = rng.uniform(0, 2 * np.pi)
    shift = rng.uniform(0.5, 1.5) * np.array([np.cos(direction), np.sin(direction)])
    return [_ellipse(centre, (radius, radius)), _ellipse(centre + shift, (radius, radius))]


def _disc_in_ellipse(rng: np.random.Generator, centre: np.ndarray) -> list[np.ndarray]:
    radius = rng.uniform(7.0, 9.0)
    radii = (radius + rng.uniform(0.5, 2.0), radius - rng.uniform(0.5, 2.0))
    return [_ellipse(centre, (radius, radius)), _ellipse(centre, radii, rng.uniform(0, 180))]


def _thin_bars(rng: np.random.Generator, centre: np.ndarray) -> list[np.ndarray]:
    angle = rng.uniform(0, 180)
    across = _turned(np.array([[0.0, rng.uniform(0.3, 0.9)]]), angle)[0]
    return [
        _rectangle(centre, (30.0, 1.5), angle),
        _rectangle(centre + across, (30.0, 1.5), angle + rng.uniform(1.0, 3.0)),
    ]


def _squares(rng: np.random.Generator, centre: np.ndarray) -> list[np.ndarray]:
    angle = rng.uniform(0, 90)
    return [
        _rectangle(centre, (24.0, 24.0), angle),
        _rectangle(centre, (24.0, 24.0), angle + rng.uniform(5.0, 15.0)),
    ]


SHAPES: dict[str, tuple[str, Callable[[np.random.Generator, np.ndarray], list[np.ndarray]]]] = {
    "Discs": ("small", _discs),
    "Disc_in_ellipse": ("midsize", _disc_in_ellipse),
    "Thin_bars": ("tubular", _thin_bars),
    "Squares": ("large", _squares),
}
"""Name -> (size category, the two observers' polygons from a generator and a centre)."""


def generate_case(case: int, seed: int) -> dict[str, Pair]:
    """Every shape pair of one case: name -> {"A": outline, "B": outline}, checked closed."""
    pairs = {}
    for number, (name, (_, draw)) in enumerate(SHAPES.items()):
        rng = np.random.default_rng([seed, case, number])
        centre = np.array([40.0, 40.0]) + rng.uniform(-0.5, 0.5, size=2)
        outlines = [outline_from_loops([polygon]) for polygon in draw(rng, centre)]
        for observer, outline in zip("AB", outlines, strict=True):
            check_closed(outline, name=f"2D shape {name} case {case} observer {observer}")
        pairs[name] = dict(zip("AB", outlines, strict=True))
    return pairs


def write_case(folder: str | Path, case: int, seed: int) -> Path:
    """One case's outlines into folder/meshes/<case_id>/ with its manifest.csv; that path."""
    categories = {name: category for name, (category, _) in SHAPES.items()}
    return write_case_meshes(folder, case, seed, generate_case(case, seed), categories)
