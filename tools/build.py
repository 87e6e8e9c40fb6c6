"""Obtain and build the three tools of the study that are not on PyPI: `make tools`.

    python tools/build.py [anima] [evaluatesegmentation] [metricsreloaded] [--force]

Each tool's source is a pinned commit of its public repository, downloaded as an archive, or
a local copy named by an environment variable (a folder, or a .tar.gz / .zip archive of one):

    ANIMA_SRC=...  EVALUATESEGMENTATION_SRC=...  METRICSRELOADED_SRC=...

- Anima: CMake on the `Anima/` folder of its repository against the system's ITK (not its
  superbuild, which downloads ITK, VTK and more), with VTK, RPI and NLopt off and only the
  segmentation module, building the one target `animaSegPerfAnalyzer`.
- EvaluateSegmentation: CMake on its `source/` folder, Release.
- Metrics Reloaded: pip-installed into this environment with its dependencies held to the
  study's pinned versions (constraints.txt), without build isolation, with setuptools < 81
  (its build still imports pkg_resources).

Programs land in `adapters.base.BUILT_TOOLS_DIR`, where the adapters look after the config's
`tool_paths`, their environment variable and PATH. A stamp per tool records the commit and
the source it was built from; a second run with the same source is a no-op.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.base import BUILT_TOOLS_DIR

CONSTRAINTS = Path(__file__).resolve().parent.parent / "constraints.txt"
"""The study's pinned versions; Metrics Reloaded's dependencies are installed within them."""

WORK_DIR = BUILT_TOOLS_DIR.parent
"""Everything a build makes, git-ignored: bin/ (the programs), downloads/, src/, build/,
logs/ and stamps/."""

DEBIAN_PACKAGES: dict[str, tuple[str, ...]] = {
    "anima": (
        "cmake",
        "g++",
        "make",
        "libinsighttoolkit5-dev",
        "libtclap-dev",
        "libboost-dev",
        "libfftw3-dev",
        "libtinyxml2-dev",
    ),
    "evaluatesegmentation": ("cmake", "g++", "make", "libinsighttoolkit5-dev", "libtclap-dev"),
    "metricsreloaded": (),
}
"""What each build needs from the system, as Debian/Ubuntu package names."""


@dataclass(frozen=True)
class Source:
    """A tool's pinned source: its repository, the commit, and the variable naming a copy."""

    repository: str
    commit: str
    tag: str
    env_var: str

    def archive_url(self) -> str:
        return f"https://github.com/{self.repository}/archive/{self.commit}.tar.gz"


SOURCES: dict[str, Source] = {
    "anima": Source(
        "Inria-Empenn/Anima-Public", "1df7e447d37b9e847ca1e91fa36913a016721d2c", "v4.2", "ANIMA_SRC"
    ),
    "evaluatesegmentation": Source(
        "Visceral-Project/EvaluateSegmentation",
        "4cff08d1b5e23e2ecb95043fb62589058f80b690",
        "",
        "EVALUATESEGMENTATION_SRC",
    ),
    "metricsreloaded": Source(
        "Project-MONAI/MetricsReloaded",
        "cb38dfc0a5ed4fa3bdc559e4960b6e2b93c3b967",
        "",
        "METRICSRELOADED_SRC",
    ),
}
"""The one place that pins each tool (the paper used Anima 4.2 and Metrics Reloaded 0.1.0)."""


class BuildError(RuntimeError):
    """A step failed; the message says which and what to do."""


# ---------------------------------------------------------------- dependencies


def status_says_installed(status: str) -> bool:
    """True if a dpkg status line ("want flag state") has the state "installed".

    dpkg prints e.g. "install ok installed", "unknown ok not-installed" (a package it knows
    of but never installed) or "deinstall ok config-files" (removed, its configuration
    kept): only the third word says whether the package is there, and "not-installed" ends
    in "installed" too.
    """
    words = status.split()
    return len(words) == 3 and words[2] == "installed"


def debian_package_installed(package: str) -> bool:
    """True if dpkg has the package installed; a package dpkg does not know at all makes
    dpkg-query exit non-zero, and counts as missing."""
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return done.returncode == 0 and status_says_installed(done.stdout)


def missing_packages(
    tools: Sequence[str], installed: Callable[[str], bool] = debian_package_installed
) -> list[str]:
    """The Debian packages the chosen tools need and this machine lacks, in a stable order."""
    needed = dict.fromkeys(package for tool in tools for package in DEBIAN_PACKAGES[tool])
    return [package for package in needed if not installed(package)]


