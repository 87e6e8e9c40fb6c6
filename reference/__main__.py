"""python -m reference A.nii.gz B.nii.gz [--percentile P] [--tau T] [--json]"""

from __future__ import annotations

import argparse
import json

from reference.api import compute_metrics
from reference.meshing import MESHINGS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m reference", description=__doc__)
    parser.add_argument("mask_a")
    parser.add_argument("mask_b")
    parser.add_argument("--percentile", type=float, default=95.0)
    parser.add_argument("--tau", type=float, default=2.0, help="tolerance in mm (NSD, BIoU)")
    parser.add_argument("--meshing", choices=MESHINGS, default=MESHINGS[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    scores = compute_metrics(args.mask_a, args.mask_b, percentile=args.percentile,
                             tau=args.tau, meshing=args.meshing)
    if args.json:
        print(json.dumps(scores))
    else:
        for key, value in scores.items():
            print(f"{key:<6} {value:.6g}")


if __name__ == "__main__":
    main()
