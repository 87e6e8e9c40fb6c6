"""Build a pinned Python environment for scoring the tools in other versions: `make env-paper`.

    python tools/build_environment.py paper [--force]

The environment (`adapters.environments.ENVIRONMENTS`) is a virtual environment in
`.envs/<name>/` made from this Python's base interpreter, with its pinned file installed
(`workflow/envs/<name>.txt`), then `workflow/envs/<name>-no-deps.txt` without dependencies
when it exists (for a package whose declared pins have no wheels for this Python). The
project itself is not installed: a worker of the environment imports the adapters from this
project (adapters.worker). A program a tool needs in the environment's own version
(`PROGRAMS`) is linked into its bin folder, where the adapter looks first, when the Debian
package that ships it is installed; otherwise the line that installs it is printed and the tool
is recorded as unavailable there. A stamp of the pinned files makes a second run a no-op.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from adapters.environments import ENVIRONMENTS, Environment

PROGRAMS: dict[str, dict[str, tuple[str, str]]] = {
    # environment -> program -> (Debian package, where the package puts it)
    "paper": {"plastimatch": ("plastimatch", "/usr/bin/plastimatch")},
}
"""Programs an environment names as its own: Plastimatch 1.9.4 is the paper's version; it is
not on PyPI, and Debian 12 packages exactly that release."""


def pinned_files(environment: Environment) -> list[Path]:
    """The environment's pinned file, and its no-deps companion when there is one."""
    files = [environment.requirements]
    no_deps = environment.requirements.with_name(f"{environment.name}-no-deps.txt")
    return files + [no_deps] if no_deps.is_file() else files


def stamp_of(environment: Environment) -> Path:
    """The stamp that says the environment was built from the pinned files as they are."""
    digest = hashlib.sha256(sys.version.encode())
    for path in pinned_files(environment):
        digest.update(path.read_bytes())
    return Path(environment.python).parents[1] / f".built-{digest.hexdigest()[:16]}"


def _run(command: Sequence[str]) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run(command, check=True)


def link_programs(environment: Environment) -> None:
    """Link each of the environment's programs into its bin folder, or say how to get it."""
    folder = Path(environment.python).parent
    for program, (package, path) in PROGRAMS.get(environment.name, {}).items():
        target = folder / program
        if Path(path).is_file():
            target.unlink(missing_ok=True)
            target.symlink_to(path)
            print(f"{program}: {path} (Debian package {package}) linked as {target}")
        else:
            print(
                f"{program}: not installed; `apt-get install {package}` provides the paper's "
                f"version, then run this again. Until then {program} is recorded as "
                f"unavailable in the {environment.name} environment."
            )


def build(name: str, *, force: bool = False) -> Path:
    """Build (or confirm) environment `name`; return its Python."""
    if name not in ENVIRONMENTS or ENVIRONMENTS[name].requirements is None:
        built = [n for n, e in ENVIRONMENTS.items() if e.requirements is not None]
        raise SystemExit(f"error: no environment {name!r} to build; buildable: {built}")
    environment = ENVIRONMENTS[name]
    stamp = stamp_of(environment)
    if stamp.is_file() and not force:
        print(f"{name}: up to date ({environment.python})")
        link_programs(environment)
        return Path(environment.python)
    root = stamp.parent
    if force and root.exists():
        shutil.rmtree(root)
    print(f"{name}: building {root} from {', '.join(p.name for p in pinned_files(environment))}")
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(root)])
    pip = [environment.python, "-m", "pip", "install", "--quiet"]
    _run([*pip, "--upgrade", "pip"])
    first, *rest = pinned_files(environment)
    _run([*pip, "-r", str(first)])
    for path in rest:
        _run([*pip, "--no-deps", "-r", str(path)])
    for old in root.glob(".built-*"):
        old.unlink()
    stamp.touch()
    link_programs(environment)
    print(f"{name}: built ({environment.python})")
    return Path(environment.python)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("environment", help="the environment to build, e.g. paper")
    parser.add_argument("--force", action="store_true", help="rebuild from scratch")
    arguments = parser.parse_args(argv)
    build(arguments.environment, force=arguments.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
