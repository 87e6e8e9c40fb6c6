"""A run killed hard resumes with the same command: its stale lock is released first.

Snakemake locks the working directory while it runs (`.snakemake/locks/`) and removes the lock
when it ends, however it ends, unless it is killed outright (SIGKILL: the out-of-memory killer,
a lost session). The next run then refuses to start until `snakemake --unlock`. A lock is
stale when no Snakemake process is alive in the directory; `make run` calls this module
first, which then unlocks, and leaves a live run's lock alone.

    python -m study.pipeline.locks [DIRECTORY]   (Linux: reads /proc)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

LOCKS = Path(".snakemake") / "locks"
"""Where Snakemake keeps a working directory's lock files."""


def is_snakemake(argv: list[str]) -> bool:
    """Whether a command line starts Snakemake: its `snakemake` program, or `-m snakemake`."""
    if any(Path(arg).name == "snakemake" for arg in argv[:2]):
        return True
    return any(a == "-m" and b == "snakemake" for a, b in zip(argv, argv[1:], strict=False))


def _processes() -> Iterator[tuple[int, Path | None, list[str]]]:
    """(pid, working directory, command line) of every running process; the directory is None
    where it cannot be read (another user's process)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # ended meanwhile
        try:
            folder = (entry / "cwd").resolve(strict=True)
        except PermissionError:
            folder = None
        except OSError:
            continue  # ended meanwhile
        yield int(entry.name), folder, [arg for arg in argv if arg]


def live_runs(directory: Path) -> list[int]:
    """Ids of the Snakemake processes, other than this one, working in `directory`, or that
    may be (a Snakemake run whose directory this user cannot read counts: its lock stays)."""
    here = directory.resolve()
    return [
        pid
        for pid, folder, argv in _processes()
        if folder in (here, None) and pid != os.getpid() and is_snakemake(argv)
    ]


def release_stale_lock(directory: Path, unlock: Callable[[Path], None]) -> bool:
    """Call `unlock` when `directory` holds a lock and no Snakemake run is alive there;
    True when it did."""
    locked = any((directory / LOCKS).glob("*.lock"))
    if not locked or live_runs(directory):
        return False
    unlock(directory)
    return True


def snakemake_unlock(directory: Path) -> None:
    """`snakemake --unlock` in `directory`, with this interpreter's Snakemake."""
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--unlock", "--cores", "1", "--quiet"],
        cwd=directory,
        check=True,
        capture_output=True,
    )


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    directory = Path(arguments[0] if arguments else ".")
    if not Path("/proc").is_dir():
        return 0  # no way to tell a live run here: Snakemake's own message says what to do
    if release_stale_lock(directory, snakemake_unlock):
        print(
            f"{directory.resolve()}: released the lock of a run that was killed; "
            "resuming where it stopped"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
