"""grand-challenge-metrics (PyPI `grand-challenge-metrics`, import `grand_challenge_metrics`),
`grand_challenge_metrics.stats`; evalutils 0.6.0 re-exports it.

Boundary: for HD and HD95, the mask less its erosion with a face-connected element
(`connectivity=1`); for the mean contour distance, the voxels whose full 3x3(x3)
neighbourhood is not all foreground (ITK's contour, `nearest` at the array's edge).
Distances from `scipy.ndimage.distance_transform_edt` with `voxelspacing` in mm.
Definitions: `hausdorff_distance` = max of both directed maxima; `percentile_hausdorff_distance`
= the larger of the two directed percentiles, each the sorted distance at index
int((n - 1) p), no interpolation; `mean_contour_distance` = the larger of the two directed
means, each measured from one mask's contour to the other mask's foreground, not its
contour (a contour voxel inside the other mask counts 0); DSC = `dice_from_confusion_matrix`
of `calculate_confusion_matrix(a, b, labels=[0, 1])`, its entry for label 1.
Arguments: `s1` = a, `s2` = b; `voxelspacing` in array axis order; `percentile` as a fraction.
Quirks: the mean contour distance is the study's MASD only by name (max, not mean, of the
directed means, to the foreground, with another boundary); `modified_hausdorff_distance`, the
max of the boundary-to-boundary directed means, is no metric of the study. An empty mask
raises numpy's "zero-size array to reduction operation" ValueError.
"""

from __future__ import annotations

from adapters.base import PythonAdapter


class GrandChallenge(PythonAdapter):
    name = "grandchallenge"
    label = "grand-challenge-metrics"
    metrics = ("HD", "HD95", "MASD", "DSC")
    module = "grand_challenge_metrics"
    distribution = "grand-challenge-metrics"
    install_hint = "pip install grand-challenge-metrics"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        from grand_challenge_metrics import stats

        calls = {
            "HD": lambda: stats.hausdorff_distance(a, b, voxelspacing=spacing),
            "HD95": lambda: stats.percentile_hausdorff_distance(
                a, b, percentile=percentile / 100, voxelspacing=spacing
            ),
            "MASD": lambda: stats.mean_contour_distance(a, b, voxelspacing=spacing),
            "DSC": lambda: stats.dice_from_confusion_matrix(
                stats.calculate_confusion_matrix(a, b, labels=[0, 1])
            )[1],
        }
        return self.compute_each({metric: calls[metric] for metric in metrics})
