"""python -m reference A B [--label N] [--percentile P] [--tau T] [--meshing M] [--json]

The reference's metrics between two mask files on one grid (checked by `maskio.load_pair`).
"""

from __future__ import annotations

import argparse
import json

from maskio.cli import add_pair_arguments, load_pair_or_exit


def parser() -> argparse.ArgumentParser:
    from reference.meshing import MESHINGS

    command = argparse.ArgumentParser(
        prog="python -m reference",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_pair_arguments(command)
    command.add_argument("--meshing", choices=MESHINGS, default=MESHINGS[0])
    command.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return command


def main(argv: list[str] | None = None) -> int:
    from reference import compute_metrics

    command = parser()
    arguments = command.parse_args(argv)
    pair = load_pair_or_exit(command, arguments)
    scores = compute_metrics(
        pair.a,
        pair.b,
        pair.spacing,
        percentile=arguments.percentile,
        tau=arguments.tau,
        meshing=arguments.meshing,
    )
    if arguments.json:
        print(json.dumps(scores))
    else:
        for key, value in scores.items():
            print(f"{key:<6} {value:.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
