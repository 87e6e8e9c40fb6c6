"""The project's imports point one way, down the data flow: the metric vocabulary at the
bottom, then maskio, the reference, the adapters, the study's shared leaves (record schema,
organ table), and the study's stages in pipeline order (dataset -> scoring -> analysis), with
the pipeline (configuration, file layout, plans) and the command line on top. Each layer can
then be used (and tested) without the layers above it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS: tuple[tuple[str, ...], ...] = (
    ("vocabulary",),
    ("maskio",),
    ("reference",),
    ("adapters",),
    ("study", "study.records", "study.oars"),  # "study": the package's own __init__
    ("study.dataset",),
    ("study.scoring",),
    ("study.analysis",),
    ("study.pipeline", "study.__main__"),
)
"""Lowest first: a module may import its own layer and the layers below it."""

PACKAGES = ("vocabulary", "maskio", "reference", "adapters", "study")


def layer_of(module: str) -> int | None:
    """Index in LAYERS of a dotted module name, by its longest listed prefix (None: none)."""
    matches = [
        (len(name), index)
        for index, layer in enumerate(LAYERS)
        for name in layer
        if module == name or module.startswith(name + ".")
    ]
    return max(matches)[1] if matches else None


def imported_modules(path: Path) -> set[str]:
    """Project modules a file imports, at any depth of its code, as dotted names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from study.analysis import statistics` imports study.analysis.statistics
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in names if name.split(".")[0] in PACKAGES}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def upward_imports(root: Path = REPO) -> dict[str, list[str]]:
    """Module -> the project modules it imports from a higher layer."""
    wrong = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = module_name(path, root)
            own = layer_of(name)
            assert own is not None, f"{name} is in no layer of LAYERS: add it"
            above = sorted(
                imported
                for imported in imported_modules(path)
                if (layer := layer_of(imported)) is not None and layer > own
            )
            if above:
                wrong[name] = above
    return wrong


def test_imports_point_down_the_layers():
    assert not upward_imports(), f"imports against LAYERS (lowest first): {upward_imports()}"


@pytest.mark.parametrize(
    "late, imported",
    [
        ("reference/late.py", "from study.dataset import meshes"),
        ("study/dataset/late.py", "from study.analysis.statistics import deltas"),
        ("study/scoring/late.py", "import study.pipeline.layout"),
    ],
)
def test_the_checker_sees_an_upward_import(tmp_path, late, imported):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    path = tmp_path / late
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"def f():\n    {imported}\n")
    assert list(upward_imports(tmp_path)) == [module_name(path, tmp_path)]


def test_the_reference_and_the_adapters_run_without_the_study():
    """With `study` made unimportable, the lower layers still compute."""
    code = (
        "import sys; sys.modules['study'] = None\n"
        "import numpy as np\n"
        "from reference import compute_metrics\n"
        "from adapters import invoke\n"
        "a = np.zeros((12, 12, 12), bool); a[3:8, 3:8, 3:8] = True\n"
        "b = np.roll(a, 1, axis=0)\n"
        "print(compute_metrics(a, b, (1, 1, 1), metrics=['HD'])['HD'],"
        " invoke('simpleitk', a, b, (1, 1, 1), metrics=['HD']).values['HD'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert [float(v) for v in done.stdout.split()] == [1.0, 1.0]


ADAPTER_LAYERS: tuple[tuple[str, ...], ...] = (
    ("adapters.environments",),
    ("adapters.base",),
    ("adapters.registry",),  # and every tool's module (`adapter_layer`)
    ("adapters.calls",),
    ("adapters.worker",),
    ("adapters.harness",),
    ("adapters.compare",),
    ("adapters", "adapters.__main__"),
)
"""The adapters' own modules, lowest first: each may import its layer and those below it, at
any depth, so no import inside a function can hide a circle."""


def adapter_layer(module: str) -> int:
    """Index in ADAPTER_LAYERS of an adapters module; a tool's module sits with the registry."""
    for index, layer in enumerate(ADAPTER_LAYERS):
        if module in layer:
            return index
    return 2


def modules_imported(path: Path, root: Path, package: str) -> set[str]:
    """The modules of `package` a file imports, at any depth: `from adapters import worker` is
    the module adapters.worker (a module file or a subpackage), `from adapters import REGISTRY`
    the package itself."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                where = root / Path(*submodule.split("."))
                is_module = where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()
                names.add(submodule if is_module else node.module)
    return {name for name in names if name == package or name.startswith(package + ".")}


def adapters_imported(path: Path, root: Path) -> set[str]:
    """The adapters modules a file imports."""
    return modules_imported(path, root, "adapters")


def adapter_upward_imports(root: Path = REPO) -> dict[str, list[str]]:
    """Adapters module -> the adapters modules it imports from a higher layer."""
    wrong = {}
    for path in sorted((root / "adapters").glob("*.py")):
        name = module_name(path, root)
        above = sorted(
            imported
            for imported in adapters_imported(path, root)
            if adapter_layer(imported) > adapter_layer(name)
        )
        if above:
            wrong[name] = above
    return wrong


def test_the_adapters_layers_have_no_circle():
    """environments <- base <- the tools and the registry <- calls <- worker <- harness: the
    modules read top-down, and none imports one above it, not even inside a function."""
    assert not adapter_upward_imports(), f"against ADAPTER_LAYERS: {adapter_upward_imports()}"


@pytest.mark.parametrize(
    "module, imported",
    [
        ("base", "from adapters.harness import describe"),
        ("calls", "from adapters import worker"),
        ("harness", "from adapters import REGISTRY"),
    ],
)
def test_the_checker_sees_a_circle_in_the_adapters(tmp_path, module, imported):
    (tmp_path / "adapters").mkdir()
    for name in ("environments", "base", "registry", "calls", "worker", "harness", "__init__"):
        (tmp_path / "adapters" / f"{name}.py").write_text("")
    (tmp_path / "adapters" / f"{module}.py").write_text(f"def f():\n    {imported}\n")
    assert list(adapter_upward_imports(tmp_path)) == [f"adapters.{module}"]


ANALYSIS_LAYERS: tuple[tuple[str, ...], ...] = (
    # What every layer above reads: the typed settings, tool names and number formats, and
    # the paper's published numbers.
    ("study.analysis.settings", "study.analysis.labels", "study.analysis.paper"),
    ("study.analysis.read",),  # the run's files, read in one place
    # Derive: Δ, significance, timing and the edge-case comparison ...
    (
        "study.analysis.delta",
        "study.analysis.significance",
        "study.analysis.timing",
        "study.analysis.edge_comparison",
    ),
    ("study.analysis.advice", "study.analysis.claims"),  # ... and what they advise or check
    ("study.analysis.verdicts",),  # the verdict rule applied to the advice's measurements
    # Render: a table's and a page's renderings, then the paper's tables and figures
    ("study.analysis.rendering", "study.analysis.document"),
    (
        "study.analysis.tables",
        "study.analysis.figures",
        "study.analysis.observers",
        "study.analysis.environments",
    ),
    # Sentences of one tool, and the verdict table in words, shared by the pages
    ("study.analysis.phrases", "study.analysis.verdict_text"),
    # The pages: each only beside the others, none importing another
    ("study.analysis.findings",),
    ("study.analysis.cards",),
    ("study.analysis.published",),
    ("study.analysis",),  # the package's own __init__
)
"""The analysis's own modules, lowest first: read, derive, render. Each may import its own
layer and those below it, at any depth (an import inside a function counts)."""

PAGES = ("study.analysis.findings", "study.analysis.cards", "study.analysis.published")
"""The pages stand side by side: none may import another, whatever their order above."""


def analysis_layer(module: str) -> int:
    """Index in ANALYSIS_LAYERS of a study.analysis module (a subpackage's module counts as
    the subpackage: study.analysis.paper.x is study.analysis.paper)."""
    matches = [
        (len(name), index)
        for index, layer in enumerate(ANALYSIS_LAYERS)
        for name in layer
        if module == name or module.startswith(name + ".")
    ]
    assert matches, f"{module} is in no layer of ANALYSIS_LAYERS: add it"
    return max(matches)[1]


def analysis_imported(path: Path, root: Path) -> set[str]:
    """The study.analysis modules a file imports (`from study.analysis import delta` is the
    module study.analysis.delta)."""
    return modules_imported(path, root, "study.analysis") - {"study.analysis"}


def analysis_upward_imports(root: Path = REPO) -> dict[str, list[str]]:
    """study.analysis module -> the study.analysis modules it imports against the layers: from
    a higher layer, or one page from another."""
    wrong = {}
    for path in sorted((root / "study" / "analysis").rglob("*.py")):
        name = module_name(path, root)
        own = analysis_layer(name)
        against = sorted(
            imported
            for imported in analysis_imported(path, root)
            if analysis_layer(imported) > own
            or (imported in PAGES and name in PAGES and imported != name)
        )
        if against:
            wrong[name] = against
    return wrong


def test_the_analysis_reads_then_derives_then_renders():
    """settings and labels <- read <- delta, significance, timing <- advice, claims <-
    rendering <- tables, figures <- the pages: no module imports one above it."""
    assert not analysis_upward_imports(), f"against ANALYSIS_LAYERS: {analysis_upward_imports()}"


@pytest.mark.parametrize(
    "module, imported",
    [
        ("read", "from study.analysis.delta import deltas"),
        ("delta", "from study.analysis import tables"),
        ("labels", "import study.analysis.read"),
        ("cards", "from study.analysis import findings"),
    ],
)
def test_the_checker_sees_an_import_against_the_analysis_layers(tmp_path, module, imported):
    folder = tmp_path / "study" / "analysis"
    folder.mkdir(parents=True)
    for name in ("__init__", "read", "delta", "tables", "labels", "cards", "findings"):
        (folder / f"{name}.py").write_text("")
    (folder / f"{module}.py").write_text(f"def f():\n    {imported}\n")
    assert list(analysis_upward_imports(tmp_path)) == [f"study.analysis.{module}"]


def import_circles(root: Path = REPO, package: str = "reference") -> list[list[str]]:
    """Circles among a package's modules, imports at any depth counted (an import under
    TYPE_CHECKING or inside a function closes a circle as surely as one at the top)."""
    graph = {
        module_name(path, root): modules_imported(path, root, package) - {package}
        for path in sorted((root / package).glob("*.py"))
    }
    circles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            circles.append(path[path.index(module) :] + [module])
            return
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, [*path, module])
        done.add(module)

    for module in graph:
        visit(module, [])
    return circles


def test_the_reference_has_no_import_circle():
    """biou and within_tau imported each other (DenseGrid one way, within_tau the other);
    the grid is now dense_grid's, and no module of reference/ reaches itself again."""
    assert import_circles() == []


def test_the_circle_checker_sees_a_circle(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "__init__.py").write_text("")
    (tmp_path / "reference" / "a.py").write_text("from reference.b import x\n")
    (tmp_path / "reference" / "b.py").write_text("def f():\n    from reference import a\n")
    assert import_circles(tmp_path) == [["reference.a", "reference.b", "reference.a"]]
