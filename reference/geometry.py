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

SPLIT_EDGES = {2: np.array([[0, 1]]), 3: np.array([[0, 1], [1, 2], [2, 0]])}
"""Edges of a segment / triangle, as corner pairs; their midpoints are the new points of a
midpoint split (modules `distance_pass` and `elements`)."""

SPLIT_CHILDREN = {
    2: np.array([[0, 2], [2, 1]]),
    3: np.array([[0, 3, 5], [3, 1, 4], [5, 4, 2], [3, 4, 5]]),
}
"""Children of a split element, as indices into (corners..., edge midpoints...): a segment
(a, b) -> (a, m), (m, b); a triangle (a, b, c) -> (a, ab, ca), (ab, b, bc), (ca, bc, c),
(ab, bc, ca)."""

CENTRAL_CHILD = {2: None, 3: 3}
"""The child whose centre is its parent's, if any: (ab + bc + ca) / 3 = (a + b + c) / 3 for the
triangle's middle child; neither half of a segment has it. Its distance is its parent's."""


def element_normals(corners: np.ndarray) -> np.ndarray:
    """Normals (k, dim), not normalized, of elements (corners (k, dim, dim)): (b - a) x (c - a)
    for triangles, the edge b - a turned clockwise for segments; both point out of an
    outward-oriented closed surface."""
    edge = corners[:, 1] - corners[:, 0]
    if corners.shape[1] == 2:
        return np.column_stack([edge[:, 1], -edge[:, 0]])
    return np.cross(edge, corners[:, 2] - corners[:, 0])


SLIVER = 1e-10
"""Triangles with sin^2 of the angle at a below this are measured by their edges (see
`closest_on_triangles`): the face weights would carry errors of about 1e-16 / sin^2."""


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
    or the projection inside the face, decided by the signs of these dot products. Only d1 and
    d2 need the point: p - b = ap - ab and p - c = ap - ac give d3 = d1 - <ab, ab>,
    d4 = d2 - <ab, ac>, d5 = d1 - <ab, ac>, d6 = d2 - <ac, ac>. Every region yields
    barycentric weights (v, w) of b and c, and the closest point is a + v ab + w ac.
    """
    ab, ac = b - a, c - a
    ap = points - a
    dot = np.einsum
    d1, d2 = dot("ij,ij->i", ab, ap), dot("ij,ij->i", ac, ap)
    ab_ab, ac_ac, ab_ac = dot("ij,ij->i", ab, ab), dot("ij,ij->i", ac, ac), dot("ij,ij->i", ab, ac)
    d3, d4, d5, d6 = d1 - ab_ab, d2 - ab_ac, d1 - ab_ac, d2 - ac_ac
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2

    # Face interior first; the regions below overwrite it where they apply, most specific last.
    feature = np.full(len(points), FACE)
    # va + vb + vc = |ab|^2 |ac|^2 - <ab, ac>^2 = |ab x ac|^2 (Lagrange's identity), computed
    # directly: the sum cancels badly on slivers.
    area2 = ab_ab * ac_ac - ab_ac * ab_ac
    with np.errstate(invalid="ignore", divide="ignore"):
        v, w = vb / area2, vc / area2
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        edges = (
            ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), 1 - t_bc, t_bc, EDGE12),
            ((vb <= 0) & (d2 >= 0) & (d6 <= 0), 0.0, d2 / (d2 - d6), EDGE20),
            ((vc <= 0) & (d1 >= 0) & (d3 <= 0), d1 / (d1 - d3), 0.0, EDGE01),
        )
    vertices = (
        ((d6 >= 0) & (d5 <= d6), 0.0, 1.0, VERT2),
        ((d3 >= 0) & (d4 <= d3), 1.0, 0.0, VERT1),
        ((d1 <= 0) & (d2 <= 0), 0.0, 0.0, VERT0),
    )
    for region, v_region, w_region, code in edges + vertices:
        v, w = np.where(region, v_region, v), np.where(region, w_region, w)
        feature[region] = code
    closest = a + v[:, None] * ab + w[:, None] * ac
    degenerate = area2 <= SLIVER * ab_ab * ac_ac  # zero area too; elsewhere every weight is finite
    if degenerate.any():
        # A zero-area triangle is a segment (or a point): its closest point lies on an edge.
        # On a sliver the face weights lose every digit; its edges are within the sliver's
        # width (sin(angle) x edge length) of any of its points.
        closest[degenerate], feature[degenerate] = _closest_on_edges(
            points[degenerate], a[degenerate], b[degenerate], c[degenerate]
        )
    return closest, feature


def _closest_on_edges(points, a, b, c):
    """Closest points on the three edges of (possibly degenerate) triangles."""
    candidates = [closest_on_segments(points, s, e)[0] for s, e in ((a, b), (b, c), (c, a))]
    dist = np.stack([np.linalg.norm(points - q, axis=1) for q in candidates])
    best = dist.argmin(axis=0)
    closest = np.choose(best[:, None], candidates)
    return closest, np.array([EDGE01, EDGE12, EDGE20])[best]


def closest_on_cells(
    points: np.ndarray, vertices: np.ndarray, cells: np.ndarray, cell_index: np.ndarray
):
    """Closest points on the given cells (one per point) and their feature codes, float64."""
    corners = vertices[cells[cell_index]]
    if cells.shape[1] == 2:
        return closest_on_segments(points, corners[:, 0], corners[:, 1])
    return closest_on_triangles(points, corners[:, 0], corners[:, 1], corners[:, 2])


def brute_force_distances(
    points: np.ndarray, vertices: np.ndarray, cells: np.ndarray, chunk: int = 256
) -> np.ndarray:
    """min over all cells of the exact point-to-cell distance: slow, independent check."""
    out = np.empty(len(points))
    all_cells = np.arange(len(cells))
    for start in range(0, len(points), chunk):
        block = points[start : start + chunk]
        rep_points = np.repeat(block, len(cells), axis=0)
        rep_cells = np.tile(all_cells, len(block))
        closest, _ = closest_on_cells(rep_points, vertices, cells, rep_cells)
        dist = np.linalg.norm(rep_points - closest, axis=1).reshape(len(block), len(cells))
        out[start : start + chunk] = dist.min(axis=1)
    return out
