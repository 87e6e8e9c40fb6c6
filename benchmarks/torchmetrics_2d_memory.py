"""torchmetrics' 2D Hausdorff distance: peak memory on square CT slices, whole and cropped.

    python benchmarks/torchmetrics_2d_memory.py [--sizes 64 128 256 512] [--diameters 10 30]
                                                [--spacing 0.7] [--margin 8] [--record FILE]

torchmetrics' HD computes in 2D only (docs/tools.md), and `hausdorff_distance` runs its
distance transform with the default "pytorch" engine, which measures from every pixel off one
mask's edge to every pixel of that edge: its memory grows with the image's pixel count times
the edge's length. Two nodule-sized discs, one reader's outline and another's moved by
(2, 1) pixels, of each diameter in `--diameters` mm (LIDC-IDRI's nodules are 3 to 30 mm), are
put at the middle of a square slice of each size in `--sizes` pixels at `--spacing` mm (an
in-plane pixel of a chest CT) and given to the study's adapter, HD alone. Each pair runs in a
fresh Python, so the peak resident memory (ru_maxrss; tracemalloc does not see torch's
allocations) is the call's own: printed is how far the call raised the process's peak above
what it was before (torch imported, one warm-up call on a tiny pair), with the call's seconds
and value. Then the same pair cropped to a square around both masks' bounding box plus
`--margin` pixels each side (square, since torchmetrics' 2D HD is right on square images only):
whether cropping bounds the memory, and whether the HD stays the same.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

REPO = Path(__file__).resolve().parents[1]
MOVE_PIXELS = (2, 1)
"""How far the second reader's disc lies from the first's, in pixels."""


def nodule_pair(size: int, diameter: float, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """Two discs of `diameter` mm on a size x size slice, the first at its middle, the second
    moved by MOVE_PIXELS."""
    from reference.analytic import ball_mask

    middle = (size / 2 * spacing,) * 2
    moved = tuple(m + p * spacing for m, p in zip(middle, MOVE_PIXELS, strict=True))
    shape, pixel, radius = (size, size), (spacing, spacing), diameter / 2
    return ball_mask(shape, pixel, radius, middle), ball_mask(shape, pixel, radius, moved)


def square_crop(a: np.ndarray, b: np.ndarray, margin: int) -> tuple[np.ndarray, np.ndarray]:
    """Both masks cut to a square around the box of a | b plus `margin` pixels each side,
    moved inside the image where it would leave it (never larger than the image)."""
    either = np.argwhere(a | b)
    low, high = either.min(axis=0) - margin, either.max(axis=0) + margin + 1
    side = min(int((high - low).max()), *a.shape)
    starts = [
        int(np.clip(lo - (side - (hi - lo)) // 2, 0, n - side))
        for lo, hi, n in zip(low, high, a.shape, strict=True)
    ]
    box = tuple(slice(start, start + side) for start in starts)
    return a[box], b[box]


def pairwise_entries(a: np.ndarray, b: np.ndarray) -> int:
    """Entries of the largest pixel-to-edge table the "pytorch" engine builds for this pair:
    the pixels off one mask's edge times that edge's pixels, on the tool's own edges
    (`mask_edges`, which pads the image by one pixel), the larger of the two directions."""
    import torch
    from torchmetrics.functional.segmentation.utils import mask_edges

    edges = mask_edges(torch.from_numpy(b), torch.from_numpy(a))[:2]
    return max(int((edge.numel() - edge.sum()) * edge.sum()) for edge in edges)


def peak_mb() -> float:
    """The process's peak resident memory so far in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(size: int, diameter: float, spacing: float, margin: int | None) -> dict:
    """In the child: the adapter's HD of one pair (cropped when `margin` is given), its
    seconds and how far it raised the peak memory."""
    from adapters import REGISTRY

    tool = REGISTRY["torchmetrics"]
    tiny = nodule_pair(16, 4 * spacing, spacing)
    tool.compute(*tiny, (spacing, spacing), metrics=("HD",))  # imports and first-call set-up
    a, b = nodule_pair(size, diameter, spacing)
    if margin is not None:
        a, b = square_crop(a, b, margin)
    before = peak_mb()
    start = time.perf_counter()
    value = tool.compute(a, b, (spacing, spacing), metrics=("HD",))["HD"]
    seconds = time.perf_counter() - start
    return {
        "side": a.shape[0],
        "entries": pairwise_entries(a, b),
        "hd": value,
        "seconds": seconds,
        "call_mb": peak_mb() - before,
        "before_mb": before,
    }


