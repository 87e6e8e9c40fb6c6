"""`make test-fast` covers every module: each module of the project's packages is imported by a
test that runs in the fast set (one not marked slow or cluster), and each workflow script's
imports resolve.

The check is static and cheap (it parses the test files; it runs nothing). A module counts as
covered when a fast test imports it: an import statement at the top of a test file that has a
fast test, in a fast test function, in a fixture or helper of that file, in a test helper module
(tests/*.py without `test_`) or conftest; a module named in code a fast test runs as a child
process (a code string, or `-m package`); a name imported from a package's `__init__` counts for
the module it comes from. A few modules are reached only through another: REACHED_THROUGH names
the covered module that imports each and how the fast tests run it, and the check holds it to
that import. The workflow scripts need Snakemake's `snakemake` object to run, so only the
workflow runs (slow) run them; the fast set checks that every name they import still exists.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("vocabulary", "maskio", "reference", "adapters", "study")

REACHED_THROUGH: dict[str, tuple[str, str]] = {
    "maskio.cli": ("reference.__main__", "its arguments, run as `python -m reference`"),
}
"""module -> (the covered module that imports it, what the fast tests run of it)."""

CONTAINERS: dict[str, str] = {
    "adapters.registry": "tests/test_adapters.py runs every registered tool (REGISTRY)",
}
"""A covered module whose imports of its own package all count as covered, and why."""


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path = REPO, packages: Iterable[str] = PACKAGES) -> set[str]:
    return {
        module_name(root, path)
        for package in packages
        for path in (root / package).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def _module_path(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_names(tree: ast.AST, fast_tests: set[str] | None = None) -> set[str]:
    """Dotted names imported in `tree` (`from a import b` gives a and a.b), outside the test
    functions that are not in `fast_tests` (all count when it is None); plus the imports of
    code strings and `-m package` arguments (package.__main__)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                slow = fast_tests is not None and child.name.startswith("test")
                if slow and child.name not in fast_tests:
                    continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.add(child.module)
                found.update(f"{child.module}.{alias.name}" for alias in child.names)
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                if "import " in child.value:
                    try:
                        found.update(imported_names(ast.parse(child.value)))
                    except SyntaxError:
                        pass
            elif isinstance(child, ast.List | ast.Tuple):
                words = [e.value if isinstance(e, ast.Constant) else None for e in child.elts]
                found.update(
                    f"{package}.__main__"
                    for flag, package in zip(words, words[1:], strict=False)
                    if flag == "-m" and isinstance(package, str)
                )
            visit(child)

    visit(tree)
    return found


def _imports_of(root: Path, module: str) -> set[str]:
    path = _module_path(root, module)
    return imported_names(ast.parse(path.read_text(encoding="utf-8"))) if path else set()


def covered_modules(
    root: Path,
    fast: Mapping[Path, set[str]],
    modules: set[str],
    reached_through: Mapping[str, tuple[str, str]] = REACHED_THROUGH,
    containers: Mapping[str, str] = CONTAINERS,
) -> set[str]:
    """The modules of `modules` that the fast tests (test file -> its fast test functions)
    import, by the rules of the module docstring."""
    tests = root / "tests"
    todo = [(path, names) for path, names in fast.items()]
    todo += [(path, None) for path in [tests / "conftest.py"] if path.is_file()]
    seen: set[Path] = {path for path, _ in todo}
    named: set[str] = set()
    while todo:
        path, names = todo.pop()
        for name in imported_names(ast.parse(path.read_text(encoding="utf-8")), names):
            named.add(name)
            helper = tests / f"{name.split('.')[0]}.py"
            if helper.is_file() and helper not in seen:
                seen.add(helper)
                todo.append((helper, None))
    covered: set[str] = set()
    for name in named:
        parts = name.split(".")
        covered.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        package, _, attribute = name.rpartition(".")
        if package in modules and _module_path(root, package).name == "__init__.py":
            # a name the package's __init__ imports counts for the module it comes from
            for source in _imports_of(root, package):
                if source.rpartition(".")[2] == attribute:
                    covered.add(source.rpartition(".")[0])
    covered &= modules
    for container in containers:
        if container in covered:
            package = container.split(".")[0]
            covered |= {m for m in _imports_of(root, container) if m.split(".")[0] == package}
    for module, (via, _) in reached_through.items():
        if via in covered and module in _imports_of(root, via):
            covered.add(module)
    return covered & modules


def uncovered_modules(root: Path, fast: Mapping[Path, set[str]], **rules) -> list[str]:
    modules = project_modules(root)
    return sorted(modules - covered_modules(root, fast, modules, **rules))


def test_every_module_is_imported_by_a_fast_test(fast_tests):
    if fast_tests is None:
        pytest.skip("needs the whole tests/ folder collected (it reads which tests are fast)")
    missing = uncovered_modules(REPO, fast_tests)
    assert not missing, (
        f"no test of make test-fast imports {missing}: add a fast test that does "
        "(or, if a fast test runs it through another module, a line in REACHED_THROUGH)"
    )


def test_the_declared_paths_still_hold():
    """Each REACHED_THROUGH entry names a module that imports it, and each container exists."""
    modules = project_modules()
    for module, (via, _) in REACHED_THROUGH.items():
        assert module in modules and module in _imports_of(REPO, via), (module, via)
    assert set(CONTAINERS) <= modules


@pytest.mark.parametrize(
    "script", sorted((REPO / "workflow/scripts").glob("*.py")), ids=lambda path: path.stem
)
def test_workflow_script_imports_resolve(script):
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] in PACKAGES:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or _module_path(
                    REPO, f"{node.module}.{alias.name}"
                ), f"{script.name}: {node.module} has no {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    importlib.import_module(alias.name)


def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_check_catches_a_module_no_fast_test_imports(tmp_path):
    """A module imported only by a slow test file, or only inside a slow test of a fast file,
    or only by a module that does not import it as declared, is reported."""
    _write(
        tmp_path,
        {
            "study/__init__.py": "from study.api import run\n",
            "study/api.py": "def run(): pass\n",
            "study/used.py": "",
            "study/inside_slow.py": "",
            "study/only_slow.py": "",
            "study/declared.py": "",
            "study/child.py": "",
            "tests/helper.py": "import study.used\n",
            "tests/test_fast.py": (
                "import helper\nfrom study import run\n\n"
                "def test_fast():\n    assert [sys.executable, '-m', 'study']\n\n"
                "def test_slow():\n    import study.inside_slow\n\n"
                "CHILD = 'from study.child import x'\n"
            ),
            "tests/test_slow.py": "import study.only_slow\nimport study.declared\n",
        },
    )
    fast = {tmp_path / "tests/test_fast.py": {"test_fast"}}
    rules = {"reached_through": {"study.declared": ("study.api", "")}, "containers": {}}
    assert uncovered_modules(tmp_path, fast, **rules) == [
        "study.declared",
        "study.inside_slow",
        "study.only_slow",
    ]
    (tmp_path / "study/__main__.py").write_text("")
    assert "study.__main__" not in uncovered_modules(tmp_path, fast, **rules)
    (tmp_path / "study/api.py").write_text("import study.declared\n\ndef run(): pass\n")
    assert uncovered_modules(tmp_path, fast, **rules) == ["study.inside_slow", "study.only_slow"]
