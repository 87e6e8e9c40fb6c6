"""The paper's figures: Fig. 4 (Δ box plots), A3 (mask volumes), A4 (significance), A5 (time).

One tool order (`statistics.ordered_tools`) and one colour per tool (`tool_colour`) in every
figure; where tools of more than one group are shown (the paper's and those since), a dashed
line parts the groups. Sizes are for a two-column journal page (7.2 in wide), fonts 6-8 pt,
PNG at 300 dpi plus a vector PDF.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window (and work without a display)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import BoundaryNorm, ListedColormap  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from adapters import REGISTRY  # noqa: E402
from study.analysis.advice import TOLERANCE, tolerance_text  # noqa: E402
from study.analysis.delta import deltas, unavailable_tools  # noqa: E402
from study.analysis.labels import (
    TOOL_GROUPS,
    MaskPairWords,
    display_scale,
    display_unit,
    group_spans,
    mask_pair_words,
    ordered_spacings,
    ordered_tools,
    shows_groups,
    tool_label,
    tool_versions,
)
from study.analysis.read import read_manifest, read_scores, read_timing, read_wilcoxon  # noqa: E402
from study.analysis.settings import AnalysisSettings  # noqa: E402
from study.analysis.significance import ALPHA
from study.analysis.timing import time_per_case, timed_grids
from study.oars import (  # noqa: E402
    MIDSIZE_MAX_MM3,
    NODULE_CATEGORIES,
    NODULE_DIAMETERS_MM,
    SMALL_MAX_MM3,
    ordered_categories,
)
from study.records import (  # noqa: E402
    NATIVE,
    REFERENCE_VARIANTS,
    parse_spacing_label,
    spacing_title,
)
from vocabulary import TESTED_KEYS

PAGE_WIDTH_IN = 7.2
"""Two-column width of a typical journal page, inches."""

DPI = 300

_REFERENCE_COLOURS = dict(zip(REFERENCE_VARIANTS, ("#222222", "#777777", "#AAAAAA"), strict=True))
"""Greys for the reference variants, darkest for the reference itself (the first)."""

CATEGORY_COLOURS = {
    "small": "#4C72B0",
    "midsize": "#55A868",
    "large": "#C44E52",
    "tubular": "#8172B2",
    "<6 mm": "#4C72B0",
    "6–10 mm": "#55A868",
    "≥10 mm": "#C44E52",
}
"""A colour per size category (`study.oars.KNOWN_CATEGORIES`): the organs' four and the
nodules' three, smallest alike; a user's own category is grey."""
CATEGORY_THRESHOLDS_MM3 = (SMALL_MAX_MM3, MIDSIZE_MAX_MM3)
"""Category limits on the median OAR volume: small <= 1e3 < midsize <= 1e4 < large."""

_STYLE = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "legend.fontsize": 6,
    "axes.linewidth": 0.6,
    "lines.linewidth": 0.8,
    "pdf.fonttype": 42,
}


QUALITATIVE = (
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
)
"""Paul Tol's muted qualitative scheme: nine colours told apart with every common colour-vision
deficiency (and in grey scale by their lightness only in part, hence the hatches)."""

HATCHES = ("", "////", "....", "xxxx", "\\\\\\\\", "++++")
"""Fill patterns that part tools of one colour: the first `len(QUALITATIVE)` tools are plain,
the next as many hatched, and so on, so any number of tools has a look of its own."""

MARKERS = ("o", "s", "^", "D", "v", "P")
"""Point markers, by the same rule as `HATCHES` (a tool's points in Fig. A5)."""


def tool_index(tool: str) -> int:
    """A tool's place in the registry's tool order (`statistics.ordered_tools`), which decides
    its look; a tool outside the registry is placed after every registered one by a stable hash
    of its key, so it never looks like a registered tool."""
    registered = ordered_tools(REGISTRY)
    if tool in registered:
        return registered.index(tool)
    return len(registered) + zlib.crc32(tool.encode()) % (len(QUALITATIVE) * 4)


def tool_colour(tool: str):
    """The one colour of a tool in every figure; depends on the tool key only."""
    if tool in _REFERENCE_COLOURS:
        return _REFERENCE_COLOURS[tool]
    return QUALITATIVE[tool_index(tool) % len(QUALITATIVE)]


def tool_hatch(tool: str) -> str:
    """The one fill pattern of a tool's boxes (`HATCHES`); plain for the reference."""
    if tool in _REFERENCE_COLOURS:
        return ""
    return HATCHES[tool_index(tool) // len(QUALITATIVE) % len(HATCHES)]


def tool_marker(tool: str) -> str:
    """The one point marker of a tool (`MARKERS`)."""
    if tool in _REFERENCE_COLOURS:
        return "o"
    return MARKERS[tool_index(tool) // len(QUALITATIVE) % len(MARKERS)]


def _fill(patch, tool: str) -> None:
    """Colour and hatch a tool's box (or legend patch)."""
    patch.set_facecolor(tool_colour(tool))
    patch.set_hatch(tool_hatch(tool))
    patch.set_edgecolor("black")


def save(figure: plt.Figure, png_path: str | Path, pdf_path: str | Path | None = None) -> None:
    """Write the figure as a 300 dpi PNG (and a PDF) and close it."""
    for path in (png_path, pdf_path):
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png_path, dpi=DPI, bbox_inches="tight")
    if pdf_path is not None:
        figure.savefig(pdf_path, bbox_inches="tight")
    plt.close(figure)


def _legend_handles(tools: Sequence[str]) -> list[Patch]:
    return [
        Patch(
            facecolor=tool_colour(t),
            hatch=tool_hatch(t),
            edgecolor="black",
            linewidth=0.4,
            label=tool_label(t),
        )
        for t in tools
    ]


def _grouped_handles(handles: Sequence[Patch], tools: Sequence[str]) -> list[Patch]:
    """The tools' legend entries (one column) with a heading, an entry without a patch, before
    each group's first tool when the tools are of more than one group."""
    if not shows_groups(tools):
        return list(handles)
    out: list[Patch] = []
    for group, first, stop in group_spans(tools):
        out.append(Patch(visible=False, label=TOOL_GROUPS[group]))
        out += handles[first:stop]
    return out


def _bold_headings(legend) -> None:
    """Group headings of a legend (`_grouped_handles`) in bold."""
    for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
        if not handle.get_visible():
            text.set_fontweight("bold")


GROUP_DIVIDER = {"color": "#555555", "linewidth": 0.6, "linestyle": "--"}
"""Style of the line between two groups of tools (`statistics.TOOL_GROUPS`)."""


def _group_dividers(axis, tools: Sequence[str], positions: Sequence[float] | None = None) -> None:
    """A vertical line before the first tool of every group but the first; `positions`: the
    tools' x (default 0, 1, 2, ...). Nothing when the tools are of one group."""
    if not shows_groups(tools):
        return
    x = list(range(len(tools))) if positions is None else list(positions)
    for _, first, _ in group_spans(tools)[1:]:
        axis.axvline((x[first - 1] + x[first]) / 2, zorder=0.5, **GROUP_DIVIDER)


def _group_labels(axis, tools: Sequence[str]) -> None:
    """Each group's title at the top of the panel over its tools (x = 0, 1, 2, ...): the first
    flush left, the last flush right, any other centred, so a narrow group's title runs over
    its wider neighbour rather than out of the panel."""
    if not shows_groups(tools):
        return
    spans = group_spans(tools)
    transform = axis.get_xaxis_transform()
    for k, (group, first, stop) in enumerate(spans):
        x, ha = (first + stop - 1) / 2, "center"
        if k == 0:
            x, ha = first - 0.45, "left"
        elif k == len(spans) - 1:
            x, ha = stop - 0.55, "right"
        axis.text(
            x,
            0.97,
            TOOL_GROUPS[group],
            transform=transform,
            ha=ha,
            va="top",
            fontsize=5,
            style="italic",
            color="#333333",
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 0.5},
        )


def _footer(figure: plt.Figure, text: str) -> None:
    """A small-print line under the figure (versions, configuration)."""
    figure.text(0.01, -0.005, text, fontsize=5, ha="left", va="top", wrap=True)


# --------------------------------------------------------------------------------------------
# Fig. 4: Δ box plots
# --------------------------------------------------------------------------------------------


def _plain_number(value: float, _position=None) -> str:
    """Tick label without exponents: 0, 1, 10, 100, −10 (symlog ticks are powers of ten)."""
    return f"{value:g}".replace("-", "−")


def _decade_above(value: float) -> float:
    """Axis limit at the next power of ten (at least 1), so a labelled tick bounds the data."""
    return 1.3 * 10.0 ** max(0.0, np.ceil(np.log10(max(value, 1.0)) - 1e-9))


def _box_panel(axis, delta: pd.DataFrame, tools: Sequence[str]) -> None:
    """Box plots of finite Δ for each tool, with the count of non-finite Δ above each box."""
    finite = delta.loc[delta["kind"] == "finite"]
    positions = np.arange(len(tools))
    data = [finite.loc[finite["tool"] == t, "scaled"].to_numpy() for t in tools]
    drawn = [i for i, values in enumerate(data) if len(values)]
    if drawn:
        boxes = axis.boxplot(
            [data[i] for i in drawn],
            positions=positions[drawn],
            widths=0.7,
            patch_artist=True,
            showfliers=True,
            flierprops={"markersize": 1.5, "markeredgewidth": 0.3},
            medianprops={"color": "black", "linewidth": 0.8},
            whiskerprops={"linewidth": 0.5},
            capprops={"linewidth": 0.5},
        )
        for patch, i in zip(boxes["boxes"], drawn, strict=True):
            _fill(patch, tools[i])
            patch.set_linewidth(0.5)
    axis.set_yscale("symlog", linthresh=1.0, linscale=1.0)
    low, high = axis.get_ylim()
    # Always show the whole linear band [-1, 1] so panels read alike.
    axis.set_ylim(-_decade_above(-low), _decade_above(high))
    axis.yaxis.set_major_formatter(FuncFormatter(_plain_number))
    axis.axhline(0.0, color="black", linewidth=0.4, zorder=0)
    for y in (-1.0, 1.0):
        axis.axhline(y, color="grey", linewidth=0.3, linestyle=":", zorder=0)
    _annotate_excluded(axis, delta, tools)
    _annotate_undefined(axis, delta)
    axis.set_xlim(-0.6, len(tools) - 0.4)
    axis.set_xticks(positions)
    axis.grid(axis="y", linewidth=0.2, alpha=0.5)


EXCLUDED_GID = "excluded"
"""Group id of Fig. 4's counts of Δ that could not be drawn (how a test finds them)."""

EXCLUDED_FONTSIZE = 4.5
"""Size of those counts up to `SIZED_FOR_TOOLS` tools: each number is written upward and each
sign upright, so a tool's counts are one line of this size wide (about 5 pt), within its slot
(about 6 pt with 17 tools at two-column width)."""

SIZED_FOR_TOOLS = 17
"""Fig. 4's names and counts per tool are sized for this many tools (the paper's and those
since); with more, each slot is narrower and they shrink with it (`_crowding`)."""


def _crowding(tools: int) -> float:
    """Factor on Fig. 4's text sizes per tool: 1 up to `SIZED_FOR_TOOLS` tools, less beyond,
    so a tool's name, count or mark stays inside its slot however many tools are shown."""
    return min(1.0, SIZED_FOR_TOOLS / max(tools, 1))


def excluded_counts(rows: pd.DataFrame) -> list[tuple[int, str]]:
    """How many of one tool's Δ in a panel could not be drawn, with their sign: (5, "∞") not
    finite, (90, "E") the tool raised an error or the reference had no score."""
    nonfinite = int((rows["kind"] == "nonfinite").sum())
    failed = int(rows["kind"].isin(["failed", "no_reference"]).sum())
    return [(count, sign) for count, sign in ((nonfinite, "∞"), (failed, "E")) if count]


def _annotate_excluded(axis, delta: pd.DataFrame, tools: Sequence[str]) -> None:
    """Above each tool, its counts of the Δ that could not be plotted (`excluded_counts`),
    stacked upward from the frame, each number turned upward and followed by its sign upright
    ("5∞" read bottom to top; a turned ∞ reads as 8). Side by side, level counts of 17 tools
    ran into each other ("5E5∞5E"), and two-line ones into the column title; above the frame,
    a count never hides a box."""
    size = EXCLUDED_FONTSIZE * _crowding(len(tools))
    for i, tool in enumerate(tools):
        anchor, xy, gap = axis.get_xaxis_transform(), (i, 1.0), 1.5
        for count, sign in excluded_counts(delta.loc[delta["tool"] == tool]):
            for text, rotation in ((f"{count}", 90), (sign, 0)):
                anchor = _stack_text(axis, text, rotation, anchor, xy, gap, size)
                xy, gap = (0.5, 1.0), 0.3  # on top of the text before, centred on it
            gap = 2.0  # between a tool's two counts


UNDEFINED_GID = "undefined"
"""gid of a panel's note of the pairs the reference leaves undefined."""


def _annotate_undefined(axis, delta: pd.DataFrame) -> None:
    """Once per panel, how many pairs the reference leaves undefined (an empty mask: its value
    inf or NaN): no tool's Δ exists there, and no tool is counted as failing on them."""
    undefined = delta.loc[delta["kind"] == "undefined", ["dataset", "case", "oar"]]
    pairs = len(undefined.drop_duplicates())
    if pairs:
        axis.text(
            0.01,
            0.02,
            f"reference undefined on {pairs} pair{'s' * (pairs > 1)}",
            transform=axis.transAxes,
            fontsize=EXCLUDED_FONTSIZE,
            ha="left",
            va="bottom",
            gid=UNDEFINED_GID,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.8},
        )


