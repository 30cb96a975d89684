"""The scripts (make bench, the recall evaluation, the packaging tools) stand on src/ alone: none imports from tests/,
so a fixture or a fake moved in the test suite cannot change what a script measures or builds."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import SERVE_ROOT

SCRIPTS = SERVE_ROOT / "scripts"


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports by absolute name, at any depth (a function's own imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            found.add(node.module)
    return found


def test_no_script_imports_from_the_test_suite() -> None:
    scripts = sorted(SCRIPTS.rglob("*.py"))
    offending = {
        str(path.relative_to(SERVE_ROOT)): sorted(
            name for name in imported_modules(path) if name.split(".")[0] == "tests"
        )
        for path in scripts
    }

    assert scripts
    assert {path: names for path, names in offending.items() if names} == {}
