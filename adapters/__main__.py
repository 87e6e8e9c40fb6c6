"""Command line: `python -m adapters {list,probe,timing,compare} ...`.

  list                       every tool, whether it is available here, its version
  probe [--tools ...] --out DIR
                             edge-case records, one DIR/<tool>.json per tool
  timing --pairs pairs.csv [--pairs ...] --repeats N [--tools ...] --out DIR
                             HD timing rows, one DIR/<tool>.parquet per tool
  compare A B [--label N] [--tools ...]
                             every available tool beside the reference, with the Δ
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from adapters import REGISTRY, STUDY_TOOLS, configure


def _tools(names: list[str] | None) -> list[str]:
    chosen = names or list(REGISTRY)
    unknown = [name for name in chosen if name not in REGISTRY]
    if unknown:
        raise SystemExit(f"unknown tools {unknown}; known: {', '.join(REGISTRY)}")
    return chosen


def _list(arguments) -> int:
    for name in _tools(arguments.tools):
        adapter = REGISTRY[name]
        reason = adapter.unavailable()
        role = "tool" if name in STUDY_TOOLS else "cross-check"
        state = f"unavailable: {reason}" if reason else f"version {adapter.version()}"
        print(f"{name:22s} {role:12s} {adapter.label:28s} {state}")
    return 0


def _probe(arguments) -> int:
    from study.edge_cases import probe

    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in _tools(arguments.tools):
        record = probe(REGISTRY[name], percentile=arguments.percentile, tau=arguments.tau,
                       timeout=arguments.timeout)
        (out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(f"{name}: {record['status']}, {len(record['records'])} records")
    return 0


def _timing(arguments) -> int:
    import pandas as pd

    from study.timing import time_hd

    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in arguments.pairs:
        if not Path(path).is_file():
            raise SystemExit(f"pairs file {path} does not exist")
    tables = [(Path(p).parent, pd.read_csv(p)) for p in arguments.pairs]
    for name in _tools(arguments.tools):
        frames = [time_hd(REGISTRY[name], table.to_dict("records"), arguments.repeats,
                          base=base, timeout=arguments.timeout, dataset=arguments.dataset)
                  for base, table in tables]
        timing = pd.concat(frames, ignore_index=True)
        timing.to_parquet(out / f"{name}.parquet", index=False)
        ok = timing[timing["status"] == "ok"]["seconds"]
        median = f"{ok.median():.3f} s" if len(ok) else "n/a"
        print(f"{name}: {len(timing)} rows, median {median}")
    return 0


def _compare(arguments) -> int:
    from study.compare import compare, format_comparison, load_pair

    a, b, spacing = load_pair(arguments.a, arguments.b, arguments.label)
    result = compare(a, b, spacing, tools=_tools(arguments.tools),
                     percentile=arguments.percentile, tau=arguments.tau,
                     timeout=arguments.timeout)
    print(format_comparison(result, percentile=arguments.percentile, tau=arguments.tau))
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m adapters", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    main.add_argument("--tool-path", action="append", default=[], metavar="TOOL=PATH",
                      help="binary of a program tool (overrides the environment and PATH)")
    commands = main.add_subparsers(dest="command", required=True)

    def add(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--tools", nargs="+", help="registry keys (default: all)")
        command.add_argument("--percentile", type=float, default=95.0)
        command.add_argument("--tau", type=float, default=2.0, help="NSD/BIoU tolerance, mm")
        command.add_argument("--timeout", type=float, default=600.0,
                             help="seconds per program-tool run")
        command.set_defaults(handler=handler)
        return command

    add("list", _list, "tools, availability and versions")
    add("probe", _probe, "edge-case probe").add_argument("--out", required=True)
    timing = add("timing", _timing, "HD timing on pairs.csv files")
    timing.add_argument("--pairs", nargs="+", required=True)
    timing.add_argument("--repeats", type=int, default=3)
    timing.add_argument("--dataset", default="")
    timing.add_argument("--out", required=True)
    comparing = add("compare", _compare, "compare two masks")
    comparing.add_argument("a", help="first mask (reference / ground truth)")
    comparing.add_argument("b", help="second mask (prediction)")
    comparing.add_argument("--label", type=int, help="label value to compare (default: != 0)")
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    paths = {}
    for item in arguments.tool_path:
        name, separator, path = item.partition("=")
        if not separator or name not in REGISTRY:
            raise SystemExit(f"--tool-path wants TOOL=PATH with a known tool, got {item!r}")
        paths[name] = path
    configure(paths)
    return arguments.handler(arguments)


if __name__ == "__main__":
    sys.exit(main())