def _stack_text(axis, text: str, rotation: float, anchor, xy, gap: float, size: float):
    """One piece of a count (`_annotate_excluded`), `gap` points above `xy` in `anchor`'s
    coordinates (the panel's, or the piece below: an artist)."""
    return axis.annotate(
        text,
        xy=xy,
        xycoords=anchor,
        xytext=(0, gap),
        textcoords="offset points",
        rotation=rotation,
        ha="center",
        va="bottom",
        fontsize=size,
        color="#B00020",
        annotation_clip=False,
        gid=EXCLUDED_GID,
    )


def _excluded_height_pt(axes, renderer) -> float:
    """How far in points the tallest count reaches above the panels `axes` (0: no count)."""
    reach = [
        text.get_window_extent(renderer).y1 - axis.get_window_extent(renderer).y1
        for axis in axes
        for text in axis.texts
        if text.get_gid() == EXCLUDED_GID
    ]
    return max(reach, default=0.0) * 72.0 / axes[0].figure.dpi


ABSENT = {
    "not installed": "#B00020",
    "not offered": "grey",
    "not in 2D": "grey",
    "all failed": "#B00020",
}
"""What stands in a panel for a tool without a box, and its colour: not installed here, the
metric not offered by the tool, not offered on 2D masks (`Adapter.not_offered_2d`: every call
was asked and refused), or every pair failed (its count of E above)."""


