"""The study's 2D arm below the workflow: outlines of masks and of the 2D shapes, their
voxelization on 2D grids, and a 2D pair's rows for a metric a tool does not offer in 2D."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from adapters import REGISTRY
from adapters.calls import Outcome
from study.dataset import shapes2d
from study.dataset.meshes import (
    check_closed,
    mesh_from_mask,
    mesh_volume,
    outline_from_loops,
    read_mesh,
    write_mesh,
)
from study.dataset.voxelize import voxelize_mesh, voxelize_pair
from study.scoring.score import NOT_OFFERED_2D, mask_dimension, outcome_rows


def disc_mask(shape, spacing, centre, radius) -> np.ndarray:
    axes = [np.arange(n) * s for n, s in zip(shape, spacing, strict=True)]
    x, y = np.meshgrid(*axes, indexing="ij")
    return (x - centre[0]) ** 2 + (y - centre[1]) ** 2 <= radius**2


@pytest.mark.parametrize("spacing", [(0.7, 0.7), (0.5, 1.5)])
def test_a_masks_outline_voxelized_on_its_own_grid_is_the_mask_again(spacing):
    mask = disc_mask((60, 30), spacing, (15.0, 20.0), 8.0)
    outline = mesh_from_mask(mask, spacing, (0.0, 0.0))
    check_closed(outline, name="disc")
    again = voxelize_mesh(outline, spacing, (0.0, 0.0), mask.shape)
    assert np.array_equal(again, mask)


def test_a_mask_touching_the_image_edge_still_has_a_closed_outline():
    mask = np.zeros((10, 12), bool)
    mask[:4, :] = True  # touches three edges
    outline = mesh_from_mask(mask, (1.0, 1.0), (0.0, 0.0))
    check_closed(outline, name="edge")
    # The outline runs half a pixel outside the 4 x 12 pixel centres (the padding gives it
    # its edge there too), 4 by 12 mm, its four corners cut by marching squares (1/8 mm^2).
    assert mesh_volume(outline) == pytest.approx(4 * 12 - 4 * 0.125, abs=1e-6)
    assert np.array_equal(voxelize_mesh(outline, (1, 1), (0, 0), mask.shape), mask)


def test_an_outline_is_wound_counter_clockwise_and_keeps_its_area_through_a_file(tmp_path):
    t = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    clockwise = np.column_stack([3 * np.cos(t), -3 * np.sin(t)])
    outline = outline_from_loops([clockwise])
    check_closed(outline, name="circle")  # inside out would raise
    area = 0.5 * 400 * 9 * math.sin(2 * math.pi / 400)  # the regular polygon's
    # VTK keeps points in float32: areas to about 1e-7.
    assert mesh_volume(outline) == pytest.approx(area, rel=1e-6)
    write_mesh(tmp_path / "c.vtp", outline)
    assert mesh_volume(read_mesh(tmp_path / "c.vtp")) == pytest.approx(area, rel=1e-6)


def test_an_open_polyline_and_a_short_loop_are_refused_by_name():
    with pytest.raises(ValueError, match="3 or more points"):
        outline_from_loops([np.zeros((2, 2))])
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData

    points, lines = vtkPoints(), vtkCellArray()
    for x, y in ((0, 0), (1, 0), (1, 1)):
        points.InsertNextPoint(x, y, 0)
    lines.InsertNextCell(2, (0, 1))
    lines.InsertNextCell(2, (1, 2))
    open_line = vtkPolyData()
    open_line.SetPoints(points)
    open_line.SetLines(lines)
    with pytest.raises(ValueError, match="not closed"):
        check_closed(open_line, name="open")


def test_a_2d_voxel_size_for_3d_meshes_and_the_reverse_are_refused():
    outline = outline_from_loops([np.array([[0, 0], [4, 0], [4, 4], [0, 4]], float)])
    with pytest.raises(ValueError, match="has 3 entries but the meshes are 2D"):
        voxelize_pair(outline, None, (1, 1, 1))
    with pytest.raises(ValueError, match="2D mesh cannot be voxelized on a 3D grid"):
        voxelize_mesh(outline, (1, 1, 1), (0, 0, 0), (5, 5, 5))


def test_the_2d_shapes_have_their_geometry_and_a_seed_decides_them():
    case = shapes2d.generate_case(1, seed=7)
    assert list(case) == list(shapes2d.SHAPES)
    again = shapes2d.generate_case(1, seed=7)
    other = shapes2d.generate_case(1, seed=8)
    area = {name: [mesh_volume(pair[o]) for o in "AB"] for name, pair in case.items()}
    assert area["Squares"] == pytest.approx([576.0, 576.0], rel=1e-6)  # float32 points
    assert area["Thin_bars"] == pytest.approx([45.0, 45.0], rel=1e-6)
    # Round shapes: polygons of SEGMENTS vertices, within 1e-4 of the circles' area.
    disc_a, disc_b = area["Discs"]
    assert disc_a == pytest.approx(disc_b, rel=1e-6) and 3**2 * math.pi < disc_a < 5**2 * math.pi
    assert mesh_volume(again["Discs"]["A"]) == disc_a != mesh_volume(other["Discs"]["A"])


def test_the_two_discs_voxelized_finely_keep_their_shift_as_their_hausdorff_distance():
    from reference import compute_metrics

    pair = shapes2d.generate_case(2, seed=3)["Discs"]
    centres = [np.mean(np.reshape(pair[o].GetBounds(), (3, 2))[:2], axis=1) for o in "AB"]
    shift = float(np.linalg.norm(centres[1] - centres[0]))
    masks = voxelize_pair(pair["A"], pair["B"], (0.05, 0.05))
    hd = compute_metrics(masks.mask_a, masks.mask_b, masks.spacing, metrics=["HD"])["HD"]
    assert hd == pytest.approx(shift, abs=0.05)  # the staircase of 0.05 mm pixels


def test_a_2d_pairs_error_row_for_a_metric_not_offered_in_2d_says_so_first():
    tool = REGISTRY["segauge"]
    assert tool.not_offered_2d, "segauge declares its distances not offered in 2D"
    metric = next(iter(tool.not_offered_2d))
    outcome = Outcome(values={}, seconds=0.1, error="ValueError: needs 3D masks")
    declined = outcome_rows(outcome, [metric], {}, tool.not_offered_2d)[0]
    assert declined["status"] == "error"
    assert declined["message"] == f"{NOT_OFFERED_2D}: ValueError: needs 3D masks"
    in_3d = outcome_rows(outcome, [metric], {})[0]
    assert in_3d["message"] == "ValueError: needs 3D masks"


def test_a_pairs_dimension_comes_from_its_grid_or_on_the_native_grid_its_file(tmp_path):
    from maskio import write_mask

    assert mask_dimension("0.5x2", "unread.nii.gz") == 2
    assert mask_dimension("1x1x2", "unread.nii.gz") == 3
    write_mask(tmp_path / "slice.nii.gz", np.ones((4, 5), bool), (0.7, 0.7), (0.0, 0.0))
    assert mask_dimension("native", tmp_path / "slice.nii.gz") == 2


def test_fig_4_names_a_metric_refused_in_2d_apart_from_a_tool_that_failed():
    from study.analysis.figures import _absent_word, _is_2d

    failed = pd.DataFrame({"tool": ["segauge"], "kind": ["failed"]})
    assert _is_2d(["1x1", "native"]) and not _is_2d(["1x1x1", "native"])
    assert _absent_word("segauge", "HD95", failed, (), two_d=True) == "not in 2D"
    assert _absent_word("segauge", "HD95", failed, (), two_d=False) == "all failed"
    assert _absent_word("torchmetrics", "HD", failed, (), two_d=True) == "all failed"
    assert _absent_word("segauge", "HD95", failed.iloc[:0], (), two_d=True) == "not offered"
    assert _absent_word("segauge", "HD95", failed, ("segauge",), two_d=True) == "not installed"