def check_dependencies(
    tools: Sequence[str], installed: Callable[[str], bool] | None = None
) -> None:
    """Stop before any work if a package is missing, with the exact line that installs it.

    On a system without dpkg the check is skipped: CMake then names what it cannot find.
    """
    if installed is None:
        if shutil.which("dpkg-query") is None:
            print(
                "note: no dpkg here; not checking build dependencies (Debian names: "
                + " ".join(missing_packages(tools, lambda _: False))
                + ")"
            )
            return
        installed = debian_package_installed
    missing = missing_packages(tools, installed)
    if missing:
        raise BuildError(
            "missing build dependencies; install them with:\n"
            f"  sudo apt-get install -y {' '.join(missing)}"
        )


# ---------------------------------------------------------------- sources


def _digest(path: Path) -> str:
    """What identifies a local copy: a file's content hash, or a folder's path and mtime."""
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return f"{path.resolve()}@{path.stat().st_mtime_ns}"


def source_identity(tool: str, environ=os.environ) -> str:
    """The stamp's words for the source: the pinned commit, and the local copy if one is given."""
    local = environ.get(SOURCES[tool].env_var)
    pinned = f"{SOURCES[tool].repository}@{SOURCES[tool].commit}"
    return pinned if not local else f"{pinned} from {local} ({_digest(Path(local))})"