def _is_2d(spacings: Sequence[str]) -> bool:
    """Whether a study's grids are 2D (its voxel sizes have two entries)."""
    return any(s != NATIVE and len(parse_spacing_label(s)) == 2 for s in spacings)


def _absent_word(tool: str, metric: str, rows: pd.DataFrame, unavailable, two_d: bool) -> str:
    if tool in unavailable:
        return "not installed"
    if not len(rows):
        return "not offered"
    declined = two_d and tool in REGISTRY and metric in REGISTRY[tool].not_offered_2d
    return "not in 2D" if declined else "all failed"


def _mark_absent(
    axis,
    delta: pd.DataFrame,
    tools: Sequence[str],
    unavailable: Sequence[str],
    metric: str,
    two_d: bool,
) -> None:
    """Write `ABSENT`'s words, vertically, where a tool has no box in this panel."""
    transform = axis.get_xaxis_transform()
    for i, tool in enumerate(tools):
        rows = delta.loc[delta["tool"] == tool]
        if (rows["kind"] == "finite").any() or (rows["kind"] == "nonfinite").any():
            continue
        word = _absent_word(tool, metric, rows, unavailable, two_d)
        axis.text(
            i,
            0.5,
            word,
            transform=transform,
            ha="center",
            va="center",
            fontsize=4.2 * _crowding(len(tools)),
            rotation=90,
            color=ABSENT[word],
        )


