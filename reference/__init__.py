"""Mesh-based reference implementation of distance-based segmentation metrics.

`compute_metrics(a, b, spacing)` meshes two masks and measures exact point-to-surface
distances between the meshes, weighted by boundary element size (the paper's Algorithm 1);
`compute_surface_metrics(surface_a, surface_b)` does the same for two closed surfaces.
"""

from reference.api import DEFAULT_SUBDIVISION, METRIC_KEYS, compute_metrics, compute_surface_metrics

__version__ = "1.0.0"

__all__ = ["DEFAULT_SUBDIVISION", "METRIC_KEYS", "compute_metrics", "compute_surface_metrics"]
