"""`make tools` (tools/build.py) without the network and without the three tools: dependency
check, local and downloaded sources, stamps, and a real CMake build of a tiny project."""

from __future__ import annotations

import importlib.util
import io
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("tools_build", REPO / "tools" / "build.py")
build_tools = importlib.util.module_from_spec(_spec)
sys.modules["tools_build"] = build_tools  # dataclasses look their module up there
_spec.loader.exec_module(build_tools)


def test_programs_land_where_the_adapters_look():
    from adapters import REGISTRY
    from adapters.base import BUILT_TOOLS_DIR

    assert build_tools.WORK_DIR / "bin" == BUILT_TOOLS_DIR
    assert set(build_tools.SOURCES) == set(build_tools.DEBIAN_PACKAGES) == set(build_tools.BUILDERS)
    assert set(build_tools.SOURCES) <= set(REGISTRY)


def test_a_missing_package_stops_everything_with_the_install_line(monkeypatch, capsys):
    monkeypatch.setattr(build_tools.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(
        build_tools,
        "debian_package_installed",
        lambda package: package not in {"libtclap-dev", "libfftw3-dev"},
    )
    monkeypatch.setattr(build_tools, "build", lambda *a, **k: pytest.fail("built anyway"))
    with pytest.raises(SystemExit) as stopped:
        build_tools.main([])
    assert stopped.value.code == 2
    said = capsys.readouterr().err
    assert "sudo apt-get install -y libtclap-dev libfftw3-dev" in said
    # EvaluateSegmentation needs TCLAP but not FFTW.
    assert build_tools.missing_packages(
        ["evaluatesegmentation"], lambda p: p != "libtclap-dev"
    ) == ["libtclap-dev"]


# What dpkg-query -W -f='${Status}' really answers (return code, stdout, stderr).
DPKG_ANSWERS = {
    "cmake": (0, "install ok installed", ""),
    "g++": (0, "install ok installed", ""),
    "make": (0, "hold ok installed", ""),
    "libboost-dev": (0, "install ok installed", ""),
    "libinsighttoolkit5-dev": (0, "unknown ok not-installed", ""),
    "libtclap-dev": (0, "deinstall ok config-files", ""),
    "libfftw3-dev": (0, "install ok half-configured", ""),
    "libtinyxml2-dev": (1, "", "dpkg-query: no packages found matching libtinyxml2-dev\n"),
}


def test_every_package_dpkg_does_not_have_installed_is_named(monkeypatch, capsys):
    def dpkg_query(command, **kwargs):
        assert command[:3] == ["dpkg-query", "-W", "-f=${Status}"]
        code, out, err = DPKG_ANSWERS[command[3]]
        return build_tools.subprocess.CompletedProcess(command, code, out, err)

    monkeypatch.setattr(build_tools.subprocess, "run", dpkg_query)
    monkeypatch.setattr(build_tools.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(build_tools, "build", lambda *a, **k: pytest.fail("built anyway"))
    with pytest.raises(SystemExit):
        build_tools.main(["anima"])
    said = capsys.readouterr().err
    missing = "libinsighttoolkit5-dev libtclap-dev libfftw3-dev libtinyxml2-dev"
    assert f"sudo apt-get install -y {missing}\n" in said + "\n"


def test_unknown_tools_are_named(capsys):
    with pytest.raises(SystemExit) as stopped:
        build_tools.main(["nosuchtool"])
    assert stopped.value.code == 2 and "unknown tools ['nosuchtool']" in capsys.readouterr().err


def source_tree(root: Path) -> Path:
    (root / "source").mkdir(parents=True)
    (root / "source" / "CMakeLists.txt").write_text("# stand-in\n")
    return root


@pytest.mark.parametrize("form", ["folder", "tar.gz", "zip"])
def test_a_local_copy_is_used_as_given(form, tmp_path):
    tree = source_tree(tmp_path / "copy" / "EvaluateSegmentation-main")
    if form == "folder":
        given = tree
    elif form == "tar.gz":
        given = tmp_path / "copy.tar.gz"
        with tarfile.open(given, "w:gz") as bundle:
            bundle.add(tree, arcname=tree.name)
    else:
        given = tmp_path / "copy.zip"
        with zipfile.ZipFile(given, "w") as bundle:
            bundle.write(tree / "source" / "CMakeLists.txt", f"{tree.name}/source/CMakeLists.txt")
    environ = {"EVALUATESEGMENTATION_SRC": str(given)}
    found = build_tools.fetch_source("evaluatesegmentation", tmp_path / "work", environ)
    assert (found / "source" / "CMakeLists.txt").read_text() == "# stand-in\n"
    assert str(given) in build_tools.source_identity("evaluatesegmentation", environ)


def test_a_missing_local_copy_is_named(tmp_path):
    with pytest.raises(build_tools.BuildError, match="ANIMA_SRC=.*nowhere: no such folder"):
        build_tools.fetch_source("anima", tmp_path, {"ANIMA_SRC": str(tmp_path / "nowhere")})


def test_the_pinned_commit_is_downloaded_once(tmp_path, monkeypatch):
    tree = source_tree(tmp_path / "EvaluateSegmentation-4cff08d")
    payload = io.BytesIO()
    with tarfile.open(fileobj=payload, mode="w:gz") as bundle:
        bundle.add(tree, arcname=tree.name)
    asked = []

    def urlopen(url, timeout):
        asked.append(url)
        return io.BytesIO(payload.getvalue())

    monkeypatch.setattr(build_tools.urllib.request, "urlopen", urlopen)
    for _ in range(2):
        found = build_tools.fetch_source("evaluatesegmentation", tmp_path / "work", {})
        assert (found / "source" / "CMakeLists.txt").is_file()
    commit = build_tools.SOURCES["evaluatesegmentation"].commit
    assert asked == [
        f"https://github.com/Visceral-Project/EvaluateSegmentation/archive/{commit}.tar.gz"
    ]


def test_a_second_run_with_the_same_source_is_a_no_op(tmp_path):
    tree = source_tree(tmp_path / "copy")
    environ = {"EVALUATESEGMENTATION_SRC": str(tree)}
    calls = []

    def fake_builder(source: Path, work: Path) -> None:
        calls.append(source)
        (work / "bin").mkdir(parents=True, exist_ok=True)
        (work / "bin" / "EvaluateSegmentation").write_text("#!/bin/sh\n")

    run = dict(work=tmp_path / "work", environ=environ, builder=fake_builder)
    assert build_tools.build("evaluatesegmentation", **run) == "built"
    assert build_tools.build("evaluatesegmentation", **run) == "up to date"
    assert build_tools.build("evaluatesegmentation", force=True, **run) == "built"
    (tmp_path / "work" / "bin" / "EvaluateSegmentation").unlink()  # product gone: rebuild
    assert build_tools.build("evaluatesegmentation", **run) == "built"
    other = source_tree(tmp_path / "other")  # another source: rebuild
    assert (
        build_tools.build(
            "evaluatesegmentation", **{**run, "environ": {"EVALUATESEGMENTATION_SRC": str(other)}}
        )
        == "built"
    )
    # Built from a copy of the pinned commit: no download once the variable is unset ...
    assert build_tools.build("evaluatesegmentation", **{**run, "environ": {}}) == "up to date"
    assert len(calls) == 4


def test_a_download_is_not_taken_for_a_named_copy(tmp_path):
    """... but a build from the download does not stand for a copy the user names."""
    calls = []

    def fake_builder(source: Path, work: Path) -> None:
        calls.append(source)
        (work / "bin").mkdir(parents=True, exist_ok=True)
        (work / "bin" / "EvaluateSegmentation").write_text("#!/bin/sh\n")

    work = tmp_path / "work"
    build_tools.write_stamp(
        "evaluatesegmentation", build_tools.source_identity("evaluatesegmentation", {}), work
    )
    fake_builder(tmp_path, work)  # the download's build
    copy = {"EVALUATESEGMENTATION_SRC": str(source_tree(tmp_path / "copy"))}
    assert (
        build_tools.build("evaluatesegmentation", work=work, environ={}, builder=fake_builder)
        == "up to date"
    )
    assert (
        build_tools.build("evaluatesegmentation", work=work, environ=copy, builder=fake_builder)
        == "built"
    )
    assert calls == [tmp_path, tmp_path / "copy"]


@pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("c++") is None,
    reason="cmake or a C++ compiler is not installed",
)
def test_cmake_builds_one_target_and_finds_the_program(tmp_path):
    project = tmp_path / "hello"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(hello CXX)\n"
        "add_executable(hello hello.cxx)\nadd_executable(other hello.cxx)\n"
    )
    (project / "hello.cxx").write_text("int main() { return 0; }\n")
    program = build_tools._cmake_program(
        project, tmp_path / "build", "hello", [], tmp_path / "log.txt"
    )
    assert program.name == "hello" and program.is_file()
    assert not list((tmp_path / "build").rglob("other"))  # only the asked target
    with pytest.raises(build_tools.BuildError, match="last lines of"):
        build_tools._cmake_program(project, tmp_path / "build", "missing", [], tmp_path / "log.txt")