def _column_titles(axes, titles: Sequence[str]) -> None:
    """The voxel sizes over the top row, all at one height above the tallest count of Δ not
    drawn (`_annotate_excluded`), so no count runs into a title."""
    renderer = axes[0].figure.canvas.get_renderer()
    pad = 3.0 + _excluded_height_pt(axes, renderer)
    for axis, title in zip(axes, titles, strict=True):
        axis.set_title(title, pad=pad)


def _tolerance_band(axis, metric: str) -> None:
    """The recommendations' tolerance (`advice.TOLERANCE`) as a band around Δ = 0."""
    tolerance = TOLERANCE[display_unit(metric)]
    axis.axhspan(-tolerance, tolerance, color=TOLERANCE_COLOUR, linewidth=0, zorder=0)


TOLERANCE_COLOUR = "#d9efd9"
"""Fill of Fig. 4's tolerance band."""


def figure_4(
    delta: pd.DataFrame,
    png_path,
    pdf_path=None,
    *,
    spacings: Sequence[str] | None = None,
    metrics: Sequence[str] = TESTED_KEYS,
    footer: str = "",
    unavailable: Sequence[str] = (),
) -> None:
    """Box plots of Δ per metric (rows), voxel size (columns) and tool (colour).

    Linear inside [-1, 1] and logarithmic outside (symlog, linthresh = 1), one y range per
    metric (row) across voxel sizes; Δ of NSD and BIoU in percentage points; the band is the
    recommendations' tolerance. Above each box: how many Δ were non-finite (∞) or failed (E).
    A tool without a box keeps its place, marked "not installed" (`unavailable`), "not
    offered" (no score of the metric), "not in 2D" or "all failed" (`ABSENT`).
    Tools of more than one group (the paper's, since the paper: `statistics.TOOL_GROUPS`) are
    parted by a dashed line in every panel, with the groups' titles in the top row.
    """
    delta = delta.assign(scaled=delta["delta"] * delta["metric"].map(display_scale))
    metrics = [m for m in metrics if m in set(delta["metric"])]
    spacings = ordered_spacings(delta["spacing"], spacings)
    if not metrics or not spacings:
        raise ValueError("figure_4: no Δ to plot (no tested metric or voxel size in the table)")
    all_tools = ordered_tools([*delta["tool"], *unavailable])
    two_d = _is_2d(spacings)
    with plt.rc_context(_STYLE):
        figure, axes = plt.subplots(
            len(metrics),
            len(spacings),
            squeeze=False,
            figsize=(PAGE_WIDTH_IN, 1.25 * len(metrics) + 0.9),
        )
        for row, metric in enumerate(metrics):
            in_metric = delta.loc[delta["metric"] == metric]
            for col, spacing in enumerate(spacings):
                axis = axes[row, col]
                # Same tools at the same x in every panel; a tool without a box is named why.
                panel = in_metric.loc[in_metric["spacing"] == spacing]
                _box_panel(axis, panel, all_tools)
                _mark_absent(axis, panel, all_tools, unavailable, metric, two_d)
                _tolerance_band(axis, metric)
                _group_dividers(axis, all_tools)
                if row == 0:
                    _group_labels(axis, all_tools)
                bottom = row == len(metrics) - 1
                # Upright names, one line high each: at 60 degrees 17 names ran into each other.
                axis.set_xticklabels(
                    [tool_label(t) for t in all_tools] if bottom else [],
                    rotation=90,
                    fontsize=5 * _crowding(len(all_tools)),
                )
                if col == 0:
                    axis.set_ylabel(f"Δ{metric} ({display_unit(metric)})")
            limits = [axis.get_ylim() for axis in axes[row]]
            for axis in axes[row]:  # one y range per metric, across voxel sizes
                axis.set_ylim(min(lo for lo, _ in limits), max(hi for _, hi in limits))
        _column_titles(axes[0], [spacing_title(s) for s in spacings])
        units = dict.fromkeys(display_unit(m) for m in metrics)
        band = Patch(
            facecolor=TOLERANCE_COLOUR,
            label=f"tolerance of the verdicts ({'; '.join(map(tolerance_text, units))})",
        )
        figure.legend(
            handles=[*_legend_handles(all_tools), band],
            loc="lower center",
            bbox_to_anchor=(0.5, 1.0),
            ncol=min(6, len(all_tools)),
            frameon=False,
        )
        figure.tight_layout(h_pad=0.6, w_pad=0.4)
        if footer:
            _footer(figure, footer)
        save(figure, png_path, pdf_path)


