"""The command-line form of a mask pair, shared by every command that compares two files.

`add_pair_arguments` gives each command the same positional files and the same `--label`,
`--percentile` and `--tau`; `load_pair_or_exit` loads the pair through `maskio.load_pair`
and turns the user's mistakes into `error: <file>: <problem>` on stderr with exit status 2,
argparse's own convention for bad arguments. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import math

from maskio import InputError, MaskPair, load_pair
from vocabulary import PARAMETERS

PARAMETERS_BY_ARGUMENT = {parameter.argument: parameter for parameter in PARAMETERS}


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def percentile(text: str) -> float:
    """A percentile p of HDp: 0 < p <= 100."""
    value = _number(text)
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 100]")
    return value


def positive_mm(text: str) -> float:
    """A positive length in mm (NSD and BIoU tolerance, a timeout in seconds)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def label(text: str) -> int:
    """A label value of a label map: a whole number above 0."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a label number (1, 2, ...)")
    return int(text)


def add_pair_arguments(parser: argparse.ArgumentParser) -> None:
    """Two mask files and the metric parameters, the same for every command."""
    parser.add_argument("mask_a", help="first mask file (reference / ground truth)")
    parser.add_argument("mask_b", help="second mask file (prediction), on the same grid")
    parser.add_argument(
        "--label",
        type=label,
        help="label value to compare in label maps (default: the files must be binary)",
    )
    for name, kind in (("--percentile", percentile), ("--tau", positive_mm)):
        parameter = PARAMETERS_BY_ARGUMENT[name[2:]]
        parser.add_argument(
            name,
            type=kind,
            default=parameter.default,
            help=f"{parameter.description} (default %(default)g)",
        )


def load_pair_or_exit(parser: argparse.ArgumentParser, arguments) -> MaskPair:
    """The pair named on the command line, or exit 2 with the problem in plain words."""
    try:
        return load_pair(arguments.mask_a, arguments.mask_b, arguments.label)
    except InputError as error:
        parser.exit(2, f"error: {error}\n")
