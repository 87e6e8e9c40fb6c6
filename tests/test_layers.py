"""The packages' imports point one way: maskio at the bottom, then the reference, then the
adapters, then the study. The reference and the adapters can then be used (and tested)
without the study around them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAY_IMPORT = {
    "maskio": set(),
    "reference": {"maskio"},
    "adapters": {"maskio", "reference"},
    "study": {"maskio", "reference", "adapters"},
}
"""The project's packages each package may import (besides itself and third-party code)."""


def project_imports(package: str) -> dict[str, set[str]]:
    """Module file -> the project packages it imports, at any depth of its code."""
    found = {}
    for path in sorted((REPO / package).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(REPO))] = names & set(MAY_IMPORT)
    return found


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_imports_point_down_the_layers(package):
    allowed = MAY_IMPORT[package] | {package}
    wrong = {module: sorted(names - allowed)
             for module, names in project_imports(package).items() if names - allowed}
    assert not wrong, f"{package} may import only {sorted(allowed)}: {wrong}"


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "late.py").write_text("def f():\n    from study import x\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert project_imports("reference") == {"reference/late.py": {"study"}}


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
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert [float(v) for v in done.stdout.split()] == [1.0, 1.0]