def in_child(size: int, diameter: float, spacing: float, margin: int | None) -> dict:
    """`measure` in a fresh Python: a peak memory of its own, not the parent's or a larger
    slice's (Linux carries ru_maxrss across fork, not across exec)."""
    pair = {"size": size, "diameter": diameter, "spacing": spacing, "margin": margin}
    command = [sys.executable, __file__, "--child", json.dumps(pair)]
    said = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    return json.loads(said.stdout.strip().splitlines()[-1])


def table_rows(sizes: Sequence[int], diameters: Sequence[float], spacing: float, margin: int):
    """One row per diameter and slice size: the whole slice's figures, then the crop's."""
    rows = []
    for diameter in diameters:
        for size in sizes:
            whole = in_child(size, diameter, spacing, None)
            crop = in_child(size, diameter, spacing, margin)
            rows.append({"diameter": diameter, "size": size, "whole": whole, "crop": crop})
            print(format_row(rows[-1]), flush=True)
    return rows


HEADER = "| nodule mm | image px | table entries, M | MB | s | HD mm |\n|---|---|---|---|---|---|"


def format_row(row: dict) -> str:
    """Two lines of the table: the whole slice, then its crop."""
    return "\n".join(
        f"| {row['diameter']:g} | {side} x {side} {what} | {run['entries'] / 1e6:.2f} "
        f"| {run['call_mb']:,.0f} | {run['seconds']:.3f} | {run['hd']:.4f} |"
        for what, run, side in (
            ("(whole slice)", row["whole"], row["size"]),
            ("(crop)", row["crop"], row["crop"]["side"]),
        )
    )


def verdict(rows: list[dict]) -> str:
    """Whether the crop keeps the HD and bounds the memory: the crop of one nodule, and so its
    table, the same on every slice size."""
    same_hd = all(abs(row["whole"]["hd"] - row["crop"]["hd"]) < 1e-6 for row in rows)
    crops = {(row["diameter"], row["crop"]["side"], row["crop"]["entries"]) for row in rows}
    bounded = len(crops) == len({row["diameter"] for row in rows})
    largest = max(rows, key=lambda row: (row["size"], row["diameter"]))
    crop_mb = max(row["crop"]["call_mb"] for row in rows)
    whole = largest["whole"]
    per_entry = whole["call_mb"] * 2**20 / whole["entries"]
    memory = (
        "bounds the memory (one crop per nodule whatever the slice)"
        if bounded
        else ("does not bound the memory (the crop changes with the slice)")
    )
    return (
        f"Cropping to a square around the pair plus the margin "
        f"{'keeps' if same_hd else 'changes'} the HD on every pair, and {memory}: "
        f"the crop's call raised the peak by at most {crop_mb:,.0f} MB on any slice, the "
        f"whole {largest['size']} x {largest['size']} slice's with a "
        f"{largest['diameter']:g} mm nodule by {whole['call_mb']:,.0f} MB "
        f"({per_entry:.0f} bytes per entry of its table). Figures of a few MB are at the "
        "resolution of ru_maxrss: memory freed before the call is used again."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[64, 128, 256, 512])
    parser.add_argument("--diameters", nargs="+", type=float, default=[10.0, 30.0])
    parser.add_argument("--spacing", type=float, default=0.7, help="pixel size in mm")
    parser.add_argument("--margin", type=int, default=8, help="pixels around the pair's box")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(**json.loads(args.child))))
        return 0
    with recorded(args.record):
        print(
            f"torchmetrics' HD ('pytorch' engine) of two discs {MOVE_PIXELS} pixels apart, "
            f"pixels of {args.spacing:g} mm, crop margin {args.margin} pixels; MB = how far "
            "the call raised the process's peak resident memory\n"
        )
        print(HEADER)
        rows = table_rows(args.sizes, args.diameters, args.spacing, args.margin)
        print("\n" + verdict(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