# --------------------------------------------------------------------------------------------
# Fig. A3: the volumes of the masks, per OAR or mask pair, or per category
# --------------------------------------------------------------------------------------------


MAX_LABELLED_PAIRS = 60
"""Most OARs or mask pairs Fig. A3 names one by one: 60 labels at 6 pt fill the 7.2 in page
width; the 1,578 of the LIDC-IDRI run printed as a black band. More are shown per category."""


def figure_a3(
    manifest: pd.DataFrame, png_path, pdf_path=None, *, source: str = "", footer: str = ""
) -> None:
    """The volume of every mask (mm³, log scale) with the category thresholds 1e3 and 1e4
    mm³; empty masks are left out. Up to `MAX_LABELLED_PAIRS` OARs or mask pairs, a box plot
    of each, sorted by median and coloured by category; more, each category's masks as points
    with a box plot over them. `source` (`dataset.source`) words the axis
    (`mask_pair_words`)."""
    for column in ("oar", "category", "volume_mm3"):
        if column not in manifest.columns:
            raise ValueError(f"manifest lacks column {column!r}")
    drawn = manifest.loc[manifest["volume_mm3"] > 0]
    words = mask_pair_words(source)
    with plt.rc_context(_STYLE):
        figure, axis = plt.subplots(figsize=(PAGE_WIDTH_IN, 2.6))
        if drawn["oar"].nunique() <= MAX_LABELLED_PAIRS:
            _volumes_per_pair(axis, drawn)
        else:
            _volumes_per_category(axis, drawn, words)
        axis.set_yscale("log")
        _volume_thresholds(axis, drawn["category"].unique())
        axis.set_ylabel(words.volume)
        axis.grid(axis="y", linewidth=0.2, alpha=0.5)
        figure.tight_layout()
        if footer:
            _footer(figure, footer)
        save(figure, png_path, pdf_path)


def _volumes_per_pair(axis, drawn: pd.DataFrame) -> None:
    """A box per OAR or mask pair, named below it, sorted by median, in its category's colour
    (the paper's Fig. A3)."""
    medians = drawn.groupby("oar")["volume_mm3"].median().sort_values()
    category_of = drawn.groupby("oar")["category"].first()
    data = [drawn.loc[drawn["oar"] == oar, "volume_mm3"].to_numpy() for oar in medians.index]
    boxes = axis.boxplot(
        data,
        patch_artist=True,
        widths=0.7,
        flierprops={"markersize": 1.5},
        medianprops={"color": "black", "linewidth": 0.8},
    )
    for patch, oar in zip(boxes["boxes"], medians.index, strict=True):
        patch.set_facecolor(CATEGORY_COLOURS.get(category_of[oar], "lightgrey"))
        patch.set_linewidth(0.5)
    axis.set_xticks(np.arange(1, len(medians) + 1))
    axis.set_xticklabels(medians.index, rotation=60, ha="right", rotation_mode="anchor")
    present = ordered_categories(set(category_of))
    axis.legend(
        handles=[Patch(facecolor=CATEGORY_COLOURS.get(c, "lightgrey"), label=c) for c in present],
        loc="upper left",
        frameon=False,
        ncol=max(len(present), 1),
    )


