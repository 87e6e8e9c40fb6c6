"""Figures are written as PNG (300 dpi) and PDF, with one colour per tool everywhere."""

from __future__ import annotations

import matplotlib.image as mpimg
import numpy as np
import pytest
from analysis_fixtures import (
    CROWDED_FAILING,
    CROWDED_UNAVAILABLE,
    INF_REFERENCE_PAIRS,
    LATER_TOOL,
    LIDC_GRIDS,
    SPACINGS,
    TOOLS,
    make_crowded_scores,
    make_manifest,
    make_pair_manifest,
    make_scores,
    make_timing,
    register_later_tool,
    with_later_tool,
)

from adapters import STUDY_TOOLS
from study.analysis import figures
from study.analysis.delta import deltas
from study.analysis.labels import display_unit, ordered_tools
from study.analysis.significance import implementations, wilcoxon_table
from vocabulary import TESTED_KEYS


@pytest.fixture(scope="module")
def scores():
    return make_scores()


def assert_written(tmp_path, stem):
    png, pdf = tmp_path / f"{stem}.png", tmp_path / f"{stem}.pdf"
    assert pdf.read_bytes().startswith(b"%PDF")
    image = mpimg.imread(png)
    # At 300 dpi a two-column figure is about 2,100 px wide.
    assert 1800 < image.shape[1] < 2600
    return image


def test_figure_4(tmp_path, scores):
    figures.figure_4(
        deltas(scores),
        tmp_path / "f4.png",
        tmp_path / "f4.pdf",
        spacings=list(SPACINGS),
        footer="Dataset synthetic.",
    )
    assert_written(tmp_path, "f4")


def test_figure_4_uses_symlog_with_unit_linear_band(scores, monkeypatch):
    axes_seen = []
    original = figures._box_panel

    def spy(axis, delta, tools):
        original(axis, delta, tools)
        axes_seen.append(axis)

    monkeypatch.setattr(figures, "_box_panel", spy)
    monkeypatch.setattr(figures, "save", lambda *a, **k: None)
    figures.figure_4(deltas(scores), "unused.png")
    assert len(axes_seen) == 6 * 3
    scale = axes_seen[0].yaxis.get_transform()
    assert axes_seen[0].get_yscale() == "symlog" and scale.linthresh == 1.0
    low, high = axes_seen[0].get_ylim()
    assert low <= -1 and high >= 1


def test_figure_a3_a4_a5(tmp_path, scores):
    figures.figure_a3(make_manifest(), tmp_path / "a3.png", tmp_path / "a3.pdf")
    wilcoxon = wilcoxon_table(scores, implementations(TOOLS), list(SPACINGS), 378)
    figures.figure_a4(wilcoxon, tmp_path / "a4.png", tmp_path / "a4.pdf")
    figures.figure_a5(make_timing(), tmp_path / "a5.png", tmp_path / "a5.pdf")
    for stem in ("a3", "a4", "a5"):
        assert_written(tmp_path, stem)


def look(tool: str) -> tuple[str, str]:
    """What tells a tool apart in a figure: its colour and its fill pattern."""
    return str(figures.tool_colour(tool)), figures.tool_hatch(tool)


def test_one_look_per_tool_independent_of_the_other_tools():
    from adapters import REGISTRY

    keys = [*REGISTRY, "reference"]
    assert len({look(k) for k in keys}) == len(keys)
    # A tool outside the registry never takes a registered tool's look.
    assert look("new_tool") not in {look(k) for k in keys}


def test_significance_classes():
    row = {"status": "tested", "p_corrected": 0.004}
    assert figures.SIGNIFICANCE_CLASSES[figures.significance_class(row)] == "p < 0.01"
    assert figures.significance_class({"status": "untestable", "p_corrected": float("nan")}) == 0
    assert (
        figures.SIGNIFICANCE_CLASSES[
            figures.significance_class({"status": "tested", "p_corrected": 0.2})
        ]
        == "not significant"
    )


def test_empty_inputs_fail_clearly(tmp_path, scores):
    with pytest.raises(ValueError, match="no successful timing"):
        figures.figure_a5(make_timing().assign(status="error"), tmp_path / "x.png")
    with pytest.raises(ValueError, match="volume_mm3"):
        figures.figure_a3(make_manifest().drop(columns="volume_mm3"), tmp_path / "x.png")