def _unpack(archive: Path, into: Path) -> Path:
    """Extract an archive into `into`; return the folder holding the sources (an archive of
    one top folder, as GitHub makes them, gives that folder)."""
    into.mkdir(parents=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(into)
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as bundle:
            bundle.extractall(into, filter="data")
    else:
        raise BuildError(f"{archive}: neither a folder nor a .tar.gz / .zip archive")
    entries = list(into.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else into


def fetch_source(tool: str, work: Path = WORK_DIR, environ=os.environ) -> Path:
    """The folder of the tool's sources: the local copy (unpacked if an archive), or the pinned
    commit downloaded from its repository."""
    source = SOURCES[tool]
    local = environ.get(source.env_var)
    target = work / "src" / tool
    if target.exists():
        shutil.rmtree(target)
    if local:
        path = Path(local).expanduser()
        if not path.exists():
            raise BuildError(f"{source.env_var}={local}: no such folder or archive")
        return path.resolve() if path.is_dir() else _unpack(path, target)
    archive = work / "downloads" / f"{tool}-{source.commit}.tar.gz"
    if not archive.is_file():
        archive.parent.mkdir(parents=True, exist_ok=True)
        url = source.archive_url()
        print(f"{tool}: downloading {url}")
        try:
            with (
                urllib.request.urlopen(url, timeout=120) as answer,
                open(f"{archive}.part", "wb") as out,
            ):
                shutil.copyfileobj(answer, out)
        except OSError as error:
            raise BuildError(
                f"{tool}: cannot download {url} ({error}); give a local copy with "
                f"{source.env_var}=<folder or archive>"
            ) from None
        os.replace(f"{archive}.part", archive)
    return _unpack(archive, target)


# ---------------------------------------------------------------- stamps


def stamp_path(tool: str, work: Path = WORK_DIR) -> Path:
    return work / "stamps" / f"{tool}.txt"


def up_to_date(tool: str, identity: str, product_exists: bool, work: Path = WORK_DIR) -> bool:
    """The product is still there and was built from this source.

    Without a local copy named, any build of the pinned commit counts (a program built from a
    copy must not be downloaded again just because the variable is no longer set); with one,
    the stamp must name that very copy.
    """
    stamp = stamp_path(tool, work)
    if not (product_exists and stamp.is_file()):
        return False
    built_from = stamp.read_text().strip()
    return built_from == identity or built_from.startswith(identity + " from ")


def write_stamp(tool: str, identity: str, work: Path = WORK_DIR) -> None:
    stamp = stamp_path(tool, work)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(identity + "\n")


# ---------------------------------------------------------------- builds


def _run(command: Sequence[str], log: Path) -> None:
    """Run a build step with its output in `log`; on failure, the log's tail in the error."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as out:
        out.write(f"$ {' '.join(map(str, command))}\n")
        out.flush()
        done = subprocess.run(list(map(str, command)), stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-30:])
        raise BuildError(
            f"{' '.join(map(str, command[:3]))} ... failed "
            f"(exit {done.returncode}); last lines of {log}:\n{tail}"
        )


def _cmake_program(
    source_dir: Path, build_dir: Path, target: str, options: Sequence[str], log: Path
) -> Path:
    """Configure and build one CMake target; return the program's path in the build tree."""
    _run(["cmake", "-S", source_dir, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", *options], log)
    _run(
        ["cmake", "--build", build_dir, "--target", target, "--parallel", str(os.cpu_count() or 1)],
        log,
    )
    found = [
        path for path in build_dir.rglob(target) if path.is_file() and os.access(path, os.X_OK)
    ]
    if not found:
        raise BuildError(f"the build finished but made no program {target} (see {log})")
    return found[0]


def _install_program(program: Path, name: str, work: Path) -> Path:
    (work / "bin").mkdir(parents=True, exist_ok=True)
    installed = work / "bin" / name
    shutil.copy2(program, installed)
    return installed


def build_anima(source: Path, work: Path) -> None:
    folder = source / "Anima"
    if not (folder / "CMakeLists.txt").is_file():
        raise BuildError(f"{source}: no Anima/CMakeLists.txt (is this Anima-Public?)")
    program = _cmake_program(
        folder,
        work / "build" / "anima",
        "animaSegPerfAnalyzer",
        [
            "-DUSE_VTK=OFF",
            "-DUSE_RPI=OFF",
            "-DUSE_NLOPT=OFF",
            "-DBUILD_ALL_MODULES=OFF",
            "-DBUILD_MODULE_SEGMENTATION=ON",
            "-DBUILD_TESTING=OFF",
        ],
        work / "logs" / "anima.log",
    )
    _install_program(program, "animaSegPerfAnalyzer", work)


def build_evaluatesegmentation(source: Path, work: Path) -> None:
    folder = source / "source"
    if not (folder / "CMakeLists.txt").is_file():
        raise BuildError(f"{source}: no source/CMakeLists.txt (is this EvaluateSegmentation?)")
    program = _cmake_program(
        folder,
        work / "build" / "evaluatesegmentation",
        "EvaluateSegmentation",
        [],
        work / "logs" / "evaluatesegmentation.log",
    )
    _install_program(program, "EvaluateSegmentation", work)


def install_metricsreloaded(source: Path, work: Path) -> None:
    if not (source / "setup.py").is_file() and not (source / "pyproject.toml").is_file():
        raise BuildError(f"{source}: no setup.py or pyproject.toml (is this MetricsReloaded?)")
    log = work / "logs" / "metricsreloaded.log"
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    _run([*pip, "setuptools<81"], log)
    # Copied first: a build writes egg-info and build/ into the source folder, which may be
    # the user's own checkout.
    staged = work / "src" / "metricsreloaded-staged"
    if staged.exists():
        shutil.rmtree(staged)
    shutil.copytree(source, staged, ignore=shutil.ignore_patterns(".git"))
    # Its own dependencies come too (nibabel is the one the study lacks), held to the study's
    # pinned versions by the constraints file.
    _run([*pip, "--no-build-isolation", "-c", CONSTRAINTS, staged], log)


BUILDERS: dict[str, Callable[[Path, Path], None]] = {
    "anima": build_anima,
    "evaluatesegmentation": build_evaluatesegmentation,
    "metricsreloaded": install_metricsreloaded,
}


def product_exists(tool: str, work: Path = WORK_DIR) -> bool:
    """A program tool's build is in place, or a Python tool's package is importable."""
    import importlib.util

    from adapters import REGISTRY

    adapter = REGISTRY[tool]
    if adapter.is_program:
        return (work / "bin" / adapter.binary).is_file()
    return importlib.util.find_spec(adapter.module) is not None


def build(
    tool: str,
    *,
    force: bool = False,
    work: Path = WORK_DIR,
    environ=os.environ,
    builder: Callable[[Path, Path], None] | None = None,
) -> str:
    """Build one tool unless up to date; return what was done ("built" or "up to date")."""
    identity = source_identity(tool, environ)
    if not force and up_to_date(tool, identity, product_exists(tool, work), work):
        return "up to date"
    source = fetch_source(tool, work, environ)
    (builder or BUILDERS[tool])(source, work)
    write_stamp(tool, identity, work)
    return "built"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/build.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "tools", nargs="*", metavar="TOOL", help=f"any of {', '.join(SOURCES)} (default: all three)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.tools) - set(SOURCES))
    if unknown:
        parser.error(f"unknown tools {unknown}; choose from {', '.join(SOURCES)}")
    tools = arguments.tools or list(SOURCES)
    try:
        check_dependencies(tools)
        for tool in tools:
            source = SOURCES[tool]
            pinned = f"{source.repository} {source.tag or source.commit[:12]}".strip()
            started = time.perf_counter()
            done = build(tool, force=arguments.force)
            print(
                f"{tool}: {done} ({pinned}, commit {source.commit}; "
                f"{time.perf_counter() - started:.0f} s)"
            )
    except BuildError as error:
        parser.exit(2, f"error: {error}\n")
    print(f"programs in {BUILT_TOOLS_DIR}; `python -m adapters list` shows what is usable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
