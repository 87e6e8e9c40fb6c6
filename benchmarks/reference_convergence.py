"""Convergence of the reference's default subdivision on synthetic OARs (docs/reference.md):
the plain call's values (`bounds=False`), before any bracket moves them.

python benchmarks/reference_convergence.py [--case 2] [--seed 20240215] [--oars A B ...] [--fine 4]

Prints, per OAR category and voxel size, the largest |plain - uniform level `fine`| of HD,
HD95, MASD, ASSD and NSD (`reference.convergence.differences`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reference.api import DEFAULT_SUBDIVISION
from reference.convergence import differences
from study.dataset.synthetic import generate_case
from study.dataset.voxelize import voxelize_pair
from study.oars import OARS
from vocabulary import DISTANCE_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

DEFAULT_OARS = ("Cochlea_L", "OpticNrv_L", "Glnd_Submand_L", "Brainstem", "A_Carotid_L")
"""Two small, one midsize, one large and one tubular OAR."""

SPACINGS = ((1.0, 1.0, 1.0), (2.0, 2.0, 2.0), (0.5, 0.5, 2.0))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="reference_convergence.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--case", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20240215)
    parser.add_argument("--oars", nargs="+", default=list(DEFAULT_OARS))
    parser.add_argument("--fine", type=int, default=4, help="uniform subdivision levels")
    add_record_option(parser, __file__)
    args = parser.parse_args(argv)
    with recorded(args.record):
        print_table(args)


def print_table(args) -> None:
    meshes = generate_case(args.case, args.seed, oars=args.oars)
    print(
        f"case {args.case}, seed {args.seed}: default (adaptive, level {DEFAULT_SUBDIVISION},"
        f" HD bracket) minus uniform level {args.fine}; max |difference| per row\n"
    )
    print("| category | spacing (mm) | OARs | " + " | ".join(DISTANCE_KEYS) + " |")
    print("|---|---|---|" + "---|" * len(DISTANCE_KEYS))
    categories = sorted({OARS[name] for name in args.oars})
    for category in categories:
        names = [name for name in args.oars if OARS[name] == category]
        for spacing in SPACINGS:
            worst = dict.fromkeys(DISTANCE_KEYS, 0.0)
            for name in names:
                pair = voxelize_pair(meshes[name]["A"], meshes[name]["B"], spacing)
                diff = differences(pair.mask_a, pair.mask_b, spacing, fine=args.fine)
                worst = {key: max(worst[key], abs(diff[key]), key=abs) for key in worst}
            cells = " | ".join(f"{worst[key]:.4f}" for key in DISTANCE_KEYS)
            print(f"| {category} | {spacing} | {', '.join(names)} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
