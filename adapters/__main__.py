"""Command line: `python -m adapters {list,compare} ...`.

[--environment E] list [--tools ...]
                            every tool, whether it is available here, its version
[--environment E] compare A B [--label N] [--tools ...]
                            every available tool beside the reference, with the Δ; the two
                            files must lie on one grid (`maskio.load_pair`)
"""

from __future__ import annotations

import argparse
import sys

from adapters import REGISTRY, CallSettings, configure, describe
from adapters.calls import DEFAULT_SETTINGS
from adapters.environments import SCORED_ENVIRONMENTS, STUDY_ENVIRONMENT
from maskio.cli import add_pair_arguments, load_pair_or_exit, positive_mm


def _list(arguments) -> int:
    names = arguments.tools or list(REGISTRY)
    for name, (version, reason) in describe(names, arguments.environment).items():
        state = f"unavailable: {reason}" if reason else f"version {version}"
        adapter = REGISTRY[name]
        print(f"{name:22s} {adapter.role:12s} {adapter.label:28s} {state}")
    return 0


def _compare(arguments) -> int:
    from adapters.compare import compare, format_comparison

    load_pair_or_exit(arguments.parser, arguments)  # bad files: one line naming the file, exit 2
    settings = CallSettings(
        percentile=arguments.percentile,
        tau=arguments.tau,
        timeout=arguments.timeout,
        environment=arguments.environment,
    )
    result = compare(
        arguments.mask_a,
        arguments.mask_b,
        label=arguments.label,
        tools=arguments.tools,
        settings=settings,
    )
    print(format_comparison(result))
    return 0


def _tool_path(text: str) -> tuple[str, str]:
    name, separator, path = text.partition("=")
    if not separator or name not in REGISTRY:
        raise argparse.ArgumentTypeError(f"wants TOOL=PATH with a known tool, got {text!r}")
    return name, path


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="python -m adapters",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    main.add_argument(
        "--tool-path",
        action="append",
        default=[],
        type=_tool_path,
        metavar="TOOL=PATH",
        help="binary of a program tool (overrides the environment and PATH)",
    )
    main.add_argument(
        "--environment",
        choices=list(SCORED_ENVIRONMENTS),
        default=STUDY_ENVIRONMENT,
        help="the Python environment the tools run in (default: %(default)s, today's versions; "
        "paper: the paper's versions, built by make env-paper)",
    )
    commands = main.add_subparsers(dest="command", required=True)
    tools = {
        "nargs": "+",
        "choices": list(REGISTRY),
        "metavar": "TOOL",
        "help": f"registry keys (default: all): {', '.join(REGISTRY)}",
    }
    listing = commands.add_parser("list", help="tools, availability and versions")
    listing.add_argument("--tools", **tools)
    listing.set_defaults(handler=_list)
    comparing = commands.add_parser("compare", help="compare two mask files")
    add_pair_arguments(comparing)
    comparing.add_argument("--tools", **tools)
    comparing.add_argument(
        "--timeout",
        type=positive_mm,
        default=DEFAULT_SETTINGS.timeout,
        help="seconds per tool call",
    )
    comparing.set_defaults(handler=_compare, parser=comparing)
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    configure(dict(arguments.tool_path))
    return arguments.handler(arguments)


if __name__ == "__main__":
    sys.exit(main())
