"""Schemas of the records every stage exchanges.

One long ("tidy") table carries every score; the edge-case probe and the timing runs have
records of their own. Analyses read these and never re-run a tool.
"""

from __future__ import annotations

import math

SCORE_COLUMNS: tuple[str, ...] = (
    "dataset",
    "case",
    "oar",
    "category",
    "spacing",
    "tool",
    "tool_version",
    "environment",
    "metric",
    "value",
    "status",
    "message",
    "seconds",
)
"""Columns of results/scores.parquet and of every per-job scores file.

`spacing` is a label made by `spacing_label`; `tool` is a registry key or a reference variant;
`environment` the Python environment the tool ran in (`adapters.environments`: "study" for
today's versions and for the reference, "paper" for the paper's); `seconds` is the time of the
one call that produced all of that tool's metrics for the pair.
"""

BRACKET_COLUMNS: tuple[str, ...] = ("reference_low", "reference_high")
"""Columns every scores file of `score_pairs` adds after SCORE_COLUMNS: the reference's proven
bracket of its value when the study asks for it (`reference.brackets`), else NaN; NaN for
tools. Only Table A1's note of the reference's uncertainty reads them; tables written before
them lack them."""

VERDICT_COLUMNS: dict[str, str] = {
    "metric": "text",
    "spacing": "text",
    "grid": "text",
    "stratum": "text",
    "tool": "text",
    "identical": "text",
    "verdict": "text",
    "rank": "number",
    "reason": "text",
    "unit": "text",
    "tolerance": "number",
    "tolerance_basis": "text",
    "readers_median": "number",
    "readers_q1": "number",
    "readers_q3": "number",
    "n": "number",
    "n_finite": "number",
    "n_undefined": "number",
    "within": "number",
    "n_outside": "number",
    "median": "number",
    "sd": "number",
    "worst": "number",
    "worst_category": "text",
    "lo": "number",
    "hi": "number",
    "n_failed": "number",
    "n_nonfinite": "number",
    "reasons": "text",
    "cautions": "text",
    "reference_seconds": "number",
    "reference_max_seconds": "number",
}
"""Columns of the verdict table and whether each holds text or numbers
(tables/recommendations.csv, written once by rule
verdict_table, `study.analysis.verdicts.verdict_table`, and read by the pages), one row per
metric, grid (`spacing`, its label; `grid`, its title), stratum and tool; tools with identical
scores on the grid and the same verdict share a row (`tool` the first in tool order,
`identical` the others, ", "-joined). `reason`: the words that decided the verdict, printed
beside it; `reasons`: every measured reason to avoid; `cautions`: what a user must handle (the
answers on the pairs the reference leaves undefined, empty masks, a declared voxel size
ignored). `tolerance` in display units with its `tolerance_basis` ("absolute" or "readers");
`readers_*`: the reference's values on the stratum's pairs (median and quartiles, display
units: mm, or % for NSD and BIoU); `n`: the pairs the reference defines, `n_undefined` those
it does not; `within`: share of the n within the tolerance, `n_outside` the rest; lo, hi: the
interval holding 95 % of the finite Δ; `reference_seconds` and `reference_max_seconds`: the
reference's median and longest time per pair on the grid, the exact route."""

VERDICT_TEXT_COLUMNS: tuple[str, ...] = tuple(
    name for name, kind in VERDICT_COLUMNS.items() if kind == "text"
)
"""The verdict table's text columns, read as text (an empty cell is "", never NaN)."""

STATUSES: tuple[str, ...] = ("ok", "nan", "inf", "error", "unavailable")
"""ok: finite value; nan / inf: non-finite value (inf keeps its sign in `value`);
error: the tool raised, crashed, timed out or printed nothing usable (`message` says what);
unavailable: the tool is not installed here (`message` says why)."""

