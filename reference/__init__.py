"""Mesh-based reference implementation of distance-based segmentation metrics.

`compute_metrics(a, b, spacing)` meshes two masks and measures exact point-to-surface
distances between the meshes, weighted by boundary element size (the paper's Algorithm 1);
`compute_surface_metrics(surface_a, surface_b)` does the same for two closed surfaces. Both
return `Scores`: the values, each inside the bracket proven to hold the metric's exact value
(`scores.brackets`); `bounds=False` is the faster plain call, with no proof.
"""

_API = ("DEFAULT_SUBDIVISION", "Scores", "compute_metrics", "compute_surface_metrics")


def __getattr__(name: str):
    """The API on first use: importing it loads VTK and the BVH library (about 1.5 s), which
    code that needs only `__version__` should not pay."""
    if name in _API:
        from reference import api

        return getattr(api, name)
    raise AttributeError(f"module 'reference' has no attribute {name!r}")


__version__ = "1.8.0"
"""Recorded with every score (tool_version); what each version changed is in CHANGELOG.md."""

__all__ = ["DEFAULT_SUBDIVISION", "Scores", "compute_metrics", "compute_surface_metrics"]