# --------------------------------------------------------------------------------------------
# The tools since the paper: parted from the eleven by a line and titled
# --------------------------------------------------------------------------------------------


def drawn(monkeypatch, draw) -> list:
    """The axes of the figure `draw()` makes, kept open instead of saved."""
    figures_made = []
    monkeypatch.setattr(figures, "save", lambda figure, *a, **k: figures_made.append(figure))
    draw()
    (figure,) = figures_made
    return figure.axes


def dividers(axis) -> list[float]:
    """x of the dashed vertical lines of a panel (the group dividers)."""
    return [
        line.get_xdata()[0]
        for line in axis.get_lines()
        if line.get_linestyle() == "--" and line.get_xdata()[0] == line.get_xdata()[1]
    ]


def test_figure_4_parts_the_later_tools_from_the_papers(monkeypatch, scores):
    register_later_tool(monkeypatch)
    delta = deltas(with_later_tool(scores))
    tools = ordered_tools(delta["tool"])
    assert tools[-1] == LATER_TOOL
    axes = drawn(monkeypatch, lambda: figures.figure_4(delta, "unused.png"))
    # Between the last of the paper's tools (x = n − 2) and the later tool (x = n − 1).
    assert all(dividers(axis) == [len(tools) - 1.5] for axis in axes)
    titles = {text.get_text() for axis in axes[: len(SPACINGS)] for text in axis.texts}
    assert {"In the paper", "Since the paper"} <= titles
    assert not any("paper" in t.get_text() for axis in axes[len(SPACINGS) :] for t in axis.texts)


def test_figure_4_of_the_papers_tools_has_no_divider(monkeypatch, scores):
    axes = drawn(monkeypatch, lambda: figures.figure_4(deltas(scores), "unused.png"))
    assert not any(dividers(axis) for axis in axes)
    assert not any(t.get_text() == "In the paper" for axis in axes for t in axis.texts)


def test_figure_a5_heads_the_legend_by_group(monkeypatch):
    register_later_tool(monkeypatch)
    (axis,) = drawn(monkeypatch, lambda: figures.figure_a5(make_timing(later=True), "u.png"))
    legend = [text.get_text() for text in axis.get_legend().get_texts()]
    assert legend[0] == "In the paper"
    assert legend.index("Since the paper") == legend.index("Later Tool") - 1
    assert legend.index("Since the paper") > legend.index("MedPy")
    # One line per OAR category between the paper's tools and the later one (and the reference).
    assert len(dividers(axis)) == 2 * 4


def test_figure_a4_parts_the_groups_in_every_matrix(monkeypatch):
    register_later_tool(monkeypatch)
    names = implementations([*TOOLS, LATER_TOOL])
    wilcoxon = wilcoxon_table(with_later_tool(make_scores()), names, ["1x1x1"], 10)
    axes = drawn(monkeypatch, lambda: figures.figure_a4(wilcoxon, "unused.png"))
    later = names.index(LATER_TOOL)
    # Columns are tools[:-1]: the later tool's column starts at its index.
    assert all(later - 0.5 in dividers(axis) for axis in axes)


def test_later_tools_have_colours_of_their_own(monkeypatch):
    register_later_tool(monkeypatch)
    paper = {str(figures.tool_colour(t)) for t in ("anima", "monai", "simpleitk", "reference")}
    assert str(figures.tool_colour(LATER_TOOL)) not in paper


def test_no_two_tools_look_alike(monkeypatch):
    """However many tools the registry holds (16 today; here 12 more), no two share a colour
    and a fill pattern, and the colours of one pattern are those of a colour-blind-safe
    qualitative scheme, at least 20 CIE-Lab units (ΔE*ab) apart: four greens (Google DeepMind,
    pymia, scikit-image, panoptica) once shared a figure."""
    from matplotlib.colors import to_rgb
    from skimage.color import rgb2lab

    import adapters

    for k in range(12):
        monkeypatch.setitem(adapters.REGISTRY, f"extra{k:02d}", type(adapters.REGISTRY["monai"])())
    tools = ordered_tools(adapters.REGISTRY)
    assert len(tools) >= 28
    assert len({look(t) for t in tools}) == len(tools)

    def lab(colour):
        return rgb2lab(np.array(to_rgb(colour)).reshape(1, 1, 3)).ravel()

    closest = min(
        float(np.linalg.norm(lab(a) - lab(b)))
        for i, a in enumerate(figures.QUALITATIVE)
        for b in figures.QUALITATIVE[i + 1 :]
    )
    assert closest >= 20, closest
    # The study's tools of one pattern never repeat a colour.
    for pattern in {figures.tool_hatch(t) for t in STUDY_TOOLS}:
        colours = [figures.tool_colour(t) for t in STUDY_TOOLS if figures.tool_hatch(t) == pattern]
        assert len(set(colours)) == len(colours)


