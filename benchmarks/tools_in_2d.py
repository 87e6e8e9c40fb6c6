"""Every tool beside the reference on two offset discs: what each does with 2D masks.

    python benchmarks/tools_in_2d.py [--tools TOOL ...] [--record FILE]

Two discs of radius 8 mm whose centres lie 3 mm apart along axis 0 (continuous HD = 3 mm), on
a 32 mm square, at 1 mm (32 x 32 pixels) and at (0.5, 1.5) mm (64 x 21 pixels, higher than
wide), are written as 2D mask files and compared as `python -m adapters compare` compares a
researcher's files: each tool's value and Δ = tool − reference, every metric asked of every
tool, so a tool that refuses one in 2D shows its error. Then each tool's declared 2D offer
(`Adapter.metrics_2d`, `not_offered_2d`). The figures are quoted in docs/tools.md, "In 2D".
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import run_on_tools  # noqa: E402  (a sibling script)

from adapters import REGISTRY, Adapter  # noqa: E402
from adapters.compare import compare, format_comparison  # noqa: E402
from maskio import write_mask  # noqa: E402
from reference.analytic import offset_ball_masks  # noqa: E402

PIXEL_SIZES = ((1.0, 1.0), (0.5, 1.5))
OFFSET_MM = (3.0, 0.0)


def run(tools: Sequence[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="discs-") as folder:
        for spacing in PIXEL_SIZES:
            pair = offset_ball_masks(spacing, radii=(8.0, 8.0), offset=OFFSET_MM, extent=32.0)
            paths = [
                write_mask(Path(folder) / f"{name}.nii.gz", mask, spacing)
                for name, mask in zip("ab", pair, strict=True)
            ]
            shape = " x ".join(map(str, pair[0].shape))
            print(f"\n## Discs of radius 8 mm, centres {OFFSET_MM} mm apart, at {spacing} mm")
            print(f"\n{shape} pixels\n\n```")
            print(format_comparison(compare(*paths, tools=list(tools))))
            print("```")
    print("\n## What each tool declares it offers in 2D\n")
    for name in tools:
        print(f"- {name}: {declared_offer(REGISTRY[name])}")


def declared_offer(adapter: Adapter) -> str:
    """The metrics the adapter offers in 2D, then those it does not, grouped by the words."""
    offered = ", ".join(adapter.metrics_2d) or "nothing"
    grouped: dict[str, list[str]] = {}
    for metric, words in adapter.not_offered_2d.items():
        grouped.setdefault(words, []).append(metric)
    refused = "; ".join(f"{', '.join(metrics)}: {words!r}" for words, metrics in grouped.items())
    return offered + (f" (not offered: {refused})" if refused else "")


def main(argv: Sequence[str] | None = None) -> int:
    description = __doc__.split("\n\n")[0]
    return run_on_tools(__file__, description, run, list(REGISTRY), list(REGISTRY), argv)


if __name__ == "__main__":
    sys.exit(main())
