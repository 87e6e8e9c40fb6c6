"""Signed distance to a closed, outward-oriented surface, with angle-weighted pseudo-normals.

The sign of <x - p, n> is reliable for the closest point p only if n is the right normal for
the feature p lies on: the face normal inside a face, the sum of the two face normals on an
edge, and the angle-weighted sum of the incident face normals at a vertex (Baerentzen and
Aanaes, 2005). Negative distance = inside.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from reference import geometry
from reference.closest import SurfaceIndex
from reference.elements import JIT


def orient_outward(vertices: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Cells with their order flipped if the enclosed signed area / volume is negative.

    Signed area = 1/2 sum v0 x v1 over segments; signed volume = 1/6 sum det(v0, v1, v2).
    Both are positive for an outward-oriented closed surface.
    """
    signed = signed_measure(
        np.ascontiguousarray(vertices, np.float64), np.ascontiguousarray(cells, np.int64)
    )
    return cells[:, ::-1].copy() if signed < 0 else cells


@njit(**JIT)
def signed_measure(vertices, cells):
    """Enclosed signed area (segments) or volume (triangles) of a surface, times 2 or 6:
    sum of v0 x v1, or of det(v0, v1, v2) (`orient_outward`)."""
    total = 0.0
    for i in range(len(cells)):
        a, b = vertices[cells[i, 0]], vertices[cells[i, 1]]
        if cells.shape[1] == 2:
            total += a[0] * b[1] - b[0] * a[1]
        else:
            c = vertices[cells[i, 2]]
            total += (
                a[0] * (b[1] * c[2] - b[2] * c[1])
                + a[1] * (b[2] * c[0] - b[0] * c[2])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
            )
    return total


def _unit(vectors: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.divide(vectors, norm, out=np.zeros_like(vectors), where=norm > 0)


class SignedSurface:
    """A surface index that also answers signed distances via pseudo-normals."""

    def __init__(self, vertices: np.ndarray, cells: np.ndarray):
        cells = orient_outward(np.asarray(vertices, float), np.asarray(cells))
        self.index = SurfaceIndex(vertices, cells)
        v, c = self.index.vertices, self.index.cells
        corners = v[c]
        self.face_normal = _unit(geometry.element_normals(corners))
        if c.shape[1] == 2:
            vertex_normal = np.zeros_like(v)
            for k in range(2):
                np.add.at(vertex_normal, c[:, k], self.face_normal)
            self.edge_normal = None
        else:
            vertex_normal = np.zeros_like(v)
            for k in range(3):
                # Angle at corner k weights the face normal at that vertex.
                e1 = _unit(corners[:, (k + 1) % 3] - corners[:, k])
                e2 = _unit(corners[:, (k + 2) % 3] - corners[:, k])
                angle = np.arccos(np.clip(np.einsum("ij,ij->i", e1, e2), -1.0, 1.0))
                np.add.at(vertex_normal, c[:, k], angle[:, None] * self.face_normal)
            half_edges = np.stack([c[:, [0, 1]], c[:, [1, 2]], c[:, [2, 0]]], axis=1)
            keys = np.sort(half_edges.reshape(-1, 2), axis=1)
            _, edge_id = np.unique(keys, axis=0, return_inverse=True)
            edge_sum = np.zeros((edge_id.max() + 1, 3))
            np.add.at(edge_sum, edge_id, np.repeat(self.face_normal, 3, axis=0))
            self.edge_normal = edge_sum[edge_id].reshape(len(c), 3, 3)
        self.vertex_normal = vertex_normal

    def signed_distance(self, points: np.ndarray, max_distance: float = np.inf) -> np.ndarray:
        """Signed distance (negative inside); +-inf beyond max_distance, sign unknown -> +inf."""
        hit = self.index.query(points, max_distance)
        found = hit.cell >= 0
        normal = np.zeros_like(points)
        cell, feature = hit.cell[found], hit.feature[found]
        n = self.face_normal[cell].copy()
        if self.edge_normal is not None:
            on_edge = (feature >= geometry.EDGE01) & (feature <= geometry.EDGE20)
            n[on_edge] = self.edge_normal[cell[on_edge], feature[on_edge] - geometry.EDGE01]
        on_vertex = feature >= geometry.VERT0
        corner = self.index.cells[cell[on_vertex], feature[on_vertex] - geometry.VERT0]
        n[on_vertex] = self.vertex_normal[corner]
        normal[found] = n
        side = np.einsum("ij,ij->i", points - np.where(found[:, None], hit.point, 0.0), normal)
        return np.where(side < 0, -hit.distance, hit.distance)
