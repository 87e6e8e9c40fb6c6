"""Synthetic HaN-Seg-style dataset: 30 head-and-neck organs drawn by two observers.

Every organ is a smooth implicit function f (negative inside, |grad f| ~ 1 near the surface,
so f is close to a signed distance in mm) built from ellipsoids and tubes around spline centre
lines, placed in a patient frame in mm: x towards the patient's left, y posterior, z superior
(DICOM LPS), z = 0 at the pituitary. Paired organs are mirror images in x with small
independent jitter. A case draws a head scale, a head pose in the scanner (so no organ lines
up with the voxel lattice), a CT slice grid, and per-organ size, shape and position changes.

An observer's contour is {f - delta = 0}: delta(x) is a smooth low-frequency offset field
(a few plane waves plus a global bias, about 0.3 to 3 mm), plus local Gaussian bumps (local
over- and under-segmentation) and, on large organs, wider local departures. The modes of
disagreement that are not smooth come from `ObserverModes`: tubes end on different CT slices,
now and then at a different landmark; an observer now and then draws a stray island on one
slice or skips a slice. The field is sampled on a fine local grid and meshed with VTK flying
edges plus gentle windowed-sinc smoothing. Everything is deterministic in (seed, case, organ
name).
"""

from __future__ import annotations

import argparse
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial import cKDTree
from vtkmodules.vtkCommonDataModel import vtkPolyData

from study.dataset.meshes import (
    check_closed,
    mesh_from_field,
    mesh_volume,
    write_manifest,
    write_observer_meshes,
)
from study.oars import OARS, check_oar_names

OBSERVERS: tuple[str, str] = ("A", "B")
MARKER_FILE = ".synthetic-dataset.json"
"""Written into data/<name>/ by the generator; a folder without it is never overwritten."""

GRID_MARGIN_MM = 6.0
FAR = 1e3  # field value for "far outside" (mm)
MAX_GROWTH_MM = 3.5  # largest outward smooth observer offset (local departures come on top)


@dataclass(frozen=True)
class ObserverModes:
    """The ways two observers' contours differ beyond smooth boundary offsets: one field per
    size. docs/dataset.md says what each models and where its size comes from."""

    slice_mm: tuple[float, ...] = (2.0, 2.5, 3.0)
    """The case's CT slice thickness, drawn from these: the observers draw on its slices, so
    tube ends, skipped slices and stray islands come in whole slices (HaN-Seg CT: 2 to 3 mm)."""
    pose_sd_deg: float = 3.0
    """SD of the head's rotation in the scanner about each axis, per case."""
    bend_mm: float = 3.0
    """SD of the inner centre-line control points of the long tubes (carotids, spinal cord,
    oesophagus, optic nerves) beyond the organ's position jitter: tortuosity."""
    end_inset_mm: float = 6.0
    """Mean distance along a tube from the drawn tube's full end to where an observer stops."""
    end_sd_slices: float = 1.0
    """SD, in slices, of where an observer stops a tube, per observer and end."""
    landmark_probability: float = 0.15
    """Chance, per observer, of stopping a long tube at its caudal end at another landmark."""
    landmark_levels: tuple[int, int] = (1, 3)
    """How many vertebral levels further up that observer stops (uniform, inclusive)."""
    level_mm: float = 18.0
    """Height of one cervical vertebral level (body plus disc)."""
    max_trim_fraction: float = 0.35
    """An observer never drops more than this fraction of a tube's length at one end."""
    island_probability: float = 0.08
    """Chance, per observer and organ, of a stray island: a disc on one slice near the organ."""
    island_gap_mm: tuple[float, float] = (2.0, 10.0)
    """Gap between the organ's true surface and the island's edge (uniform)."""
    island_radius_mm: tuple[float, float] = (1.5, 4.0)
    """In-plane radius of the island (uniform)."""
    skip_probability: float = 0.04
    """Chance, per observer and organ, of a skipped slice inside the organ."""
    skip_min_slices: int = 6
    """Only organs that span at least this many slices can have a skipped slice."""
    departure_rate: float = 1.0
    """Large organs: mean number (Poisson) of local departures per observer."""
    departure_mm: tuple[float, float] = (2.0, 6.0)
    """Height of a local departure (uniform; outwards or inwards with equal chance)."""
    departure_width_mm: tuple[float, float] = (4.0, 10.0)
    """Gaussian width (sigma) of a local departure (uniform): a patch about 1 to 2.5 cm
    across (full width at half height), part of a large organ's surface, not all of it."""


MODES = ObserverModes()
"""The modes the default dataset is drawn with."""

GRADIENT_CLIP = 3.0
"""`_as_distance` divides by at most this gradient norm."""

TUBE_BOUND_MM = GRADIENT_CLIP * (MAX_GROWTH_MM + ObserverModes.departure_mm[1]) + 1.0
"""Tube fields are exact up to this far beyond the tube surface: more than the largest outward
offset times the gradient clip, so no spurious surface forms where the exact values stop."""

Field = Callable[[np.ndarray, tuple[float, float]], np.ndarray]
"""(points (n, 3) in mm, (trim at start, trim at end) in mm) -> implicit values (n,)."""


# ---------------------------------------------------------------------------------------------
# Primitives. Each returns approximately the signed distance in mm (negative inside).


def rotation(angles_deg: Sequence[float]) -> np.ndarray:
    """Rotation matrix R = Rz Ry Rx for angles about x, y, z in degrees."""
    ax, ay, az = np.radians(angles_deg)
    rx = np.array([[1, 0, 0], [0, np.cos(ax), -np.sin(ax)], [0, np.sin(ax), np.cos(ax)]])
    ry = np.array([[np.cos(ay), 0, np.sin(ay)], [0, 1, 0], [-np.sin(ay), 0, np.cos(ay)]])
    rz = np.array([[np.cos(az), -np.sin(az), 0], [np.sin(az), np.cos(az), 0], [0, 0, 1]])
    return rz @ ry @ rx