def test_figure_4_tells_what_each_mark_means(monkeypatch, scores):
    """Not installed and not offered are told apart, the verdicts' tolerance is drawn, and a
    metric has one y range at every voxel size."""
    from matplotlib.colors import to_rgb

    from study.analysis.advice import TOLERANCE

    delta = deltas(scores, [t for t in TOOLS if t != "anima"])
    axes = drawn(
        monkeypatch,
        lambda: figures.figure_4(
            delta, "unused.png", spacings=list(SPACINGS), unavailable=["anima"]
        ),
    )
    tools = ordered_tools([*delta["tool"], "anima"])
    metrics = [m for m in TESTED_KEYS if m in set(delta["metric"])]
    for row, metric in enumerate(metrics):
        panels = axes[row * len(SPACINGS) : (row + 1) * len(SPACINGS)]
        assert len({axis.get_ylim() for axis in panels}) == 1, metric
        for axis in panels:
            words = {
                round(t.get_position()[0]): t.get_text()
                for t in axis.texts
                if t.get_gid() != figures.EXCLUDED_GID
            }
            assert words[tools.index("anima")] == "not installed"
            if metric not in ("HD", "HD95", "MASD"):
                assert words[tools.index("medpy")] == "not offered"  # MedPy lacks it
            band = TOLERANCE[display_unit(metric)]
            assert any(
                np.isclose(p.get_y(), -band) and np.isclose(p.get_y() + p.get_height(), band)
                for p in axis.patches
                if tuple(p.get_facecolor()[:3]) == to_rgb(figures.TOLERANCE_COLOUR)
            ), metric


# --------------------------------------------------------------------------------------------
# Legible at the LIDC-IDRI run's size: 1,578 pairs (7,307 for the whole database), 17 tools
# --------------------------------------------------------------------------------------------


def texts_of(figure) -> list[str]:
    """Every word the figure prints, once it is drawn (tick labels included)."""
    from matplotlib.text import Text

    figure.canvas.draw()
    return [t.get_text() for t in figure.findobj(Text) if t.get_visible() and t.get_text()]


def test_figure_a3_of_the_whole_lidc_database_labels_categories_not_pairs(monkeypatch):
    """7,307 reader pairs drew 7,307 tick labels, a black band: beyond `MAX_LABELLED_PAIRS`
    the figure has one label per category; and a nodule is not called an OAR."""
    manifest = make_pair_manifest(7307)
    (axis,) = drawn(monkeypatch, lambda: figures.figure_a3(manifest, "u.png", source="lidc"))
    labels = [t.get_text() for t in axis.get_xticklabels() if t.get_text()]
    assert len(labels) == manifest["category"].nunique() <= 4
    assert sum(int(label.split("\n")[1].split()[0].replace(",", "")) for label in labels) == 7307
    assert all(label.endswith("reader pairs") for label in labels)
    assert not any("OAR" in text for text in texts_of(axis.figure))
    assert axis.get_ylabel() == "Nodule volume (mm³)"


def test_figure_a3_names_each_pair_up_to_the_limit(monkeypatch):
    """A few OARs (the synthetic study) keep a box and a name each, and their word."""
    (axis,) = drawn(
        monkeypatch, lambda: figures.figure_a3(make_manifest(), "u.png", source="synthetic")
    )
    assert len(axis.get_xticklabels()) == make_manifest()["oar"].nunique()
    assert axis.get_ylabel() == "OAR volume (mm³)"
    limit = figures.MAX_LABELLED_PAIRS
    for pairs, labelled in ((limit, limit), (limit + 1, None)):
        (axis,) = drawn(monkeypatch, lambda n=pairs: figures.figure_a3(make_pair_manifest(n), "u"))
        count = len([t for t in axis.get_xticklabels() if t.get_text()])
        assert count == labelled if labelled else count <= 4
        assert axis.get_ylabel() == "Mask volume (mm³)"  # no source: neutral words
        # Nodules by diameter class: their legend, and the 6 and 10 mm spheres' volumes.
        if labelled:
            legend = [t.get_text() for t in axis.get_legend().get_texts()]
            assert legend == ["<6 mm", "6–10 mm", "≥10 mm"]
        assert [t.get_text().split(",")[0] for t in axis.texts if "sphere" in t.get_text()] == [
            "6 mm sphere",
            "10 mm sphere",
        ]


