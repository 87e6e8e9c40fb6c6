"""Files written whole: a run that is killed while writing one leaves the old file, or none,
never a truncated file that a later run would take for a finished one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

PART_SUFFIX = ".part"
"""Ending of the temporary file a whole write goes through, beside its target."""


def part_of(path: Path) -> Path:
    """The temporary file `replace_whole` writes `path` through (a writer that checks a folder
    for foreign files knows its own leftover by this name)."""
    return path.with_name(path.name + PART_SUFFIX)


def replace_whole(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write `path` by `write(temporary)` and rename the temporary over it (`os.replace`,
    atomic within one file system, hence the temporary beside the target): the old content
    stays until the new one is complete. The temporary is removed when `write` fails."""
    path = Path(path)
    part = part_of(path)
    try:
        write(part)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return path
