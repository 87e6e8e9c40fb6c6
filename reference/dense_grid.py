"""The dense grid of points BIoU counts (the paper's Algorithm 1: `DENSE_FACTOR` points per
image voxel and axis), shared by the band counts (`biou`) and the within-tau test of its
points (`within_tau`), which import it from here and not from each other."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DENSE_FACTOR = 5
"""Dense grid points per image voxel along each axis (the paper's choice). Odd on purpose:
dense points then never fall on the voxel-face planes of a mask's mesh."""


@dataclass
class DenseGrid:
    """Points origin + j * step for integer j in [0, shape) along every axis."""

    origin: np.ndarray
    step: np.ndarray
    shape: tuple[int, ...]

    def slices(self, start: int, stop: int) -> DenseGrid:
        """The sub-grid of slices start..stop-1 along the first axis."""
        origin = self.origin.copy()
        origin[0] += start * self.step[0]
        return DenseGrid(origin, self.step, (stop - start, *self.shape[1:]))


def dense_grid_of_image(origin, spacing, lower, upper, factor: int = DENSE_FACTOR) -> DenseGrid:
    """Dense grid covering image voxels lower..upper-1: `factor` points per voxel and axis.

    The points of voxel i sit at the centres of its factor**dim sub-voxels:
    origin + (i - 1/2 + (k + 1/2) / factor) * spacing, k = 0..factor-1.
    """
    spacing = np.asarray(spacing, float)
    step = spacing / factor
    first = np.asarray(origin, float) + (np.asarray(lower) - 0.5 + 0.5 / factor) * spacing
    shape = tuple(int(n) * factor for n in np.asarray(upper) - np.asarray(lower))
    return DenseGrid(first, step, shape)
