"""Shapes with closed-form metric values, for proving the reference's accuracy.

Spheres and circles are tessellated finely (surfaces) or voxelized (masks); the exact values
follow from the geometry:

* concentric, radii r_a < r_b: every distance is r_b - r_a, so HD = HDp = MASD = ASSD = r_b - r_a,
  NSD = 1 if r_b - r_a <= tau else 0; the bands are shells, X_b = {r_x - tau <= r <= r_x}, so
  BIoU = |shell overlap| / |shell union| with shell volumes 4/3 pi (r_out^3 - r_in^3) (3D) or
  pi (r_out^2 - r_in^2) (2D).
* two spheres of equal radius R, centres c apart: the point of A at polar angle theta (from the
  axis joining the centres) is at distance d(u) = |s(u) - R| from B, s(u) = sqrt(R^2 + c^2 -
  2 R c u), u = cos(theta); area on a sphere is uniform in u on [-1, 1], so the size-weighted
  distance distribution is that of d(u) with u uniform. Its CDF is
  F(q) = (min(1, u(R - q)) - max(-1, u(R + q))) / 2 with u(s) = (R^2 + c^2 - s^2) / (2 R c),
  HD = c, HDp = F^-1(p / 100), NSD = F(tau), MASD = ASSD = mean of d(u). Both directions agree.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, optimize
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkFiltersSources import vtkSphereSource

from vocabulary import DEFAULT_PERCENTILE


def sphere_surface(radius: float, centre=(0.0, 0.0, 0.0), resolution: int = 200):
    """Triangulated sphere (vertices, triangles), outward oriented."""
    source = vtkSphereSource()
    source.SetRadius(radius)
    source.SetCenter(*centre)
    source.SetThetaResolution(resolution)
    source.SetPhiResolution(resolution)
    source.Update()
    data = source.GetOutput()
    vertices = vtk_to_numpy(data.GetPoints().GetData()).astype(float)
    cells = vtk_to_numpy(data.GetPolys().GetConnectivityArray()).reshape(-1, 3).astype(np.int64)
    return vertices, cells


def circle_surface(radius: float, centre=(0.0, 0.0), segments: int = 2000):
    """Closed polygon (vertices, segments), counter-clockwise."""
    angle = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    vertices = np.column_stack([np.cos(angle), np.sin(angle)]) * radius + np.asarray(centre)
    cells = np.column_stack([np.arange(segments), (np.arange(segments) + 1) % segments])
    return vertices, cells


def ball_mask(shape, spacing, radius: float, centre) -> np.ndarray:
    """Voxels whose centre (index * spacing, mm) lies within `radius` of `centre`."""
    axes = [np.arange(n) * s - c for n, s, c in zip(shape, spacing, centre, strict=True)]
    grids = np.meshgrid(*axes, indexing="ij", sparse=True)
    return sum(g**2 for g in grids) <= radius**2


def offset_ball_masks(
    spacing, radii=(8.0, 8.0), offset=(1.0, 2.0, 3.0), extent: float = 48.0
) -> tuple[np.ndarray, np.ndarray]:
    """Two balls on a grid `extent` mm wide along each axis: a of radius radii[0] centred
    between voxels at the grid's middle, b of radius radii[1] moved by `offset` mm."""
    shape = [round(extent / s) for s in spacing]
    middle = [extent / 2 - s / 2 for s in spacing]
    moved = [m + o for m, o in zip(middle, offset, strict=True)]
    return ball_mask(shape, spacing, radii[0], middle), ball_mask(shape, spacing, radii[1], moved)


def shell_volume(inner: float, outer: float, dim: int) -> float:
    """Volume (3D) or area (2D) between radii inner <= outer."""
    inner, outer = max(inner, 0.0), max(outer, 0.0)
    return 4 / 3 * np.pi * (outer**3 - inner**3) if dim == 3 else np.pi * (outer**2 - inner**2)


def concentric(r_a: float, r_b: float, tau: float, dim: int) -> dict[str, float]:
    """Exact metrics of concentric spheres (dim 3) or circles (dim 2)."""
    gap = abs(r_b - r_a)
    band_a, band_b = (r_a - tau, r_a), (r_b - tau, r_b)
    overlap = (
        shell_volume(max(band_a[0], band_b[0]), min(band_a[1], band_b[1]), dim)
        if min(band_a[1], band_b[1]) > max(band_a[0], band_b[0])
        else 0.0
    )
    union = shell_volume(*band_a, dim) + shell_volume(*band_b, dim) - overlap
    small, large = sorted((r_a, r_b))
    return {
        "HD": gap,
        "HD95": gap,
        "MASD": gap,
        "ASSD": gap,
        "NSD": 1.0 if gap <= tau else 0.0,
        "BIoU": overlap / union,
        "DSC": 2
        * shell_volume(0, small, dim)
        / (shell_volume(0, small, dim) + shell_volume(0, large, dim)),
    }


def offset_spheres(
    radius: float, offset: float, tau: float, percentile: float = DEFAULT_PERCENTILE
):
    """Exact HD, HDp, MASD, ASSD, NSD of two equal spheres whose centres are `offset` apart."""
    r, c = radius, offset

    def distance(u):
        return abs(np.sqrt(r * r + c * c - 2 * r * c * u) - r)

    def cdf(q):
        def u_of(s):
            return (r * r + c * c - s * s) / (2 * r * c)

        return (min(1.0, u_of(max(r - q, 0.0))) - max(-1.0, u_of(r + q))) / 2

    mean = integrate.quad(distance, -1, 1, points=[c / (2 * r)])[0] / 2
    hdp = optimize.brentq(lambda q: cdf(q) - percentile / 100, 0.0, c)
    return {"HD": c, "HD95": hdp, "MASD": mean, "ASSD": mean, "NSD": cdf(tau)}
