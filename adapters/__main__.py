"""Command line: `python -m adapters {list,compare} ...`.

list [--tools ...]          every tool, whether it is available here, its version
compare A B [--label N] [--tools ...]
                            every available tool beside the reference, with the Δ; the two
                            files must lie on one grid (`maskio.load_pair`)
"""

from __future__ import annotations

import argparse
import sys

from adapters import REGISTRY, configure
from maskio.cli import add_pair_arguments, load_pair_or_exit, positive_mm


def _list(arguments) -> int:
    for name in arguments.tools or list(REGISTRY):
        adapter = REGISTRY[name]
        reason = adapter.unavailable()
        state = f"unavailable: {reason}" if reason else f"version {adapter.version()}"
        print(f"{name:22s} {adapter.role:12s} {adapter.label:28s} {state}")
    return 0


def _compare(arguments) -> int:
    from adapters.compare import compare, format_comparison

    pair = load_pair_or_exit(arguments.parser, arguments)
    result = compare(
        pair.a,
        pair.b,
        pair.spacing,
        tools=arguments.tools,
        percentile=arguments.percentile,
        tau=arguments.tau,
        timeout=arguments.timeout,
    )
    print(format_comparison(result, percentile=arguments.percentile, tau=arguments.tau))
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
        "--timeout", type=positive_mm, default=600.0, help="seconds per tool call"
    )
    comparing.set_defaults(handler=_compare, parser=comparing)
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    configure(dict(arguments.tool_path))
    return arguments.handler(arguments)


if __name__ == "__main__":
    sys.exit(main())
