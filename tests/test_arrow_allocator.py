"""The workflow's parquet reads and writes run on the system allocator (study/__init__.py says
why: with pyarrow's default a process aborts now and then at exit, failing a finished job)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "workflow/scripts").glob("*.py"))


def backend_after(code: str) -> str:
    """Arrow's allocator in a fresh process after `code`, without the variable set outside."""
    probe = f"{code}\nimport pyarrow\nprint(pyarrow.default_memory_pool().backend_name)"
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environment, check=True
    )
    return done.stdout.strip()


def test_importing_the_study_first_puts_arrow_on_the_system_allocator():
    assert backend_after("import study\nimport pandas") == "system"
    # The variable is read when pyarrow loads: imported after pandas, the study is too late.
    assert backend_after("import pandas\nimport study") != "system"


def first_modules(script: Path) -> list[str]:
    """The top-level modules a workflow script imports, in order."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
    return names


def test_every_workflow_script_imports_the_study_before_pandas():
    late = []
    for script in SCRIPTS:
        modules = [m for m in first_modules(script) if m != "__future__"]
        study_at = modules.index("study") if "study" in modules else len(modules)
        if "pandas" in modules and modules.index("pandas") < study_at:
            late.append(script.name)
    assert SCRIPTS and late == []
