"""Weighted percentiles of element distances, compiled with numba.

With distances d_n and sizes s_n, the step percentile at target size T is the smallest d with
sum(s_n [d_n <= d]) >= T (`weighted_select`, a selection without a sort). An element counted
by the linear interpolant of its ascending corner distances d0 <= d1 (<= d2) contributes the
share of its size on which the interpolant is <= t (`linear_shares`):

    segment   (t - d0) / (d1 - d0)
    triangle  (t - d0)^2 / ((d1 - d0)(d2 - d0))        for d0 <= t < d1
              1 - (d2 - t)^2 / ((d2 - d0)(d2 - d1))    for d1 <= t < d2

none below d0, all from the last corner on; `interpolated_percentile` solves for the t at
which the steps and these shares reach the target (module `distance_pass`, `Directed`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from reference.elements import JIT


@njit(inline="always", **JIT)
def _share(row, t):
    """Share of one element on which the linear interpolant of its ascending corner values
    `row` is <= t (the formula: `metrics.linear_share_within`)."""
    low, high = row[0], row[len(row) - 1]
    if t < low:
        return 0.0
    if t >= high:
        return 1.0
    if len(row) == 2:
        return (t - low) / (high - low)
    mid = row[1]
    if t < mid:
        return (t - low) ** 2 / ((mid - low) * (high - low))
    return 1 - (high - t) ** 2 / ((high - low) * (high - mid))


@njit(**JIT)
def linear_shares(rows, t):
    """`_share` of every row of rows (k, 2 or 3), each in ascending order."""
    shares = np.empty(len(rows))
    for i in range(len(rows)):
        shares[i] = _share(rows[i], t)
    return shares


@njit(**JIT)
def sorted_rows(values):
    """Each row of values (k, 2 or 3) in ascending order: np.sort(values, axis=1), which costs
    three to four times this on rows of three (0.40 against 0.12 ms a pair on label 1)."""
    out = values.copy()
    for i in range(len(out)):
        for j in range(1, out.shape[1]):  # insertion sort: two or three values
            value, k = out[i, j], j
            while k > 0 and out[i, k - 1] > value:
                out[i, k] = out[i, k - 1]
                k -= 1
            out[i, k] = value
    return out


@njit(**JIT)
def _select_in(v, w, lo, hi, below, target):
    """`weighted_select` on v[lo:hi] (reordered in place), `below` the summed weight of the
    values known to lie below them: quickselect with a three-way partition (ties in one
    block); nan when their total falls short."""
    while hi > lo:
        a, b, c = v[lo], v[(lo + hi) // 2], v[hi - 1]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        less, i, more = lo, lo, hi
        less_weight = equal_weight = 0.0
        while i < more:
            if v[i] < pivot:
                v[less], v[i] = v[i], v[less]
                w[less], w[i] = w[i], w[less]
                less_weight += w[less]
                less += 1
                i += 1
            elif v[i] > pivot:
                more -= 1
                v[more], v[i] = v[i], v[more]
                w[more], w[i] = w[i], w[more]
            else:
                equal_weight += w[i]
                i += 1
        if less > lo and below + less_weight >= target:
            hi = less
        elif below + less_weight + equal_weight >= target:
            return pivot
        else:
            below += less_weight + equal_weight
            lo = more
    return np.nan


SELECT_SAMPLE = 512
"""Values `weighted_select` samples to guess the band that holds the answer."""


@njit(**JIT)
def weighted_select(values, weights, target):
    """Smallest v among values with sum(weights[values <= v]) >= target, the largest value
    when the total falls short: the weighted step percentile, without a sort, in expected
    linear time. A sample of every k-th value guesses a band of values around the answer;
    one pass sums the weight below the band and gathers the band, and the answer is selected
    in the band alone. When the answer lies outside the band (a bad sample), the whole array
    is selected instead: the guess only ever costs time."""
    n = len(values)
    if n > 4 * SELECT_SAMPLE:
        stride = n // SELECT_SAMPLE
        order = np.argsort(values[::stride])
        sample, sample_weight = values[::stride][order], weights[::stride][order]
        cumulative = np.cumsum(sample_weight) * (weights.sum() / sample_weight.sum())
        guess = np.searchsorted(cumulative, target)
        margin = len(sample) // 16
        band_low = sample[max(guess - margin, 0)]
        band_high = sample[min(guess + margin, len(sample) - 1)]
        below = 0.0
        band = np.empty(n)
        band_weight = np.empty(n)
        count = 0
        for i in range(n):
            if values[i] < band_low:
                below += weights[i]
            elif values[i] <= band_high:
                band[count] = values[i]
                band_weight[count] = weights[i]
                count += 1
        if below < target:
            found = _select_in(band, band_weight, 0, count, below, target)
            if not np.isnan(found):
                return found
    found = _select_in(values.copy(), weights.copy(), 0, n, 0.0, target)
    return values.max() if np.isnan(found) else found


@njit(**JIT)
def interpolated_percentile(steps, step_sizes, below, partial, partial_sizes, low, high, target):
    """Smallest t in [low, high] at which size_within(t) = below + (summed size of the steps
    <= t) + sum over the partial elements of size * share(t) reaches target
    (`distance_pass.Directed._interpolated_percentile` states the method and why the answer lies
    in [low, high]). steps: ascending step values in (low, high], step_sizes their sizes;
    below: the size that counts wholly at every t >= low; partial (k, n): the corner values
    (ascending rows) of the elements interpolated, partial_sizes their sizes."""
    cumulative = np.zeros(len(steps) + 1)
    for i in range(len(steps)):
        cumulative[i + 1] = cumulative[i] + step_sizes[i]

    def size_within(t):
        shares = 0.0
        for i in range(len(partial)):
            shares += partial_sizes[i] * _share(partial[i], t)
        return below + cumulative[np.searchsorted(steps, t, side="right")] + shares

    if size_within(low) >= target:
        return low
    # Breakpoints in [low, high]: corner values of the partial elements, and steps.
    candidates = np.concatenate((np.array([low, high]), partial.ravel(), steps))
    candidates = np.sort(candidates[(candidates >= low) & (candidates <= high)])
    breakpoints = [candidates[0]]
    for value in candidates[1:]:
        if value != breakpoints[-1]:
            breakpoints.append(value)
    below_target, above = 0, len(breakpoints) - 1  # size within: < target, >= target
    while above - below_target > 1:
        middle = (below_target + above) // 2
        if size_within(breakpoints[middle]) >= target:
            above = middle
        else:
            below_target = middle
    low, high = breakpoints[below_target], breakpoints[above]
    # On [low, high) no step and no corner value: the size within is one quadratic there
    # (every share is right-continuous), and may jump at high: a step, or an open element
    # whose corners are all at high. q(s) = f0 + b s + c s^2 through s = 0, 1/3, 2/3.
    f0 = size_within(low)
    f1 = size_within(low + (high - low) * 1.0 / 3)
    f2 = size_within(low + (high - low) * 2.0 / 3)
    b, c = 6.0 * f1 - 4.5 * f0 - 1.5 * f2, 4.5 * (f0 + f2) - 9.0 * f1
    if f0 + b + c < target:
        return high  # the jump at high reaches the target
    # The root of q(s) = target in [0, 1], in the form that does not cancel.
    gap = target - f0
    denominator = b + math.sqrt(max(b * b + 4.0 * c * gap, 0.0))
    share = 1.0 if denominator <= 0.0 else min(max(2.0 * gap / denominator, 0.0), 1.0)
    return low + share * (high - low)
