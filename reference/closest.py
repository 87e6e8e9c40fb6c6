"""Closest points on a surface: a float32 BVH finds the closest element, float64 measures it.

The index of general surfaces (`compute_surface_metrics`, and masks meshed otherwise than by
discrete marching cubes); lattice meshes are searched by the cube index of module
`lattice_index`, which shares this interface. The exact re-measure is `elements.to_cells`
(numpy's arithmetic to the last bit, without its (k, 3) temporaries). Measured before
choosing (docs/reference.md, Speed): a compiled float64 BVH (binned surface-area splits,
scalar numba code) took 1.6-1.8x fcpw's time per query, and where two elements are equally
close (common on voxel meshes) it names another element than fcpw, which moves MASD and ASSD
by up to 5e-5 mm through the subdivision's bounds. So the search is fcpw's.

fcpw's bounding volume hierarchy answers closest-element queries fast but in float32 (about
1e-5 mm error on coordinates of a few hundred mm). Its only job here is to name the closest
element; the distance to that element is then recomputed exactly in float64. When two
elements are within float32 rounding of each other the BVH may name the slightly farther one,
so a distance can exceed the true minimum by at most a few 1e-5 mm; `metrics.TIE_TOLERANCE`
absorbs this at the NSD threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import fcpw
import numpy as np

from reference.elements import to_cells

_PRIMITIVE_INDEX = attrgetter("primitive_index")

QUERY_CHUNK = 1 << 18
"""Points per BVH query call (bounds the memory of one query, see `SurfaceIndex.query`)."""


@dataclass
class ClosestPoints:
    """Query results, one row per query point (distance inf where nothing was in range)."""

    distance: np.ndarray
    cell: np.ndarray
    point: np.ndarray
    feature: np.ndarray


class SurfaceIndex:
    """Spatial index over one surface (vertices (n, dim), cells (m, dim)) for exact queries."""

    def __init__(self, vertices: np.ndarray, cells: np.ndarray):
        self._keep(vertices, cells)
        self._build_bvh()

    def _keep(self, vertices: np.ndarray, cells: np.ndarray) -> None:
        """The surface in the one layout every query reads."""
        self.vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        self.cells = np.ascontiguousarray(cells, dtype=np.int64)
        self.dim = self.vertices.shape[1]

    def _build_bvh(self) -> None:
        # Centre the coordinates before rounding to float32: rounding error scales with |x|.
        self.shift = 0.5 * (self.vertices.min(axis=0) + self.vertices.max(axis=0))
        local = np.asfortranarray(self.vertices - self.shift, dtype=np.float32)
        index = np.asfortranarray(self.cells, dtype=np.int32)
        if self.dim == 3:
            self.scene = fcpw.scene_3D()
            self.scene.set_object_count(1)
            self.scene.set_object_vertices(local, 0)
            self.scene.set_object_triangles(index, 0)
            self._interactions = fcpw.interaction_3D_list
        else:
            self.scene = fcpw.scene_2D()
            self.scene.set_object_count(1)
            self.scene.set_object_vertices(local, 0)
            self.scene.set_object_line_segments(index, 0)
            self._interactions = fcpw.interaction_2D_list
        self.scene.build(fcpw.aggregate_type.bvh_surface_area, True)

    def closest_cells(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Index of the closest cell to each point; -1 where none lies within its radius.

        radius: one search radius per point (inf = unbounded). A tight radius (an upper
        bound on the distance) lets the BVH discard most of the tree at once.
        """
        # map + attrgetter reads the per-point result objects a third faster than a generator.
        return np.fromiter(
            map(_PRIMITIVE_INDEX, self._search(points, radius)), np.int64, len(points)
        )

    def _search(self, points: np.ndarray, radius):
        """The BVH's closest-point records of `points` within `radius` (scalar or per point)."""
        radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(points),))
        interactions = self._interactions()
        if len(points) == 0:
            return interactions
        local = np.asfortranarray(points - self.shift, dtype=np.float32)
        # Pad the radius by float32 slack so no element at exactly the radius is lost.
        padded = radius * (1 + 1e-5) + 1e-4
        squared = np.where(np.isfinite(radius), padded * padded, np.finfo(np.float32).max)
        radii2 = np.minimum(squared, np.finfo(np.float32).max).astype(np.float32)
        self.scene.find_closest_points(local, radii2, interactions)
        return interactions

    def distance_to_cells(self, points: np.ndarray, cell: np.ndarray):
        """Exact float64 distance from each point to one given cell: (distance, point, feature)."""
        return to_cells(plain(points), self.vertices, self.cells, cell)

    def query(self, points: np.ndarray, max_distance=np.inf, hint=None) -> ClosestPoints:
        """Exact float64 closest points of `points` (k, dim) on the surface.

        Points farther than max_distance (a scalar or one per point) from every cell get
        distance inf, cell -1. hint: (cells, per), cells[i // per] a cell likely to be the
        closest to point i (or None; per divides QUERY_CHUNK, a power of two: a split
        element's 2 or 4 children share their parent's); an index may try it first to prune
        its search, the distances found are the same (the cube index names the hinted cell
        among equidistant ones). Large queries run in chunks of QUERY_CHUNK points: the BVH's
        per-point result objects and the float64 temporaries of the exact distance would
        otherwise take about 1 kB per point at once.
        """
        points = np.asarray(points, dtype=np.float64)
        radius = np.broadcast_to(np.asarray(max_distance, dtype=np.float64), (len(points),))
        if len(points) <= QUERY_CHUNK:
            return self._query(points, radius, hint)
        parts = [
            self._query(
                points[start : start + QUERY_CHUNK],
                radius[start : start + QUERY_CHUNK],
                None if hint is None else (hint[0][start // hint[1] :], hint[1]),
            )
            for start in range(0, len(points), QUERY_CHUNK)
        ]
        return ClosestPoints(
            *(
                np.concatenate([getattr(part, field) for part in parts])
                for field in ("distance", "cell", "point", "feature")
            )
        )

    def _query(self, points: np.ndarray, radius: np.ndarray, hint=None) -> ClosestPoints:
        cell = self.closest_cells(points, radius)  # the BVH takes no hint
        # The re-measure takes cell -1 (nothing in range) itself: distance inf, point NaN.
        distance, closest, feature = to_cells(plain(points), self.vertices, self.cells, cell)
        return ClosestPoints(distance, cell, closest, feature)


def plain(array: np.ndarray) -> np.ndarray:
    """A C-contiguous, writable float64 array: the one layout the compiled loops take."""
    return np.require(array, dtype=np.float64, requirements=("C", "W"))
