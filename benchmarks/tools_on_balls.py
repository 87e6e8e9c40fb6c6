"""Every tool beside the reference on two offset balls, and the traps its users can fall into.

    python benchmarks/tools_on_balls.py [--tools TOOL ...] [--record FILE]

Two balls of radius 8 mm whose centres lie (1, 2, 3) mm apart (continuous HD = sqrt(14) =
3.7417 mm), voxelized at 1 mm and at (0.5, 0.5, 2) mm, are written as mask files and compared
as `python -m adapters compare` compares a researcher's files: each tool's value and
Δ = tool − reference. Then what a user gets who calls two of the later tools the wrong way:
mikan-rs' `ArrayEvaluator` with the spacing in numpy's axis order (the tool wants SimpleITK's
x, y, z order), and torchmetrics' 2D HD on a pair of squares on a wider than high image.
The figures are quoted in docs/tools.md.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import run_on_tools  # noqa: E402  (a sibling script)

from adapters import REGISTRY, STUDY_TOOLS  # noqa: E402
from adapters.compare import compare, format_comparison  # noqa: E402
from maskio import write_mask  # noqa: E402
from reference.analytic import offset_ball_masks  # noqa: E402

VOXEL_SIZES = ((1.0, 1.0, 1.0), (0.5, 0.5, 2.0))
OFFSET_MM = (1.0, 2.0, 3.0)


def offset_balls(spacing: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Balls of radius 8 mm on a 48 mm grid, centres OFFSET_MM apart."""
    return offset_ball_masks(spacing, radii=(8.0, 8.0), offset=OFFSET_MM)


def mikan_spacing_trap(a: np.ndarray, b: np.ndarray, spacing: Sequence[float]) -> str:
    """mikan's HD and ASSD with the spacing in SimpleITK's order (right) and numpy's (wrong)."""
    import mikan

    def call(order):
        evaluator = mikan.ArrayEvaluator(a.astype(np.uint8), b.astype(np.uint8), tuple(order))
        return evaluator.labels(1).metrics(["hd", "assd"])

    (hd, assd), (wrong_hd, wrong_assd) = call(spacing[::-1]), call(spacing)
    return (
        f"mikan-rs ArrayEvaluator at {tuple(spacing)} mm: spacing reversed (as Evaluator passes "
        f"it) HD {hd:.4f}, ASSD {assd:.4f}; in numpy's order HD {wrong_hd:.4f}, "
        f"ASSD {wrong_assd:.4f}"
    )


def torchmetrics_wide_image_trap() -> str:
    """torchmetrics' 2D HD of two 8-pixel squares 2 pixels (3 mm) apart, on a square and on a
    wide image: 3 mm on the first."""
    import torch
    from torchmetrics.functional.segmentation import hausdorff_distance

    def hd(width: int) -> float:
        a = np.zeros((16, width), dtype=np.int64)
        a[4:12, 4:12] = 1
        b = np.roll(a, 2, axis=1)
        tensors = [torch.from_numpy(m[np.newaxis]) for m in (b, a)]
        value = hausdorff_distance(
            *tensors, num_classes=2, spacing=[1.0, 1.5], input_format="index"
        )
        return float(value.item())

    return (
        f"torchmetrics 2D HD of squares 3 mm apart: on a 16 x 16 image {hd(16):.4f} mm, "
        f"on a 16 x 20 image {hd(20):.4f} mm"
    )


def run(tools: Sequence[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="balls-") as folder:
        for spacing in VOXEL_SIZES:
            a, b = offset_balls(spacing)
            paths = [
                write_mask(Path(folder) / f"{name}.nii.gz", mask, spacing)
                for name, mask in (("a", a), ("b", b))
            ]
            print(f"\n## Balls of radius 8 mm, centres {OFFSET_MM} mm apart, at {spacing} mm\n")
            print("```")
            print(format_comparison(compare(*paths, tools=list(tools))))
            print("```")
    print("\n## What a user who falls into a trap gets\n")
    if REGISTRY["mikan"].unavailable() is None:
        spacing = VOXEL_SIZES[1]
        print("- " + mikan_spacing_trap(*offset_balls(spacing), spacing))
    if REGISTRY["torchmetrics"].unavailable() is None:
        print("- " + torchmetrics_wide_image_trap())


def main(argv: Sequence[str] | None = None) -> int:
    description = __doc__.split("\n\n")[0]
    return run_on_tools(__file__, description, run, list(REGISTRY), list(STUDY_TOOLS), argv)


if __name__ == "__main__":
    sys.exit(main())