def _volumes_per_category(axis, drawn: pd.DataFrame, words: MaskPairWords) -> None:
    """Each category's masks as points spread sideways (a fixed seed, so a figure is made the
    same twice), with a box plot over them and the count of pairs under the category: one
    label per category, however many pairs. The points are rasterized in the PDF (thousands
    of vector dots)."""
    categories = ordered_categories(drawn["category"])
    jitter = np.random.default_rng(0)
    for x, category in enumerate(categories):
        volumes = drawn.loc[drawn["category"] == category, "volume_mm3"].to_numpy()
        axis.scatter(
            x + jitter.uniform(-0.28, 0.28, len(volumes)),
            volumes,
            s=1.2,
            linewidths=0,
            alpha=_point_alpha(len(volumes)),
            color=CATEGORY_COLOURS.get(category, "grey"),
            rasterized=True,
            zorder=1,
        )
        axis.boxplot(
            [volumes],
            positions=[x],
            widths=0.7,
            showfliers=False,
            medianprops={"color": "black", "linewidth": 0.9},
            boxprops={"linewidth": 0.6},
            whiskerprops={"linewidth": 0.6},
            capprops={"linewidth": 0.6},
            zorder=2,
        )
    pairs = drawn.groupby("category")["oar"].nunique()
    axis.set_xticks(np.arange(len(categories)))
    axis.set_xticklabels([f"{c}\n{pairs[c]:,} {words.plural}" for c in categories])
    axis.set_xlim(-0.6, len(categories) - 0.4)


def _point_alpha(points: int) -> float:
    """Opacity of one of `points` dots in a column: a few hundred opaque enough to see, ten
    thousand faint enough that their density still shows (30 / sqrt(n), within 0.25 to 0.8)."""
    return float(np.clip(30.0 / np.sqrt(max(points, 1)), 0.25, 0.8))


def _volume_thresholds(axis, categories) -> None:
    """The category thresholds as dashed lines, labelled at the right edge: the organs'
    volume limits, or for nodules the volumes of the 6 and 10 mm spheres that bound their
    diameter classes."""
    if set(categories) & set(NODULE_CATEGORIES):
        limits = [
            (math.pi * d**3 / 6, f"{d:g} mm sphere, {math.pi * d**3 / 6:,.0f} mm³")
            for d in NODULE_DIAMETERS_MM
        ]
    else:
        limits = [(t, f"{t:,.0f} mm³") for t in CATEGORY_THRESHOLDS_MM3]
    for threshold, label in limits:
        axis.axhline(threshold, color="black", linestyle="--", linewidth=0.6)
        axis.text(
            0.998,
            threshold * 1.08,
            label,
            transform=axis.get_yaxis_transform(),
            fontsize=5,
            va="bottom",
            ha="right",
        )


# --------------------------------------------------------------------------------------------
# Fig. A4: significance matrices
# --------------------------------------------------------------------------------------------

SIGNIFICANCE_CLASSES: tuple[str, ...] = (
    "no common finite scores",
    "identical",
    "not significant",
    "p < 0.05",
    "p < 0.01",
    "p < 0.001",
)
_SIGNIFICANCE_COLOURS = ("#FFFFFF", "#6BAED6", "#C6DBEF", "#FDD49E", "#FC8D59", "#B30000")
"""Blues: no difference detected; oranges to red: significant after correction."""


def significance_class(row) -> int:
    """Index into `SIGNIFICANCE_CLASSES` of one Wilcoxon row (corrected p)."""
    if row["status"] == "untestable":
        return 0
    if row["status"] == "identical":
        return 1
    p = row["p_corrected"]
    return 5 if p < 0.001 else 4 if p < 0.01 else 3 if p < ALPHA else 2


def _significance_matrix(rows: pd.DataFrame, tools: Sequence[str]) -> np.ndarray:
    """Lower-triangular matrix of significance classes; NaN on and above the diagonal."""
    index = {t: i for i, t in enumerate(tools)}
    matrix = np.full((len(tools), len(tools)), np.nan)
    for row in rows.to_dict("records"):
        i, j = sorted((index[row["tool_a"]], index[row["tool_b"]]), reverse=True)
        matrix[i, j] = significance_class(row)
    return matrix