TIMING_COLUMNS: tuple[str, ...] = (
    "dataset",
    "case",
    "oar",
    "category",
    "spacing",
    "grid",
    "shape",
    "tool",
    "tool_version",
    "environment",
    "repeat",
    "seconds",
    "status",
    "message",
)
"""Columns of results/timing/<tool>.parquet: HD for one pair, one row per repeat. `grid` is the
field-of-view policy the masks were voxelized with (scan, union_bbox = cropped, fixed) and
`shape` the masks' voxels per axis, as `shape_label` writes it."""

EDGE_CASES: tuple[str, ...] = ("O1", "O2", "O3", "S")
"""O1: A empty; O2: B empty; O3: both empty; S: A and B swapped on a non-trivial pair."""

EDGE_OUTPUTS: tuple[str, ...] = (
    "number",
    "0",
    "1",
    "nan",
    "inf",
    "-inf",
    "float_max",
    "error",
    "empty",
    "unchanged",
    "changed",
)
"""Output classes of one edge-case record; "unchanged"/"changed" only for case S."""

_VARIANTS: tuple[tuple[str, str, str], ...] = (
    # tool name in the scores table, meshing (reference.meshing), label in tables and figures
    ("reference", "discrete_marching_cubes", "Reference"),
    ("reference-marching-cubes", "marching_cubes", "Marching cubes"),
    ("reference-surface-nets", "surface_nets", "Surface nets"),
)
REFERENCE = _VARIANTS[0][0]
"""Tool name of the yardstick in the scores table; the other variants differ in meshing."""

REFERENCE_VARIANTS: dict[str, str] = {name: meshing for name, meshing, _ in _VARIANTS}
"""Tool names of the reference in the scores table, and the meshing each one uses."""

REFERENCE_LABELS: dict[str, str] = {name: label for name, _, label in _VARIANTS}
"""Display label of each reference variant."""


def spacing_label(spacing) -> str:
    """(0.5, 0.5, 2.0) -> "0.5x0.5x2": the voxel size as it appears in paths and tables."""
    return "x".join(f"{float(s):g}" for s in spacing)


NATIVE = "native"
"""Spacing label of the native-grid arm: every pair scored on the grid its masks were drawn on
(a scan's own pixel and slice spacing), as a researcher scoring the readers' masks does."""


def grid_labels(config) -> list[str]:
    """The spacing labels a validated configuration scores, in its order: every voxel size,
    then the native grid when `dataset.native_grid` asks for it."""
    labels = [spacing_label(size) for size in config.get("voxel_sizes", [])]
    return labels + [NATIVE] if config.get("dataset", {}).get("native_grid") else labels


GRID_NAMES: dict[str, str] = {"scan": "scan-sized", "union_bbox": "cropped", "fixed": "fixed-size"}
"""Reader's name of each field-of-view policy (field_of_view.policy, timing records' `grid`)."""


def shape_label(shape) -> str:
    """(301, 301, 281) -> "301x301x281": a grid's voxels per axis, array axis order."""
    return "x".join(str(int(n)) for n in shape)


def parse_spacing_label(label: str) -> tuple[float, ...]:
    """Inverse of `spacing_label` (the native grid has no one voxel size: ValueError)."""
    if label == NATIVE:
        raise ValueError("the native grid has no one voxel size: each pair has its own")
    return tuple(float(s) for s in label.split("x"))


def spacing_title(label: str) -> str:
    """A voxel-size label as every table, figure and finding prints it:
    "0.5x0.5x2" -> "(0.5, 0.5, 2) mm", "native" -> "native grid"."""
    if label == NATIVE:
        return "native grid"
    return "(" + ", ".join(f"{v:g}" for v in parse_spacing_label(label)) + ") mm"


def is_anisotropic(label: str) -> bool:
    """Whether a voxel-size label has sides of different lengths ("1x1x2"); the native grid,
    one voxel size per pair, is neither isotropic nor one anisotropic size: False."""
    return label != NATIVE and len(set(parse_spacing_label(label))) > 1


def status_of(value: float) -> str:
    """Status of a number a tool returned: ok, nan or inf."""
    if math.isnan(value):
        return "nan"
    return "inf" if math.isinf(value) else "ok"