def overlapping(boxes) -> list[tuple[int, int]]:
    """Index pairs of the boxes (display units) that overlap (by more than rounding)."""
    shrunk = [box.expanded(1.0, 1.0).padded(-0.1) for box in boxes]
    return [
        (i, j)
        for i, a in enumerate(shrunk)
        for j in range(i + 1, len(shrunk))
        if a.overlaps(shrunk[j])
    ]


def count_above(axis, x: int, renderer) -> list[str]:
    """The pieces of the count printed above the tool at `x`, bottom to top."""
    centre = axis.transData.transform((x, 0))[0]
    pieces = [
        (box.y0, t.get_text())
        for t in axis.texts
        if t.get_gid() == figures.EXCLUDED_GID
        and abs((box := t.get_window_extent(renderer)).x0 + box.x1 - 2 * centre) < 2
    ]
    return [text for _, text in sorted(pieces)]


@pytest.mark.parametrize("extra", [0, 9])
def test_figure_4_counts_of_what_was_not_drawn_do_not_overlap(monkeypatch, extra):
    """17 tools and four grids, as in the LIDC-IDRI run: at 2 mm every tool's Δ of the pairs
    whose reference is inf is not finite or failed, and torchmetrics' HD failed on the rest.
    The counts printed "5E5∞5E" run together and into the column title; the tool names at the
    bottom ran into each other too. With `extra` tools more, the same holds."""
    import adapters

    for k in range(extra):
        monkeypatch.setitem(adapters.REGISTRY, f"extra{k:02d}", type(adapters.REGISTRY["monai"])())
    scores = make_crowded_scores(pairs=8)
    delta = deltas(scores, [t for t in set(scores["tool"]) - {"reference"}])
    axes = drawn(
        monkeypatch,
        lambda: figures.figure_4(
            delta,
            "unused.png",
            spacings=list(LIDC_GRIDS),
            unavailable=list(CROWDED_UNAVAILABLE),
        ),
    )
    figure = axes[0].figure
    renderer = figure.canvas.get_renderer()
    tools = ordered_tools([*delta["tool"], *CROWDED_UNAVAILABLE])
    assert len(tools) == 17 + extra
    frames = [axis.get_window_extent(renderer) for axis in axes]
    for k, axis in enumerate(axes):
        counts = [t for t in axis.texts if t.get_gid() == figures.EXCLUDED_GID]
        boxes = [t.get_window_extent(renderer) for t in counts]
        assert not overlapping(boxes), (k, [t.get_text() for t in counts])
        # Above its own frame, clear of every other panel and of the column titles.
        titles = [axis.title.get_window_extent(renderer) for axis in axes[: len(LIDC_GRIDS)]]
        others = [frame for j, frame in enumerate(frames) if j != k]
        assert not any(overlapping([box, other]) for box in boxes for other in others + titles)
    hd_2mm = axes[LIDC_GRIDS.index("2x2x2")]
    above = [count_above(hd_2mm, x, renderer) for x in range(len(tools))]
    assert sum(map(bool, above)) == len(tools) - len(CROWDED_UNAVAILABLE)
    failed = 8 - INF_REFERENCE_PAIRS  # its HD fails on every pair the reference defines
    assert above[tools.index(CROWDED_FAILING)] == [str(failed), "E"]
    # The pairs the reference leaves undefined are said once per panel, no tool's failure.
    notes = [t.get_text() for t in hd_2mm.texts if t.get_gid() == figures.UNDEFINED_GID]
    assert notes == [f"reference undefined on {INF_REFERENCE_PAIRS} pairs"]
    names = [t.get_window_extent(renderer) for t in axes[-1].get_xticklabels() if t.get_text()]
    assert len(names) == len(tools) and not overlapping(names)