def figure_a4(
    wilcoxon: pd.DataFrame,
    png_path,
    pdf_path=None,
    *,
    spacings: Sequence[str] | None = None,
    footer: str = "",
) -> None:
    """Significance of every pair of implementations per metric (rows) and voxel size
    (columns); colours bin the Bonferroni-corrected p (the factor is in the title)."""
    if wilcoxon.empty:
        raise ValueError("figure_a4: the Wilcoxon table is empty")
    factor = int(wilcoxon["factor"].iloc[0])
    metrics = [m for m in TESTED_KEYS if m in set(wilcoxon["metric"])]
    spacings = ordered_spacings(wilcoxon["spacing"], spacings)
    tools = ordered_tools([*wilcoxon["tool_a"], *wilcoxon["tool_b"]])
    labels = [tool_label(t) for t in tools]
    cmap = ListedColormap(_SIGNIFICANCE_COLOURS)
    norm = BoundaryNorm(np.arange(len(SIGNIFICANCE_CLASSES) + 1) - 0.5, cmap.N)
    with plt.rc_context(_STYLE):
        # Voxel sizes as rows, metrics as columns: fits a page at two-column width.
        figure, axes = plt.subplots(
            len(spacings),
            len(metrics),
            squeeze=False,
            figsize=(PAGE_WIDTH_IN, 1.25 * len(spacings) + 1.1),
        )
        for r, spacing in enumerate(spacings):
            for c, metric in enumerate(metrics):
                axis = axes[r, c]
                rows = wilcoxon.loc[
                    (wilcoxon["metric"] == metric) & (wilcoxon["spacing"] == spacing)
                ]
                # Strictly lower triangle: the first row and last column would be empty.
                matrix = _significance_matrix(rows, tools)[1:, :-1]
                axis.imshow(matrix, cmap=cmap, norm=norm)
                # Untestable cells get a cross so they differ from the empty upper triangle.
                ys, xs = np.nonzero(matrix == 0)
                axis.scatter(xs, ys, marker="x", s=3, linewidths=0.4, color="#888888")
                _matrix_axes(axis, labels[:-1], labels[1:], r == len(spacings) - 1, c == 0)
                _matrix_dividers(axis, tools)
                axis.set_title(f"{metric}, {spacing_title(spacing)}", pad=2, fontsize=5.5)
        handles = [
            Patch(facecolor=colour, edgecolor="grey", linewidth=0.3, label=name)
            for name, colour in zip(SIGNIFICANCE_CLASSES, _SIGNIFICANCE_COLOURS, strict=True)
        ]
        handles[0] = Line2D(
            [],
            [],
            marker="x",
            linestyle="",
            color="#888888",
            markersize=3,
            label=SIGNIFICANCE_CLASSES[0],
        )
        figure.legend(
            handles=handles,
            loc="lower center",
            bbox_to_anchor=(0.5, 1.0),
            ncol=len(handles),
            frameon=False,
            title=f"Paired Wilcoxon signed-rank tests; p × corr with corr = "
            f"{factor:,} (Bonferroni)",
        )
        figure.tight_layout(h_pad=0.3, w_pad=0.1)
        if footer:
            _footer(figure, footer)
        save(figure, png_path, pdf_path)


def _matrix_dividers(axis, tools: Sequence[str]) -> None:
    """Lines between groups of tools in a significance matrix: its rows are tools[1:] and its
    columns tools[:-1], so a group starting at tool b starts at row b − 1 and column b."""
    if not shows_groups(tools):
        return
    for _, first, _ in group_spans(tools)[1:]:
        axis.axhline(first - 1.5, **GROUP_DIVIDER)
        axis.axvline(first - 0.5, **GROUP_DIVIDER)


def _matrix_axes(
    axis, x_labels: Sequence[str], y_labels: Sequence[str], show_x: bool, show_y: bool
) -> None:
    x_ticks, y_ticks = np.arange(len(x_labels)), np.arange(len(y_labels))
    axis.set_xticks(x_ticks)
    axis.set_yticks(y_ticks)
    axis.set_xticklabels(x_labels if show_x else [], rotation=90, fontsize=4.5)
    axis.set_yticklabels(y_labels if show_y else [], fontsize=4.5)
    axis.tick_params(which="both", length=0, pad=1)
    axis.set_xticks(x_ticks - 0.5, minor=True)
    axis.set_yticks(y_ticks - 0.5, minor=True)
    axis.grid(which="minor", color="white", linewidth=0.3)
    for side in axis.spines.values():
        side.set_visible(False)


# --------------------------------------------------------------------------------------------
# Fig. A5: HD execution time
# --------------------------------------------------------------------------------------------