def ellipsoid_sdf(points: np.ndarray, center, radii, rot: np.ndarray | None = None) -> np.ndarray:
    """Approximate signed distance to an ellipsoid: k0 (k0 - 1) / k1 with k0 = |q / r|,
    k1 = |q / r^2| and q the point in the ellipsoid's own frame (exact on the axes)."""
    local = np.asarray(points, float) - np.asarray(center, float)
    if rot is not None:
        local = local @ rot  # coordinates along the rotated axes (columns of rot)
    radii = np.asarray(radii, float)
    k0 = np.linalg.norm(local / radii, axis=1)
    k1 = np.linalg.norm(local / radii**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = k0 * (k0 - 1.0) / k1
    return np.where(k1 > 0, values, -radii.min())


@dataclass
class Tube:
    """A tube of varying radius around a cubic-spline centre line, with rounded ends.

    `scale` stretches space before measuring distance, giving elliptic cross-sections: the
    semi-axis along physical axis n is radius / scale[n] (for curves running across that axis).
    """

    controls: np.ndarray
    radii: np.ndarray
    scale: np.ndarray = field(default_factory=lambda: np.ones(3))
    sample_mm: float = 0.2

    def __post_init__(self) -> None:
        controls = np.asarray(self.controls, float) * self.scale
        chord = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(controls, axis=0), axis=1))]
        spline = CubicSpline(chord, controls, bc_type="natural")
        dense = spline(np.linspace(0.0, chord[-1], 2000))
        arc = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(dense, axis=0), axis=1))]
        count = max(int(arc[-1] / self.sample_mm), 8)
        self.arc = np.linspace(0.0, arc[-1], count)
        self.samples = np.column_stack([np.interp(self.arc, arc, dense[:, n]) for n in range(3)])
        # Radii are given per control point: spread them along arc length.
        self.sample_radii = np.interp(
            self.arc / self.arc[-1], chord / chord[-1], np.asarray(self.radii, float)
        )

    @property
    def length(self) -> float:
        """Centre-line length in the scaled space (mm for scale 1)."""
        return float(self.arc[-1])

    def nearest(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance to, and index of, the nearest centre-line sample (far points: inf, -1).

        Cached for the last `points` array: both observers query the same grid.
        """
        if getattr(self, "_cached_points", None) is not points:
            # Beyond `bound` exact values do not matter; it must exceed the largest observer
            # offset times the gradient clip in `_as_distance`, so no spurious surface forms.
            bound = float(self.sample_radii.max()) + TUBE_BOUND_MM
            dist, index = cKDTree(self.samples).query(
                np.asarray(points) * self.scale, distance_upper_bound=bound, workers=-1
            )
            index[~np.isfinite(dist)] = -1
            self._cached_points, self._cached = points, (dist, index)
        return self._cached

    def __call__(self, points: np.ndarray, trims: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """|p - c(s)| - r(s) for the nearest centre-line sample c(s), s in the trimmed range.

        A point whose nearest sample was trimmed away is nearest to the new end sample
        (exact for ends that are straight over the trimmed length): rounded caps.
        """
        dist, index = self.nearest(points)
        first = int(np.searchsorted(self.arc, trims[0]))
        last = int(np.searchsorted(self.arc, self.length - trims[1], side="right")) - 1
        if last - first < 2:
            raise ValueError("tube trimmed away entirely")
        far = index < 0
        bound = float(self.sample_radii.max()) + TUBE_BOUND_MM
        values = np.where(far, bound, dist - self.sample_radii[np.where(far, 0, index)])
        for cut, end in ((index < first) & ~far, first), ((index > last) & ~far, last):
            if cut.any():
                scaled = np.asarray(points)[cut] * self.scale
                values[cut] = (
                    np.linalg.norm(scaled - self.samples[end], axis=1) - self.sample_radii[end]
                )
        return values


# ---------------------------------------------------------------------------------------------
# Organs of one case.


@dataclass
class Organ:
    """The true shape of one organ in one case, and how observers may deviate from it."""

    field: Field
    lo: np.ndarray
    hi: np.ndarray
    step: float  # sampling step of the implicit function (mm)
    thickness: float  # thinnest full extent (mm); bounds how far an observer may shrink it
    disagreement: float  # RMS boundary offset of one observer from the truth (mm)
    # How observers stop a tube: "axial" on an axial slice, "arc" at a point along the tube
    # (rounded ends, for tubes that do not run head to foot), None for organs that are not
    # open tubes.
    ends: str | None = None
    landmarks: bool = False  # the caudal end is a landmark observers may choose differently
    axis: np.ndarray | None = None  # centre-line samples (n, 3) of a tube, mm
    arc: np.ndarray | None = None  # arc length at each sample (mm)


class CaseContext:
    """Random draws for one organ of one case, keyed so they never depend on other organs."""

    def __init__(self, seed: int, case: int, name: str):
        self.seed, self.case, self.name = seed, case, name
        self.category = OARS[name]
        # Paired organs end in _L/_R, the eye segments in L/R (Eye_AL, Eye_PR, ...).
        eye = name in ("Eye_AL", "Eye_AR", "Eye_PL", "Eye_PR")
        paired = eye or name.endswith(("_L", "_R"))
        self.side = -1.0 if paired and name.endswith("R") else 1.0
        pair = (name[:-1] if eye else name[:-2]) if paired else name
        case_rng = self.rng("case")
        self.head_scale = float(np.clip(case_rng.normal(1.0, 0.04), 0.9, 1.1))
        # The case's scanner: the head's pose in it and the CT slices observers draw on.
        scanner = self.rng("scanner")
        sd = MODES.pose_sd_deg
        self.pose = rotation(np.clip(scanner.normal(0.0, sd, 3), -3 * sd, 3 * sd))
        self.slice_mm = float(scanner.choice(MODES.slice_mm))
        self.slice_origin = float(scanner.uniform(0.0, self.slice_mm))
        self.shared = self.rng("pair:" + pair)  # same draws for left and right
        self.own = self.rng("organ:" + name)

    def rng(self, key: str) -> np.random.Generator:
        """A generator for (seed, case, key), independent of every other key."""
        return np.random.default_rng([self.seed, self.case, zlib.crc32(key.encode())])

    def pos(self, point: Sequence[float], jitter_mm: float = 1.5) -> np.ndarray:
        """A landmark mirrored to this organ's side, scaled with the head, jittered."""
        p = np.array(point, float) * [self.side, 1.0, 1.0] * self.head_scale
        shared = self.shared.normal(0.0, jitter_mm, 3) * [self.side, 1.0, 1.0]
        return p + shared + self.own.normal(0.0, jitter_mm / 3, 3)

    def size(self, sd: float = 0.06) -> float:
        """A size factor, log-normal around the head scale."""
        return self.head_scale * float(np.exp(self.shared.normal(0, sd) + self.own.normal(0, 0.02)))

    def axes(self, radii: Sequence[float], sd: float = 0.05) -> np.ndarray:
        """Radii with an overall size factor and independent per-axis variation."""
        return np.asarray(radii, float) * self.size() * np.exp(self.shared.normal(0, sd, 3))

    def angles(self, angles_deg: Sequence[float], sd_deg: float = 6.0) -> np.ndarray:
        """Euler angles mirrored for the right side (mirroring x flips y and z rotations)."""
        a = np.asarray(angles_deg, float) + self.shared.normal(0, sd_deg, 3)
        return a * [1.0, self.side, self.side]

    def curve(
        self, controls: Sequence[Sequence[float]], jitter_mm: float = 2.0, bend_mm: float = 0.0
    ) -> np.ndarray:
        """Centre-line control points on this side, scaled and jittered (ends included); the
        inner points also move by `bend_mm` (SD) independently on each side: tortuosity."""
        base = self.pos((0, 0, 0), jitter_mm=jitter_mm / 2)
        pts = np.array(controls, float) * [self.side, 1.0, 1.0] * self.head_scale
        wiggle = self.shared.normal(0, jitter_mm, pts.shape) * [self.side, 1.0, 1.0]
        bend = self.own.normal(0, bend_mm, pts.shape)
        bend[[0, -1]] = 0.0
        return pts + base + wiggle + bend


def _ellipsoid(center, radii, angles=(0, 0, 0)) -> Field:
    rot = rotation(angles)
    return lambda p, trims=(0.0, 0.0): ellipsoid_sdf(p, center, radii, rot)


def _union(*fields: Field) -> Field:
    return lambda p, trims=(0.0, 0.0): np.min([f(p, trims) for f in fields], axis=0)


def _box_of_ellipsoid(center, radii) -> tuple[np.ndarray, np.ndarray]:
    extent = np.max(radii)
    return np.asarray(center) - extent, np.asarray(center) + extent


def _box_of_tube(tube: Tube) -> tuple[np.ndarray, np.ndarray]:
    pts = tube.samples / tube.scale
    pad = float(tube.sample_radii.max() / tube.scale.min())
    return pts.min(axis=0) - pad, pts.max(axis=0) + pad


def _blob_organ(ctx: CaseContext, center, radii, angles, *, step, disagreement) -> Organ:
    c, r = ctx.pos(center), ctx.axes(radii)
    lo, hi = _box_of_ellipsoid(c, r)
    return Organ(
        _ellipsoid(c, r, ctx.angles(angles)), lo, hi, step, 2 * float(r.min()), disagreement
    )


def _tube_organ(
    ctx: CaseContext,
    controls,
    radii,
    *,
    scale=(1, 1, 1),
    step,
    disagreement,
    ends="axial",
    landmarks=False,
    bend=True,
) -> Organ:
    tube = Tube(
        ctx.curve(controls, bend_mm=MODES.bend_mm if bend else 0.0),
        np.asarray(radii, float) * ctx.size(0.06),
        np.asarray(scale, float),
    )
    lo, hi = _box_of_tube(tube)
    thickness = 2 * float(tube.sample_radii.min() / tube.scale.max())
    axis = tube.samples / tube.scale
    return Organ(
        tube, lo, hi, step, thickness, disagreement, ends, landmarks, axis, tube.arc.copy()
    )


def _oral_cavity_shape(ctx: CaseContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, radii and rotation of the oral cavity: shared by lips and buccal mucosa."""
    oral = CaseContext(ctx.seed, ctx.case, "Cavity_Oral")
    center = oral.pos((0, -52, -57))
    radii = oral.axes((26, 33, 18))
    return center, radii, rotation(oral.angles((8, 0, 0), 3.0))


def _cavity_oral(ctx: CaseContext) -> Organ:
    center, radii, rot = _oral_cavity_shape(ctx)
    lo, hi = _box_of_ellipsoid(center, radii)
    return Organ(
        lambda p, t=(0, 0): ellipsoid_sdf(p, center, radii, rot),
        lo,
        hi,
        0.9,
        2 * float(radii.min()),
        1.3,
    )


def _buccal_mucosa(ctx: CaseContext) -> Organ:
    """Thin shell (about 3 mm) on the inner cheeks, outside the oral cavity: two components."""
    center, radii, rot = _oral_cavity_shape(ctx)
    wall = 3.2 * ctx.size(0.1)

    def shell(p: np.ndarray, trims=(0.0, 0.0)) -> np.ndarray:
        g = ellipsoid_sdf(p, center, radii, rot)
        local = p - center
        values = np.abs(g - wall / 2) - wall / 2
        values = np.maximum(values, np.abs(local[:, 2]) - 0.65 * radii[2])
        values = np.maximum(values, 0.5 * radii[0] - np.abs(local[:, 0]))
        return np.maximum(values, np.abs(local[:, 1]) - 0.72 * radii[1])

    reach = radii + wall + 1
    lo = center - reach * [1.0, 0.75, 0.7]
    hi = center + reach * [1.0, 0.75, 0.7]
    return Organ(shell, lo, hi, 0.5, wall, 0.55)


def _lips(ctx: CaseContext) -> Organ:
    """An arched slab (about 6 mm thick) in front of the oral cavity."""
    center, radii, _ = _oral_cavity_shape(ctx)
    ax, ay = 30 * ctx.size(), 38 * ctx.size()
    thick, half_height = 6.0 * ctx.size(0.1), 11.0 * ctx.size(0.1)
    mouth = center + [0, -2, 0]

    def slab(p: np.ndarray, trims=(0.0, 0.0)) -> np.ndarray:
        local = p - mouth
        flat = np.column_stack([local[:, 0], local[:, 1], np.zeros(len(p))])
        g = ellipsoid_sdf(flat, (0, 0, 0), (ax, ay, 1e6))
        values = np.abs(g + thick / 2) - thick / 2
        values = np.maximum(values, np.abs(local[:, 2]) - half_height)
        return np.maximum(values, local[:, 1] + 0.58 * ay)

    lo = mouth + [-ax, -ay, -half_height]
    hi = mouth + [ax, -0.5 * ay, half_height]
    return Organ(slab, lo, hi, 0.55, thick, 0.6)


def _mandible(ctx: CaseContext) -> Organ:
    """A U-shaped arch (tall, thin elliptic cross-section) with two ascending rami."""
    body = Tube(
        ctx.curve(
            [
                (-47, -8, -62),
                (-42, -40, -70),
                (-28, -70, -76),
                (0, -84, -80),
                (28, -70, -76),
                (42, -40, -70),
                (47, -8, -62),
            ],
            1.5,
        ),
        np.full(7, 5.2 * ctx.size(0.05)),
        np.array([1.0, 1.0, 1 / 2.6]),
    )
    rami = [
        Tube(
            ctx.curve([(s * 47, -8, -62), (s * 49, -2, -40), (s * 50, 6, -18)], 1.5),
            np.full(3, 4.2 * ctx.size(0.05)),
            np.array([1.0, 1 / 2.4, 1.0]),
        )
        for s in (-1.0, 1.0)
    ]
    boxes = [_box_of_tube(t) for t in (body, *rami)]
    lo = np.min([b[0] for b in boxes], axis=0)
    hi = np.max([b[1] for b in boxes], axis=0)
    return Organ(_union(body, *rami), lo, hi, 0.8, 8.0, 0.5)


def _thyroid(ctx: CaseContext) -> Organ:
    """Two lobes beside the trachea joined by an isthmus."""
    lobes = []
    for s in (-1.0, 1.0):
        c = ctx.pos((s * 16, -18, -150))
        lobes.append(_ellipsoid(c, ctx.axes((8, 9, 21)), (0, s * 10, 0)))
    isthmus = Tube(
        ctx.curve([(-12, -26, -158), (0, -29, -158), (12, -26, -158)], 1.0),
        np.full(3, 4.0),
        np.array([1.0, 1.3, 0.8]),
    )
    center = ctx.pos((0, -18, -150), 0)
    lo, hi = center - [30, 16, 28], center + [30, 16, 28]
    return Organ(_union(*lobes, isthmus), lo, hi, 0.7, 8.0, 0.7)


def _parotid(ctx: CaseContext) -> Organ:
    """Superficial lobe in front of the ear plus a deep lobe reaching medially."""
    c = ctx.pos((48, 2, -30))
    r = ctx.axes((11, 18, 24))
    deep_c = c + np.array([-14 * ctx.side, -2, -5])
    deep_r = ctx.axes((8, 8, 10))
    superficial = _ellipsoid(c, r, ctx.angles((-10, 0, 0)))
    deep = _ellipsoid(deep_c, deep_r)
    lo = np.minimum(c - r.max(), deep_c - deep_r.max())
    hi = np.maximum(c + r.max(), deep_c + deep_r.max())
    return Organ(_union(superficial, deep), lo, hi, 0.8, 16.0, 1.2)


def _chiasm(ctx: CaseContext) -> Organ:
    """An X of two short crossing bundles, flattened vertically."""
    arms = [
        Tube(
            ctx.curve([(-8, -14 + 14 * k, 8), (0, -7, 8), (8, -14 * k, 8)], 0.8),
            np.full(3, 1.9 * ctx.size(0.06)),
            np.array([1.0, 1.0, 1.3]),
        )
        for k in (0, 1)
    ]
    center = ctx.pos((0, -7, 8), 0)
    return Organ(_union(*arms), center - [12, 12, 6], center + [12, 12, 6], 0.35, 2.8, 0.35)


EYE_CENTER, EYE_RADII = (32.0, -60.0, 4.0), (12.3, 12.3, 12.0)


def _eye_anterior(ctx: CaseContext) -> Organ:
    """Cornea, anterior chamber and lens: a lens-shaped blob on the front of the globe."""
    # Same draws as the posterior segment's builder, so both sit on one globe.
    posterior = CaseContext(ctx.seed, ctx.case, "Eye_P" + ctx.name[-1])
    globe = posterior.pos(EYE_CENTER)
    radius = float(posterior.axes(EYE_RADII)[1])
    center = globe - [0.0, radius - 2.0, 0.0] + ctx.own.normal(0, 0.3, 3)
    radii = ctx.axes((6, 3, 6))
    lo, hi = _box_of_ellipsoid(center, radii)
    return Organ(_ellipsoid(center, radii), lo, hi, 0.35, 2 * float(radii.min()), 0.45)


BUILDERS: dict[str, Callable[[CaseContext], Organ]] = {
    "Eye_PL": lambda c: _blob_organ(
        c, EYE_CENTER, EYE_RADII, (0, 0, 0), step=0.6, disagreement=0.5
    ),
    "Eye_AL": _eye_anterior,
    "OpticNrv_L": lambda c: _tube_organ(
        c,
        [(30, -48, 4), (25, -35, 6), (15, -20, 7), (6, -8, 8)],
        [1.8, 1.75, 1.7, 1.7],
        step=0.35,
        disagreement=0.3,
        ends="arc",
    ),
    "OpticChiasm": _chiasm,
    "Pituitary": lambda c: _blob_organ(
        c, (0, 0, 0), (6, 5, 4), (10, 0, 0), step=0.35, disagreement=0.45
    ),
    "Cochlea_L": lambda c: _blob_organ(
        c, (30, 14, -6), (3.4, 2.6, 2.0), (20, 10, 40), step=0.3, disagreement=0.35
    ),
    "Glnd_Lacrimal_L": lambda c: _blob_organ(
        c, (44, -60, 17), (8.5, 5, 3.2), (0, 15, -40), step=0.35, disagreement=0.55
    ),
    "Parotid_L": _parotid,
    "Glnd_Submand_L": lambda c: _blob_organ(
        c, (30, -30, -68), (15, 10.5, 10), (0, 0, 30), step=0.7, disagreement=0.9
    ),
    "Brainstem": lambda c: _tube_organ(
        c,
        [(0, 22, 22), (0, 24, 5), (0, 27, -15), (0, 32, -35)],
        [11, 13.5, 12, 9.5],
        scale=(1 / 1.15, 1 / 0.9, 1),
        step=0.9,
        disagreement=0.8,
        bend=False,
    ),
    "SpinalCord": lambda c: _tube_organ(
        c,
        [(0, 32, -37), (0, 27, -80), (0, 25, -125), (0, 30, -205)],
        [5.5, 5.5, 5.4, 5.2],
        scale=(1 / 1.25, 1 / 0.85, 1),
        step=0.7,
        disagreement=0.5,
        landmarks=True,
    ),
    "Esophagus_S": lambda c: _tube_organ(
        c,
        [(-3, 10, -128), (-4, 12, -150), (-5, 14, -175)],
        [6.5, 6.5, 6.5],
        scale=(1 / 1.3, 1 / 0.75, 1),
        step=0.6,
        disagreement=0.7,
        landmarks=True,
    ),
    "Cricopharyngeus": lambda c: _blob_organ(
        c, (-2, 9, -118), (12, 8, 6.5), (0, 0, 0), step=0.5, disagreement=0.6
    ),
    "Larynx_SG": lambda c: _blob_organ(
        c, (0, -18, -92), (16, 15, 17), (-10, 0, 0), step=0.8, disagreement=0.9
    ),
    "Glottis": lambda c: _blob_organ(
        c, (0, -16, -111), (10, 12, 4.5), (0, 0, 0), step=0.5, disagreement=0.8
    ),
    "Arytenoid": lambda c: _union_of_blobs(
        c,
        [((-3.5, -6, -106), (3.6, 4, 5)), ((3.5, -6, -106), (3.6, 4, 5))],
        step=0.35,
        disagreement=0.55,
    ),
    "Glnd_Thyroid": _thyroid,
    "A_Carotid_L": lambda c: _tube_organ(
        c,
        [(24, 8, -195), (22, 4, -140), (20, 2, -95), (24, 8, -60), (26, 14, -35), (24, 16, -15)],
        [3.0, 2.8, 2.6, 2.4, 2.2, 2.1],
        step=0.6,
        disagreement=0.45,
        landmarks=True,
    ),
    "Bone_Mandible": _mandible,
    "Cavity_Oral": _cavity_oral,
    "Lips": _lips,
    "BuccalMucosa": _buccal_mucosa,
}
for _left in [name for name in BUILDERS if name.endswith(("_L", "AL", "PL"))]:
    _right = _left[:-1] + "R"
    BUILDERS[_right] = BUILDERS[_left]


def _union_of_blobs(ctx: CaseContext, blobs, *, step, disagreement) -> Organ:
    fields, los, his, thin = [], [], [], []
    for center, radii in blobs:
        c, r = ctx.pos(center, 0.5), ctx.axes(radii)
        fields.append(_ellipsoid(c, r))
        lo, hi = _box_of_ellipsoid(c, r)
        los.append(lo), his.append(hi), thin.append(2 * r.min())
    return Organ(
        _union(*fields),
        np.min(los, axis=0),
        np.max(his, axis=0),
        step,
        float(min(thin)),
        disagreement,
    )


def build_organ(name: str, case: int, seed: int) -> Organ:
    """The true shape of organ `name` in `case` (deterministic in seed, case, name), in the
    scanner frame: the patient frame turned by the case's head pose."""
    check_oar_names([name])
    ctx = CaseContext(seed, case, name)
    return _posed(BUILDERS[name](ctx), ctx.pose)


def _posed(organ: Organ, pose: np.ndarray) -> Organ:
    """`organ` turned by the rotation `pose` about the patient frame's origin: the field at a
    scanner point p is the patient field at pose^T p; box and centre line turn with it."""
    patient_field, last = organ.field, {}

    def scanner_field(points: np.ndarray, trims=(0.0, 0.0)) -> np.ndarray:
        # Keep the turned array while the same points come back (both observers query one
        # grid): tube fields cache their nearest-sample search on the array's identity.
        if last.get("points") is not points:
            last["points"], last["turned"] = points, np.asarray(points) @ pose
        return patient_field(last["turned"], trims)

    corners = np.array(np.meshgrid(*zip(organ.lo, organ.hi, strict=True), indexing="ij"))
    turned = corners.reshape(3, -1).T @ pose.T
    axis = None if organ.axis is None else organ.axis @ pose.T
    return replace(
        organ, field=scanner_field, lo=turned.min(axis=0), hi=turned.max(axis=0), axis=axis
    )


# ---------------------------------------------------------------------------------------------
# Observers.


def _grid(organ: Organ, margin: float) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Origin, axis coordinates and (n, 3) points (x-major order) of the sampling grid: the
    organ's box plus `margin` mm."""
    lo = np.floor((organ.lo - margin) / organ.step) * organ.step
    hi = organ.hi + margin
    shape = np.ceil((hi - lo) / organ.step).astype(int) + 1
    axes = [lo[n] + organ.step * np.arange(shape[n]) for n in range(3)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return lo, axes, points


def _as_distance(values: np.ndarray, step: float) -> np.ndarray:
    """f / |grad f|: a first-order signed distance near {f = 0}, whatever the field's scale."""
    gradient = np.gradient(values, step)
    norm = np.sqrt(sum(g * g for g in gradient))
    # Clipping the gradient keeps jumps (tube fields capped far away) from pulling a far
    # value down towards zero, which would create a spurious surface there.
    return values / np.clip(norm, 0.2, GRADIENT_CLIP)


def _separable(factors: list[np.ndarray]) -> np.ndarray:
    """Outer product f0(x) f1(y) f2(z) on the grid."""
    return factors[0][:, None, None] * factors[1][None, :, None] * factors[2][None, None, :]


def smooth_offsets(
    axes: list[np.ndarray],
    rng: np.random.Generator,
    *,
    rms: float,
    wavelengths=(15.0, 60.0),
    waves: int = 5,
    bias: bool = True,
) -> np.ndarray:
    """Low-frequency random field on the grid: an optional bias plus `waves` plane waves,
    sum a_k cos(2 pi u_k . x / lambda_k + phi_k), random direction, wavelength and phase;
    RMS about `rms`. Each wave factorises, exp(i k.x) = exp(i kx x) exp(i ky y) exp(i kz z),
    which makes it cheap on a grid."""
    directions = rng.normal(size=(waves, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    wavenumbers = 2 * np.pi * directions / rng.uniform(*wavelengths, (waves, 1))
    phases = rng.uniform(0, 2 * np.pi, waves)
    # Amplitudes scaled so the waves' RMS is exactly 1 (sum a_k^2 / 2 = 1): no heavy tail
    # of rare, huge offsets; the bias is bounded by one RMS for the same reason.
    amplitudes = rng.normal(0, 1.0, waves)
    amplitudes *= np.sqrt(2.0 / np.sum(amplitudes**2))
    offset = float(np.clip(rng.normal(0, 0.5), -1.0, 1.0)) if bias else 0.0
    centered = [a - a.mean() for a in axes]
    total = np.zeros([len(a) for a in axes])
    for k in range(waves):
        factors = [
            np.exp(1j * wavenumbers[k, n] * centered[n]).astype(np.complex64) for n in range(3)
        ]
        factors[0] = factors[0] * np.exp(1j * phases[k]) * amplitudes[k]
        total += _separable(factors).real
    norm = np.sqrt(1.0 + (0.25 if bias else 0.0))
    return rms * (offset + total) / norm


def _gaussian(axes: list[np.ndarray], center, sigma: float, height: float) -> np.ndarray:
    """height exp(-|x - c|^2 / (2 sigma^2)) on the grid; it factorises per axis."""
    factors = [np.exp(-((a - c) ** 2) / (2 * sigma**2)) for a, c in zip(axes, center, strict=True)]
    factors[0] = factors[0] * height
    return _separable(factors)


def _bumps(
    axes: list[np.ndarray],
    surface_points: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    organ_size: float,
) -> np.ndarray:
    """Local over- (+) and under- (-) segmentation: Gaussian bumps centred on the surface."""
    offsets = np.zeros([len(a) for a in axes])
    for _ in range(rng.poisson(1.2)):
        center = surface_points[rng.integers(len(surface_points))]
        sigma = rng.uniform(0.1, 0.3) * organ_size
        height = rng.choice([-1.0, 1.0]) * rng.uniform(0.8, 2.0) * scale
        offsets += _gaussian(axes, center, sigma, height)
    return offsets


def _departures(
    axes: list[np.ndarray],
    surface_points: np.ndarray,
    rng: np.random.Generator,
    modes,
) -> np.ndarray:
    """A large organ's boundary departing locally where its border is unclear: Gaussian
    patches of `modes.departure_mm` and `modes.departure_width_mm` on the surface."""
    offsets = np.zeros([len(a) for a in axes])
    for _ in range(rng.poisson(modes.departure_rate)):
        center = surface_points[rng.integers(len(surface_points))]
        height = rng.choice([-1.0, 1.0]) * rng.uniform(*modes.departure_mm)
        offsets += _gaussian(axes, center, rng.uniform(*modes.departure_width_mm), height)
    return offsets


def _slice_index(z, slices: tuple[float, float]):
    """Index of the CT slice (thickness, origin) whose centre is nearest to z."""
    thickness, origin = slices
    return np.round((np.asarray(z) - origin) / thickness)


def _tube_stops(organ: Organ, rng: np.random.Generator, slice_mm: float, modes) -> list[float]:
    """How much of the tube one observer leaves out at its start and end (arc length, mm):
    `end_inset_mm` plus a normal number of slices; at the caudal end of a tube with
    landmarks, now and then whole vertebral levels more."""
    length = float(organ.arc[-1])
    caudal = 0 if organ.axis[0, 2] < organ.axis[-1, 2] else 1
    trims = []
    for end in (0, 1):
        trim = modes.end_inset_mm + slice_mm * rng.normal(0.0, modes.end_sd_slices)
        if organ.landmarks and end == caudal and rng.random() < modes.landmark_probability:
            trim += rng.integers(*modes.landmark_levels, endpoint=True) * modes.level_mm
        trims.append(float(np.clip(trim, 0.0, modes.max_trim_fraction * length)))
    return trims


def _axial_stops(
    organ: Organ, axes: list[np.ndarray], trims: list[float], slices: tuple[float, float]
) -> np.ndarray:
    """Where one observer's tube ends on an axial tube: the signed distance to the slab
    between the outer faces of the slices nearest to the trimmed ends (negative inside)."""
    length = float(organ.arc[-1])
    z_ends = np.interp([trims[0], length - trims[1]], organ.arc, organ.axis[:, 2])
    first, last = _slice_index(np.sort(z_ends), slices)
    thickness, origin = slices
    low, high = origin + (first - 0.5) * thickness, origin + (last + 0.5) * thickness
    z = axes[2][None, None, :]
    return np.maximum(low - z, z - high)


def rounded_intersection(f: np.ndarray, g: np.ndarray, radius: float) -> np.ndarray:
    """Intersection of two signed distances with the edge rounded to `radius`:
    min(-r, max(f, g)) + |(max(f + r, 0), max(g + r, 0))| (exact max(f, g) away from the
    edge, a quarter circle of radius r across it)."""
    u, v = np.maximum(f + radius, 0.0), np.maximum(g + radius, 0.0)
    return np.minimum(-radius, np.maximum(f, g)) + np.hypot(u, v)


def _skip_slice(
    values: np.ndarray,
    axes: list[np.ndarray],
    surface_points: np.ndarray,
    rng: np.random.Generator,
    slices: tuple[float, float],
    modes,
) -> np.ndarray:
    """Now and then an observer leaves one inner slice of an organ empty: the field is at
    least thickness / 2 - |z - z_k| there."""
    if rng.random() >= modes.skip_probability or not len(surface_points):
        return values
    first, last = _slice_index(
        [surface_points[:, 2].min(), surface_points[:, 2].max()], slices
    ).astype(int)
    if last - first + 1 < modes.skip_min_slices:
        return values
    thickness, origin = slices
    center = origin + rng.integers(first + 2, last - 1) * thickness
    return np.maximum(values, thickness / 2 - np.abs(axes[2] - center)[None, None, :])


def _stray_island(
    values: np.ndarray,
    axes: list[np.ndarray],
    truth: np.ndarray,
    surface_points: np.ndarray,
    step: float,
    rng: np.random.Generator,
    slices: tuple[float, float],
    modes,
) -> np.ndarray:
    """Now and then an observer draws a stray island: a disc one slice thick, a few mm off
    the organ's surface, kept inside the sampling grid."""
    if rng.random() >= modes.island_probability or not len(surface_points):
        return values
    anchor = surface_points[rng.integers(len(surface_points))]
    outward = _normal(truth, axes, anchor, step)
    radius = rng.uniform(*modes.island_radius_mm)
    center = anchor + outward * (radius + rng.uniform(*modes.island_gap_mm))
    thickness, origin = slices
    center[2] = origin + _slice_index(center[2], slices) * thickness
    reach = np.array([radius, radius, thickness / 2]) + 2 * step
    low = np.array([a[0] for a in axes]) + reach
    high = np.array([a[-1] for a in axes]) - reach
    center = np.clip(center, low, np.maximum(low, high))
    # Only the neighbourhood of the disc can change: evaluate it there.
    box = [
        np.flatnonzero(np.abs(a - c) <= r + step)
        for a, c, r in zip(axes, center, reach, strict=True)
    ]
    x, y, z = np.meshgrid(*[a[b] for a, b in zip(axes, box, strict=True)], indexing="ij")
    disc = np.maximum(
        np.hypot(x - center[0], y - center[1]) - radius, np.abs(z - center[2]) - thickness / 2
    )
    sub = np.ix_(*box)
    values[sub] = np.minimum(values[sub], disc)
    return values


def _normal(truth: np.ndarray, axes: list[np.ndarray], point: np.ndarray, step: float):
    """Unit outward normal of the field `truth` at grid point `point` (central differences)."""
    index = np.array([int(np.argmin(np.abs(a - c))) for a, c in zip(axes, point, strict=True)])
    index = np.clip(index, 1, np.array(truth.shape) - 2)
    gradient = np.array(
        [truth[tuple(index + e)] - truth[tuple(index - e)] for e in np.eye(3, dtype=int)]
    ) / (2 * step)
    return gradient / max(np.linalg.norm(gradient), 1e-9)


def _observer_field(
    organ: Organ,
    ctx: CaseContext,
    observer: str,
    axes: list[np.ndarray],
    points: np.ndarray,
    case_offsets: np.ndarray,
    untrimmed: np.ndarray,
    modes: ObserverModes,
) -> np.ndarray:
    """One observer's implicit field: the organ as they stop it, minus their offsets, with
    their skipped slice and stray island if they have one. Every mode draws from its own
    generator, so one mode's draws never shift another's."""

    def rng(mode: str) -> np.random.Generator:
        return ctx.rng(f"{mode}:{observer}:{ctx.name}")

    slices = (ctx.slice_mm, ctx.slice_origin)
    truth, stops = untrimmed, None
    if organ.ends:
        trims = _tube_stops(organ, rng("ends"), ctx.slice_mm, modes)
    if organ.ends == "arc":  # rounded ends where the observer stops
        field = organ.field(points, tuple(trims)).reshape(untrimmed.shape)
        truth = _as_distance(field, organ.step)
    elif organ.ends == "axial":
        # The last slice drawn ends the tube wherever the observer's boundary runs; its rim
        # is rounded over about a slice (a smaller last contour, and meshing smooths the step).
        stops = _axial_stops(organ, axes, trims, slices)
        rim = min(ctx.slice_mm, 0.45 * organ.thickness)
        truth = rounded_intersection(untrimmed, stops, rim)
    near = points[np.abs(truth.ravel()) < organ.step]
    size = min(float(np.linalg.norm(organ.hi - organ.lo)) / 2, 40.0)
    smooth = rng("observer")
    scale = organ.disagreement * smooth.uniform(0.7, 1.3)
    offsets = case_offsets + smooth_offsets(axes, smooth, rms=scale)
    offsets += _bumps(axes, near, smooth, scale, size)
    # Observers disagree by a few mm at most, and never erase a structure.
    shrink = min(0.4 * organ.thickness, 3.0)
    offsets = np.clip(offsets, -shrink, MAX_GROWTH_MM)
    if ctx.category == "large" and len(near):
        # Outwards as far as the departure goes; inwards no further than the smooth offsets
        # may go, so a departure never erases a lobe.
        offsets += _departures(axes, near, rng("departures"), modes)
        offsets = np.maximum(offsets, -shrink)
    values = truth - offsets
    if stops is not None:
        values = rounded_intersection(untrimmed - offsets, stops, rim)
    values = _skip_slice(values, axes, near, rng("skip"), slices, modes)
    return _stray_island(values, axes, truth, near, organ.step, rng("island"), slices, modes)


def observer_meshes(
    name: str, case: int, seed: int, modes: ObserverModes = MODES
) -> dict[str, vtkPolyData]:
    """Meshes of organ `name` in `case` as drawn by observers A and B."""
    organ = build_organ(name, case, seed)
    ctx = CaseContext(seed, case, name)
    rng = ctx.rng("observers:" + name)
    margin = GRID_MARGIN_MM + (modes.departure_mm[1] if ctx.category == "large" else 0.0)
    origin, axes, points = _grid(organ, margin)
    # Shared per-case shape variation, on top of the landmark and size draws.
    case_offsets = smooth_offsets(
        axes, rng, rms=min(0.04 * organ.thickness, 0.5), wavelengths=(20.0, 80.0), bias=False
    )
    untrimmed = _as_distance(organ.field(points).reshape(case_offsets.shape), organ.step)
    meshes = {}
    for observer in OBSERVERS:
        values = _observer_field(organ, ctx, observer, axes, points, case_offsets, untrimmed, modes)
        values[[0, -1], :, :] = values[:, [0, -1], :] = values[:, :, [0, -1]] = FAR
        mesh = mesh_from_field(values, (organ.step,) * 3, origin, smooth_iterations=10)
        check_closed(mesh, name=f"synthetic {name} case {case} observer {observer}")
        meshes[observer] = mesh
    return meshes


def generate_case(
    case: int, seed: int, oars: Sequence[str] | None = None
) -> dict[str, dict[str, vtkPolyData | None]]:
    """OAR name -> {"A": mesh, "B": mesh} for one synthetic case (closed meshes in mm)."""
    names = list(OARS) if oars is None else check_oar_names(oars, where="generate_case oars")
    return {name: observer_meshes(name, case, seed) for name in names}


# ---------------------------------------------------------------------------------------------
# Files.


def case_id(case: int) -> str:
    """HaN-Seg style case folder name: case_01, case_02, ..."""
    return f"case_{case:02d}"


def is_foreign_folder(folder: str | Path) -> bool:
    """True when `folder` holds files but no generator marker: someone else's data.

    Empty directories do not count (Snakemake creates output folders before a job runs).
    """
    folder = Path(folder)
    if not folder.exists() or (folder / MARKER_FILE).is_file():
        return False
    return any(path.is_file() or path.is_symlink() for path in folder.rglob("*"))


def claim_folder(folder: Path, *, seed: int) -> None:
    """Create `folder` for a synthetic dataset, or accept it if this generator made it.

    A folder that exists without the marker may hold someone's data: refuse to touch it.
    """
    marker = folder / MARKER_FILE
    if is_foreign_folder(folder):
        raise FileExistsError(
            f"{folder}: exists and was not created by the synthetic generator (no {MARKER_FILE});"
            " refusing to overwrite it. Choose another dataset.name or move the folder."
        )
    folder.mkdir(parents=True, exist_ok=True)
    if not marker.is_file():
        marker.write_text(json.dumps({"generator": "study.dataset.synthetic", "seed": seed}) + "\n")


def write_case(folder: str | Path, case: int, seed: int, oars: Sequence[str] | None = None) -> Path:
    """Generate one case into folder/meshes/<case_id>/ with its manifest.csv; return that path.

    Paths in the case manifest are relative to it (file names).
    """
    return write_case_meshes(folder, case, seed, generate_case(case, seed, oars), OARS)


def write_case_meshes(
    folder: str | Path, case: int, seed: int, pairs: Mapping, categories: Mapping[str, str]
) -> Path:
    """A generated case's pairs (name -> {"A": mesh, "B": mesh}) into
    folder/meshes/<case_id>/ with its manifest.csv (each name's category from `categories`),
    in a folder this generator claims; the manifest's path."""
    folder = Path(folder)
    claim_folder(folder, seed=seed)
    case_dir = folder / "meshes" / case_id(case)
    rows = []
    for name, pair in pairs.items():
        rows += write_observer_meshes(
            case_dir, case=case_id(case), oar=name, category=categories[name], meshes=pair
        )
    write_manifest(rows, case_dir / "manifest.csv")
    return case_dir / "manifest.csv"


def agreement_summary(cases: int, seed: int, spacing=(0.5, 0.5, 0.5)) -> str:
    """DSC between observers and volumes per category, from masks at `spacing`, as text."""
    import pandas as pd

    from study.dataset.voxelize import voxelize_pair
    from study.records import spacing_label

    rows = []
    for case in range(1, cases + 1):
        for name, pair in generate_case(case, seed).items():
            vox = voxelize_pair(pair["A"], pair["B"], spacing)
            both = np.logical_and(vox.mask_a, vox.mask_b).sum()
            dsc = 2 * both / (vox.mask_a.sum() + vox.mask_b.sum())
            rows.append(
                {
                    "case": case,
                    "oar": name,
                    "category": OARS[name],
                    "dsc": dsc,
                    "volume_cm3": mesh_volume(pair["A"]) / 1e3,
                }
            )
    table = pd.DataFrame(rows)
    by_category = table.groupby("category")["dsc"].describe(percentiles=[0.1, 0.5, 0.9])
    by_oar = table.groupby("oar").agg(
        category=("category", "first"),
        volume_cm3=("volume_cm3", "median"),
        dsc_median=("dsc", "median"),
        dsc_min=("dsc", "min"),
        dsc_max=("dsc", "max"),
    )
    return (
        f"Observer agreement (DSC of A vs B at {spacing_label(spacing)} mm), {cases} case(s), "
        f"seed {seed}\n\nper category:\n{by_category.round(3).to_string()}\n\n"
        f"per OAR:\n{by_oar.round(3).to_string()}\n"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: print the observer-agreement distribution of the synthetic dataset."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20240215)
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print DSC per category and per OAR (the only action so far)",
    )
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    print(agreement_summary(args.cases, args.seed))


if __name__ == "__main__":
    main()
