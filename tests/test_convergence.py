"""reference.convergence on two small balls, for the fast set: default minus a finer uniform
subdivision. The fine HD is a lower bound of the true HD, so the default may only exceed it; the
other distances agree closely. The same on synthetic OARs is test_reference's slow test."""

from __future__ import annotations

import numpy as np

from reference.convergence import differences
from vocabulary import DISTANCE_KEYS


def test_default_minus_fine_is_small_on_two_balls():
    z, y, x = np.mgrid[:14, :14, :14]
    a = (z - 6.5) ** 2 + (y - 6.5) ** 2 + (x - 6.5) ** 2 <= 16
    b = (z - 7.0) ** 2 + (y - 6.5) ** 2 + (x - 6.0) ** 2 <= 20
    diff = differences(a, b, (1.0, 1.0, 1.0), fine=2)
    assert set(diff) == set(DISTANCE_KEYS)
    assert -1e-9 <= diff["HD"] <= 0.01
    for key in ("HD95", "MASD", "ASSD"):
        assert abs(diff[key]) <= 0.01, (key, diff)
    assert abs(diff["NSD"]) <= 0.001