def figure_a5(timing: pd.DataFrame, png_path, pdf_path=None, *, footer: str = "") -> None:
    """Box plots of HD time per case (s, log scale) by OAR category (groups) and tool
    (colour); the number of failed timing runs per tool is in the legend. Tools of more than
    one group are parted by a dashed line in each category and headed by group in the legend."""
    per_case = time_per_case(timing)
    if per_case.empty:
        raise ValueError("figure_a5: no successful timing rows")
    tools = ordered_tools(timing["tool"])
    failed = timing.loc[timing["status"] != "ok"].groupby("tool").size()
    categories = ordered_categories(per_case["category"])
    width = 0.8 / len(tools)
    offsets = [-0.4 + (k + 0.5) * width for k in range(len(tools))]  # within a category
    handles = _legend_handles(tools)
    for handle, tool in zip(handles, tools, strict=True):
        if failed.get(tool, 0):
            handle.set_label(f"{handle.get_label()} ({failed[tool]} failed runs)")
    entries = _grouped_handles(handles, tools)
    # Tall enough for the legend beside the axis: about 0.12 in per entry at 6 pt.
    height = max(2.6, 0.12 * len(entries) + 0.5)
    with plt.rc_context(_STYLE):
        figure, axis = plt.subplots(figsize=(PAGE_WIDTH_IN, height))
        for k, tool in enumerate(tools):
            for g, category in enumerate(categories):
                values = per_case.loc[
                    (per_case["tool"] == tool) & (per_case["category"] == category), "seconds"
                ]
                if values.empty:
                    continue
                box = axis.boxplot(
                    [values.to_numpy()],
                    positions=[g + offsets[k]],
                    widths=width * 0.85,
                    patch_artist=True,
                    flierprops={"markersize": 1.2},
                    medianprops={"color": "black", "linewidth": 0.7},
                )
                _fill(box["boxes"][0], tool)
                box["boxes"][0].set_linewidth(0.4)
                # The cases themselves, so a category with one or two cases is still visible.
                axis.scatter(
                    np.full(len(values), box["medians"][0].get_xdata().mean()),
                    values,
                    s=3,
                    marker=tool_marker(tool),
                    color=tool_colour(tool),
                    edgecolors="black",
                    linewidths=0.2,
                    zorder=3,
                )
        for g in range(len(categories)):
            _group_dividers(axis, tools, [g + offset for offset in offsets])
        axis.set_yscale("log")
        axis.set_xticks(np.arange(len(categories)))
        axis.set_xticklabels(categories)
        axis.set_xlim(-0.5, len(categories) - 0.5)
        axis.set_ylabel("HD time per case (s)")
        axis.grid(axis="y", which="both", linewidth=0.2, alpha=0.5)
        legend = axis.legend(
            handles=entries,
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            frameon=False,
        )
        _bold_headings(legend)
        figure.tight_layout()
        if footer:
            _footer(figure, footer)
        save(figure, png_path, pdf_path)


def versions_footer(frame: pd.DataFrame, prefix: str = "") -> str:
    """ "Versions: Google DeepMind 0.1; MONAI 1.6.1; ..." from a table with tool_version."""
    return (prefix + " " if prefix else "") + "Versions: " + tool_versions(frame) + "."


# --------------------------------------------------------------------------------------------
# Entry points of the workflow rules (paths in, files out)
# --------------------------------------------------------------------------------------------


def configuration_footer(settings: AnalysisSettings, dataset: str) -> str:
    """ "Dataset synthetic; HDp p = 95; NSD/BIoU tau = 2 mm." for figure small print."""
    return (
        f"Dataset {dataset}; HDp p = {settings.percentile}; NSD and BIoU tau = "
        f"{settings.tau_mm:g} mm."
    )


def make_figure_4(scores_path, png_path, pdf_path, settings: AnalysisSettings) -> None:
    """Fig. 4 from the scores file."""
    scores = read_scores(scores_path)
    delta = deltas(scores, settings.present_tools_and_checks(scores["tool"]) or None)
    footer = configuration_footer(settings, ", ".join(sorted(scores["dataset"].unique())))
    missing = [t for t in unavailable_tools(scores) if t in settings.tools]
    if missing:
        footer += " Not available here: " + ", ".join(tool_label(t) for t in missing) + "."
    figure_4(
        delta,
        png_path,
        pdf_path,
        spacings=settings.grid_labels,
        footer=versions_footer(delta, footer),
        unavailable=missing,
    )


def make_figure_a3(
    manifest_path, png_path, pdf_path, settings: AnalysisSettings | None = None
) -> None:
    """Fig. A3 from the dataset manifest, worded for the dataset's source (`settings.source`;
    without settings, neutrally, and the dataset named after the manifest's folder)."""
    manifest = read_manifest(manifest_path)
    settings = settings or AnalysisSettings()
    dataset = settings.dataset or Path(manifest_path).parent.name
    words = mask_pair_words(settings.source)
    pairs = manifest[["case", "oar"]].drop_duplicates().shape[0]
    figure_a3(
        manifest,
        png_path,
        pdf_path,
        source=settings.source,
        footer=f"Dataset {dataset}: {pairs:,} {words.plural if pairs != 1 else words.singular}; "
        f"volume of each {words.outliner}'s mask; empty masks left out.",
    )


def make_figure_a4(wilcoxon_csv, png_path, pdf_path, settings: AnalysisSettings) -> None:
    """Fig. A4 from the Wilcoxon table written by the table_wilcoxon rule."""
    wilcoxon = read_wilcoxon(wilcoxon_csv)
    figure_a4(
        wilcoxon,
        png_path,
        pdf_path,
        spacings=settings.grid_labels,
        footer="p-values of paired two-sided Wilcoxon signed-rank tests (scipy) on mask "
        "pairs where both implementations gave a finite score.",
    )


def make_figure_a5(timing_paths, png_path, pdf_path) -> None:
    """Fig. A5 from the timing records."""
    timing = read_timing(timing_paths)
    spacings = ", ".join(spacing_title(s) for s in sorted(timing["spacing"].unique()))
    figure_a5(
        timing,
        png_path,
        pdf_path,
        footer=versions_footer(
            timing,
            f"HD only, voxel size {spacings}, on "
            f"{timed_grids(timing)}; median over "
            f"{timing['repeat'].nunique()} repeat(s) per case.",
        ),
    )
