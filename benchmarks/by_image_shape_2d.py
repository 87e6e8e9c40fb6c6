"""A 2D run's scores by image shape: square, wider than high, higher than wide.

    python benchmarks/by_image_shape_2d.py --results results --dataset lidc-2d
        [--tools torchmetrics deepmind] [--metric HD] [--record FILE]

A tool whose 2D arithmetic depends on the image's shape shows it here: torchmetrics' HD writes
its distances back at row * height + column, right on square images only (docs/tools.md). Each
scored pair's shape is read from its mask file's header (results/masks/<dataset>/<grid>/...;
array axis 0 is a (1, H, W) tensor's H); per tool and shape class: the pairs, how many the tool
computed, how many raised (with the first error's type), and on the computed ones the median
and largest |Δ| against the reference and the share beyond 0.5 mm.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
import maskio  # noqa: E402
from study.records import REFERENCE  # noqa: E402

SQUARE, WIDER, HIGHER = "square", "wider than high", "higher than wide"


def shape_class(shape: Sequence[int]) -> str:
    """A 2D image's class by its (H, W) = (axis 0, axis 1) pixels."""
    high, wide = shape
    return SQUARE if high == wide else WIDER if wide > high else HIGHER


def pair_shapes(results: Path, dataset: str) -> pd.DataFrame:
    """(case, oar, spacing) -> the pair's image shape class, from the mask files' headers."""
    rows = []
    for pairs in sorted((results / "masks" / dataset).glob("*/*/pairs.csv")):
        for pair in pd.read_csv(pairs, dtype={"case": str}).itertuples():
            shape = maskio.array_shape(pairs.parent / pair.path_a)
            rows.append((pair.case, pair.oar, pair.spacing, shape_class(shape), len(shape)))
    table = pd.DataFrame(rows, columns=["case", "oar", "spacing", "shape", "dimension"])
    if len(table) and (table["dimension"] != 2).any():
        raise SystemExit(f"{results}: the masks of {dataset} are not all 2D")
    return table.drop(columns="dimension")


def by_shape(scores: pd.DataFrame, shapes: pd.DataFrame, tool: str, metric: str) -> pd.DataFrame:
    """Per shape class: pairs, computed, raised, |Δ| median, max and share > 0.5 mm."""
    keys = ["case", "oar", "spacing"]
    rows = scores.loc[(scores["metric"] == metric) & (scores["tool"] == tool)]
    reference = scores.loc[(scores["metric"] == metric) & (scores["tool"] == REFERENCE)]
    merged = rows.merge(reference[[*keys, "value"]], on=keys, suffixes=("", "_reference"))
    merged = merged.merge(shapes, on=keys, how="left")
    out = []
    for shape in (SQUARE, WIDER, HIGHER):
        part = merged.loc[merged["shape"] == shape]
        ok = part.loc[part["status"] == "ok"]
        error = np.abs(ok["value"] - ok["value_reference"]).dropna()
        raised = part.loc[part["status"] == "error", "message"]
        out.append(
            {
                "tool": tool,
                "image": shape,
                "pairs": len(part),
                "computed": len(ok),
                "raised": len(raised),
                "first error": raised.iloc[0].split(":")[0] if len(raised) else "",
                "median abs Δ (mm)": round(float(error.median()), 3) if len(error) else np.nan,
                "max abs Δ (mm)": round(float(error.max()), 3) if len(error) else np.nan,
                "abs Δ > 0.5 mm": f"{(error > 0.5).mean():.0%}" if len(error) else "",
            }
        )
    return pd.DataFrame(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--tools", nargs="+", default=["torchmetrics", "deepmind"])
    parser.add_argument("--metric", default="HD")
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    with recorded(args.record):
        scores = pd.read_parquet(args.results / "scores.parquet")
        scores = scores.loc[scores["dataset"] == args.dataset]
        shapes = pair_shapes(args.results, args.dataset)
        table = pd.concat([by_shape(scores, shapes, t, args.metric) for t in args.tools])
        print(f"{args.metric} of {args.dataset} by image shape ({len(shapes)} pair-grids):\n")
        print(table.to_markdown(index=False))


if __name__ == "__main__":
    main()
