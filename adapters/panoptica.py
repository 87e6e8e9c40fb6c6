"""panoptica (PyPI `panoptica`, github.com/BrainLesion/panoptica), its `Metric` enum.

Boundary: the mask XOR its binary erosion with a face-connected element (connectivity 1;
outside the array counts as background, so a mask touching the array's edge has boundary
there); distances from a Euclidean distance transform of the other mask's boundary
(scipy's feature transform, scaled by `voxelspacing`), on the whole array, no cropping.
Definitions: HD = max of the two directed maxima; HD95 = the 95th percentile (numpy's linear
interpolation) of the pooled distances of both directions, fixed at 95; its "ASSD" = the mean
of the two directed means, which is the study's MASD; NSD = (f_ab + f_ba) / 2, the mean of
the two directed fractions of boundary voxels within `threshold` (mm), not the pooled count;
DSC = 2|A∩B| / (|A| + |B|).
Arguments: `Metric.<name>(reference_arr=a, prediction_arr=b, voxelspacing=spacing)`, each
metric its own call; spacing in array axis order; NSD with `threshold=tau`.
Quirks: panoptica calls it "ASSD" (Average Symmetric Surface Distance); the study reports it
as MASD and offers no ASSD for panoptica. No boundary IoU (its IOU is volumetric). One mask
empty: HD raises (the max of no distances), HD95 is a number, the distances to a point just
outside the array's first corner, where the distance transform of an empty boundary puts its
nearest voxel (it grows with the field of view), MASD and NSD are NaN with numpy's warnings,
DSC 0; both empty: HD and HD95 raise, DSC 0 (the tool's own rule). The README's
`Panoptica_Evaluator` path is not used: in 2.1.7 its global binary metrics (`global_bin_hd`,
...) are computed without the voxel spacing given to `evaluate` (voxel units; NSD at 0.5
voxel, with a warning), and its per-instance metrics take NSD at the smallest voxel size,
with no way to set tau.
Runs in its home environment (`make env-panoptica`): it requires numpy < 2.3.
"""

from __future__ import annotations

from adapters.base import PythonAdapter

# The study's metric key -> the name of panoptica's `Metric` member that computes it.
_MEMBERS = {"HD": "HD", "HD95": "HD95", "MASD": "ASSD", "NSD": "NSD", "DSC": "DSC"}


class Panoptica(PythonAdapter):
    name = "panoptica"
    label = "panoptica"
    home_environment = "panoptica"
    metrics = ("HD", "HD95", "MASD", "NSD", "DSC")
    fixed_percentile = 95.0
    module = "panoptica"
    distribution = "panoptica"
    install_hint = "make env-panoptica"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from panoptica.metrics import Metric

        def call(metric: str):
            member = getattr(Metric, _MEMBERS[metric])
            options = {"threshold": tau} if metric == "NSD" else {}
            return lambda: member(
                reference_arr=a, prediction_arr=b, voxelspacing=spacing, **options
            )

        return self.compute_each({metric: call(metric) for metric in metrics})
