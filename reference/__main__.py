"""python -m reference A B [--label N] [--percentile P] [--tau T] [--meshing M] [--no-bounds]
                    [--json]

The reference's metrics between two mask files on one grid (checked by `maskio.load_pair`):
each value with the bracket proven to hold the metric's exact value between the two meshes,
and its width (docs/reference.md, "What the brackets prove"); a bracket wider than its aim is
also said on stderr. --no-bounds prints the values of the plain call alone (faster, no proof).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import asdict

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
    command.add_argument(
        "--bounds",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="print each metric's proven bracket [lower, upper] and its width (default); "
        "--no-bounds: the values alone",
    )
    command.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return command


def table(scores) -> str:
    """One line per metric: key and value, and where `scores.brackets` has the metric's
    bracket (the certified call), "[lower, upper] width w"."""
    lines = []
    for key, value in scores.items():
        line = f"{key:<6} {value:.6g}"
        if key in scores.brackets:
            bracket = scores.brackets[key]
            line += f"  [{bracket.lower:.6g}, {bracket.upper:.6g}]  width {bracket.width:.2g}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from reference import compute_metrics
    from reference.bounds import WideBracket

    command = parser()
    arguments = command.parse_args(argv)
    pair = load_pair_or_exit(command, arguments)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", WideBracket)
        result = compute_metrics(
            pair.a,
            pair.b,
            pair.spacing,
            percentile=arguments.percentile,
            tau=arguments.tau,
            meshing=arguments.meshing,
            bounds=arguments.bounds,
        )
    for one in said:  # a bracket wider than its aim: one plain line each
        if issubclass(one.category, WideBracket):
            print(f"note: {one.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(one.message, one.category, one.filename, one.lineno)
    if not arguments.json:
        print(table(result))
    elif not arguments.bounds:
        print(json.dumps(result))
    else:
        said = {key: asdict(one) | {"width": one.width} for key, one in result.brackets.items()}
        print(json.dumps({"scores": result, "brackets": said}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
