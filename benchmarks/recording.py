"""Benchmarks print their figures and keep the latest run's in a Markdown file.

Every benchmark script takes `--record PATH` (default results/benchmarks/<script>.md in the
project) and runs its body inside `recorded(PATH)`: what it prints still goes to the terminal,
and is also written, under a header naming the command, the date and the machine, to PATH.
The docs quote these files, so a figure in them can be traced to the run that printed it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import os
import platform
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

RECORDS = Path(__file__).resolve().parents[1] / "results" / "benchmarks"


def add_record_option(parser: argparse.ArgumentParser, script: str) -> None:
    """--record PATH, by default results/benchmarks/<name of `script` without .py>.md."""
    name = Path(script).stem
    parser.add_argument(
        "--record",
        type=Path,
        default=RECORDS / f"{name}.md",
        help=f"Markdown file for what the run prints (default: results/benchmarks/{name}.md)",
    )


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def recorded(path: Path) -> Iterator[None]:
    """Print as usual and, when the body ends without an error, write the printed text to
    `path` (a failed run leaves the previous record alone)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
        yield
    header = (
        f"# {Path(sys.argv[0]).name}\n\n"
        f"- command: `{shlex.join(['python', *sys.argv])}`\n"
        f"- finished: {datetime.datetime.now().isoformat(timespec='seconds')}\n"
        f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}\n\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        header + "```text\n" + printed.getvalue().rstrip("\n") + "\n```\n", encoding="utf-8"
    )
    print(f"recorded in {path}")


def run_on_tools(
    script: str,
    description: str,
    run: Callable[[list[str]], object],
    tools: Sequence[str],
    default: Sequence[str],
    argv: Sequence[str] | None = None,
) -> int:
    """The command line of a benchmark that runs on some tools: `--tools` (any of `tools`,
    `default` unless given) and `--record`; `run(tools)` is printed and recorded."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--tools", nargs="+", choices=list(tools), default=list(default), metavar="TOOL"
    )
    add_record_option(parser, script)
    arguments = parser.parse_args(argv)
    with recorded(arguments.record):
        run(arguments.tools)
    return 0
