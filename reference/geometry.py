"""Exact float64 geometry on simplex surfaces: closest points on segments and triangles.

A surface is `(vertices, cells)`: vertices (n, dim) float, cells (m, dim) int; triangles in 3D,
line segments in 2D. Every function here is vectorised over many points or cells.
"""

from __future__ import annotations

import numpy as np

# Feature of an element on which a closest point lies. In 3D: 0 = triangle interior,
# 1..3 = edge (v0v1, v1v2, v2v0), 4..6 = vertex v0, v1, v2. In 2D: 0 = segment interior,
# 4, 5 = endpoint v0, v1 (the same codes as 3D vertices, so vertex handling is shared).
FACE, EDGE01, EDGE12, EDGE20, VERT0, VERT1, VERT2 = range(7)


def closest_on_segments(points: np.ndarray, v0: np.ndarray, v1: np.ndarray):
    """Closest points on segments [v0, v1] to `points` (row-wise), and the feature code.

    The parameter t = clamp(<p - v0, v1 - v0> / |v1 - v0|^2, 0, 1) gives the closest point
    v0 + t (v1 - v0); t = 0 or 1 means an endpoint.
    """
    edge = v1 - v0
    length2 = np.einsum("ij,ij->i", edge, edge)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.einsum("ij,ij->i", points - v0, edge) / length2
    t = np.clip(np.nan_to_num(t, nan=0.0), 0.0, 1.0)
    feature = np.where(t <= 0.0, VERT0, np.where(t >= 1.0, VERT1, FACE))
    return v0 + t[:, None] * edge, feature


def closest_on_triangles(points: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """Closest points on triangles (a, b, c) to `points` (row-wise), and the feature code.

    Voronoi-region classification of the projection (Ericson, Real-Time Collision Detection,
    5.1.5), in float64: with ab = b - a, ac = c - a, ap = p - a, d1 = <ab, ap>, d2 = <ac, ap>
    and likewise d3..d6 for p - b and p - c, the closest point is a vertex, a point on an edge
    or the projection inside the face, decided by the signs of these dot products.
    """
    ab, ac = b - a, c - a
    ap, bp, cp = points - a, points - b, points - c
    dot = np.einsum
    d1, d2 = dot("ij,ij->i", ab, ap), dot("ij,ij->i", ac, ap)
    d3, d4 = dot("ij,ij->i", ab, bp), dot("ij,ij->i", ac, bp)
    d5, d6 = dot("ij,ij->i", ab, cp), dot("ij,ij->i", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2

    # Face interior first; the regions below overwrite it where they apply, most specific last.
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = va + vb + vc
        v, w = vb / denom, vc / denom
        closest = a + v[:, None] * ab + w[:, None] * ac
        feature = np.full(len(points), FACE)

        on_bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        on_ca = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
        t_ca = d2 / (d2 - d6)
        on_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
        t_ab = d1 / (d1 - d3)
    for mask, start, direction, t, code in ((on_bc, b, c - b, t_bc, EDGE12),
                                            (on_ca, a, ac, t_ca, EDGE20),
                                            (on_ab, a, ab, t_ab, EDGE01)):
        closest[mask] = start[mask] + t[mask, None] * direction[mask]
        feature[mask] = code
    for mask, corner, code in (((d6 >= 0) & (d5 <= d6), c, VERT2),
                               ((d3 >= 0) & (d4 <= d3), b, VERT1),
                               ((d1 <= 0) & (d2 <= 0), a, VERT0)):
        closest[mask] = corner[mask]
        feature[mask] = code
    degenerate = np.isnan(closest).any(axis=1)
    if degenerate.any():
        # A zero-area triangle is a segment (or a point): its closest point lies on an edge.
        closest[degenerate], feature[degenerate] = _closest_on_edges(
            points[degenerate], a[degenerate], b[degenerate], c[degenerate])
    return closest, feature


def _closest_on_edges(points, a, b, c):
    """Closest points on the three edges of (possibly degenerate) triangles."""
    candidates = [closest_on_segments(points, s, e)[0] for s, e in ((a, b), (b, c), (c, a))]
    dist = np.stack([np.linalg.norm(points - q, axis=1) for q in candidates])
    best = dist.argmin(axis=0)
    closest = np.choose(best[:, None], candidates)
    return closest, np.array([EDGE01, EDGE12, EDGE20])[best]


def closest_on_cells(points: np.ndarray, vertices: np.ndarray, cells: np.ndarray,
                     cell_index: np.ndarray):
    """Closest points on the given cells (one per point) and their feature codes, float64."""
    corners = vertices[cells[cell_index]]
    if cells.shape[1] == 2:
        return closest_on_segments(points, corners[:, 0], corners[:, 1])
    return closest_on_triangles(points, corners[:, 0], corners[:, 1], corners[:, 2])


def brute_force_distances(points: np.ndarray, vertices: np.ndarray, cells: np.ndarray,
                          chunk: int = 256) -> np.ndarray:
    """min over all cells of the exact point-to-cell distance: slow, independent check."""
    out = np.empty(len(points))
    all_cells = np.arange(len(cells))
    for start in range(0, len(points), chunk):
        block = points[start:start + chunk]
        rep_points = np.repeat(block, len(cells), axis=0)
        rep_cells = np.tile(all_cells, len(block))
        closest, _ = closest_on_cells(rep_points, vertices, cells, rep_cells)
        dist = np.linalg.norm(rep_points - closest, axis=1).reshape(len(block), len(cells))
        out[start:start + chunk] = dist.min(axis=1)
    return out
