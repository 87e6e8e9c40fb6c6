"""segauge (PyPI `segauge`, github.com/RubenHaisma/segauge), `surface_metrics` and `dice`.

The first tool since the paper that meshes the masks, as the study's reference does; its
README says it follows the MeshMetrics method.
Boundary: each mask, padded by one voxel of background, is meshed by scikit-image's
`marching_cubes` at level 0.5 with the voxel spacing (the continuous table, not the discrete
one; on a binary mask its vertices are the edge midpoints), then trimesh's
`subdivide_to_size` splits every triangle until no edge is longer than the smallest voxel
size. Distances are not to the other surface but to the nearest of its sample points, its
vertices and triangle centres, found by a KD-tree (scipy's `cKDTree`); they are measured from
each triangle's centre and weighted by its area.
Definitions: HD = the larger of the two directed maxima over triangle centres; HD95 = one
percentile of the pooled distances of both directions, area-weighted, read off the
interpolated empirical distribution (each distance placed at the middle of its weight),
fixed at 95 (not the larger of the two directed percentiles, the reference's); ASSD = the
area-weighted mean of the pooled distances; MASD = the mean of the two area-weighted directed
means; NSD = the area of both surfaces within tau (<= tau) over their total area; DSC =
2|A∩B| / (|A| + |B|), counted on the voxels.
Arguments: `segauge.surface_metrics(pred=b, gt=a, spacing, nsd_tolerance=tau)` as its README
shows (the prediction first), spacing in array axis order; `segauge.dice(pred=b, gt=a)`.
Quirks: one call computes all five distance metrics; `nsd_tolerance` defaults to 1 mm, the
study passes tau. Empty masks are answered by the tool's own convention, not an error: one
empty, HD, HD95, MASD and ASSD are inf and NSD 0; both empty, the distances are 0 and NSD 1;
its DSC of two empty masks is 1. Sampling points rather than measuring to the triangles makes
every distance an upper bound, off by up to about half a sample spacing (docs/validation.md,
section 4).
2D: DSC only. Its five distance metrics raise the tool's ValueError on any 2D masks
("surface-distance metrics require 3D masks (medical volumes); got 2D. 2D distance support is
planned for v0.2"), declared in `not_offered_2d`; `dice` counts pixels as it counts voxels.
"""

from __future__ import annotations

from adapters.base import PythonAdapter

# The study's metric key -> the key of segauge's `surface_metrics` result.
_KEYS = {"HD": "hd", "HD95": "hd95", "MASD": "masd", "ASSD": "assd", "NSD": "nsd"}

_REFUSES_2D = "surface-distance metrics require 3D masks (medical volumes); got 2D"
"""The start of the ValueError segauge 0.1.0 raises for a distance metric on 2D masks."""


class Segauge(PythonAdapter):
    name = "segauge"
    label = "segauge"
    metrics = ("HD", "HD95", "MASD", "ASSD", "NSD", "DSC")
    not_offered_2d = dict.fromkeys(_KEYS, _REFUSES_2D)
    fixed_percentile = 95.0
    module = "segauge"
    distribution = "segauge"
    install_hint = "pip install segauge"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        import segauge

        surface: dict[str, float] = {}

        def distances() -> dict[str, float]:
            # One call gives every distance metric; made once, at the first one asked.
            if not surface:
                surface.update(segauge.surface_metrics(b, a, spacing, nsd_tolerance=tau))
            return surface

        def call(metric: str):
            if metric == "DSC":
                return lambda: segauge.dice(b, a)
            return lambda: distances()[_KEYS[metric]]

        return self.compute_each({metric: call(metric) for metric in metrics})
