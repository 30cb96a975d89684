"""src/ reaches into a dependency's private API only where core.reaches lists it, and only on the versions each
reach was checked against: an upgrade, or a new reach, fails here until someone checks it (or finds the public way).

The scan is a heuristic over the syntax: a private name (one `_`, not a dunder) of code that is not ours, imported
(`from pydantic._internal._config import x`, `import fastapi._compat`, `from x import _y`), read or written as an
attribute that no module of ours defines (`server._lowlevel_server`), or looked up by name (`getattr(x, "_y")`,
`X.__dict__.get("_y")`, `vars(x)["_y"]`); and a write to an attribute of an imported dependency
(`fastapi.encoders.check = ...`, `setattr(TypeAdapter, name, ...)`), private or not. Our own `self._x`, `cls._x` and
the private names our modules define are ours.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

import pytest

from core.reaches import REACHES
from tests.conftest import SERVE_ROOT

SRC = SERVE_ROOT / "src"
OURS = frozenset({"core", "adapters", "handlers", "local"})
REFLECTIVE = frozenset({"getattr", "setattr", "hasattr", "delattr"})
OWN = frozenset({"self", "cls"})


def is_private(name: object) -> bool:
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def parsed() -> dict[str, ast.Module]:
    return {module_name(path): ast.parse(path.read_text(), filename=str(path)) for path in sorted(SRC.rglob("*.py"))}


def defined_by_us(trees: dict[str, ast.Module]) -> frozenset[str]:
    """Every name our modules define: functions, classes, assigned names and attributes of self or cls, parameters,
    import aliases."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and root(node) in OWN:
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
    return frozenset(names)


def root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def imported_dependencies(tree: ast.Module) -> frozenset[str]:
    """The names a module binds to a dependency's module or object by an import."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(
                (alias.asname or alias.name).split(".")[0]
                for alias in node.names
                if alias.name.split(".")[0] not in OURS
            )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] not in OURS:
            names.update(alias.asname or alias.name for alias in node.names)
    return frozenset(names)


def import_reaches(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [
            a.name for a in node.names if a.name.split(".")[0] not in OURS and any(map(is_private, a.name.split(".")))
        ]
    module = node.module or ""
    if node.level or module.split(".")[0] in OURS:
        return []
    if any(map(is_private, module.split("."))):
        return [module]
    return [f"{module}.{alias.name}" for alias in node.names if is_private(alias.name)]


def looked_up(node: ast.Call | ast.Subscript) -> object:
    """The name a getattr-like call, `X.__dict__.get(name)`, `X.__dict__[name]` or `vars(X)[name]` looks up."""
    if isinstance(node, ast.Subscript):
        read = node.value
        dict_like = (isinstance(read, ast.Attribute) and read.attr == "__dict__") or (
            isinstance(read, ast.Call) and isinstance(read.func, ast.Name) and read.func.id == "vars"
        )
        return node.slice.value if dict_like and isinstance(node.slice, ast.Constant) else None
    func = node.func
    reflective = isinstance(func, ast.Name) and func.id in REFLECTIVE
    holder = func.value if isinstance(func, ast.Attribute) and func.attr == "get" else None
    from_dict = isinstance(holder, ast.Attribute) and holder.attr == "__dict__"
    index = 1 if reflective else 0
    if not (reflective or from_dict) or len(node.args) <= index:
        return None
    name = node.args[index]
    return name.value if isinstance(name, ast.Constant) else None


def patched(node: ast.AST, dependencies: frozenset[str]) -> str | None:
    """`dependency.attr = ...` or `setattr(dependency..., ...)`: a write into a dependency's module or class."""
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and root(target) in dependencies:
                return f"patch {ast.unparse(target)}"
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name)):
        return None
    if node.func.id in ("setattr", "delattr") and root(node.args[0]) in dependencies:
        return f"patch {ast.unparse(node.args[0])}"
    return None


def reaches_of(tree: ast.Module, ours: frozenset[str]) -> set[str]:
    dependencies = imported_dependencies(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.update(import_reaches(node))
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr not in ours:
            if root(node) not in OWN:
                found.add(node.attr)
        elif isinstance(node, ast.Call | ast.Subscript):
            name = looked_up(node)
            if is_private(name) and name not in ours:
                found.add(str(name))
        if (write := patched(node, dependencies)) is not None:
            found.add(write)
    return found


@functools.cache
def scanned() -> dict[str, set[str]]:
    trees = parsed()
    ours = defined_by_us(trees)
    return {module: found for module, tree in trees.items() if (found := reaches_of(tree, ours))}


def test_every_private_reach_into_a_dependency_is_listed_in_the_registry() -> None:
    listed: dict[str, set[str]] = defaultdict(set)
    for reach in REACHES:
        listed[reach.module].update(reach.names)

    unlisted = {module: sorted(found - listed[module]) for module, found in scanned().items() if found - listed[module]}

    assert unlisted == {}, "list each in core.reaches (with the versions checked) or use a public way instead"


def test_every_listed_reach_is_still_made_where_the_registry_says() -> None:
    found = scanned()
    stale = {reach.module: sorted(set(reach.names) - found.get(reach.module, set())) for reach in REACHES}

    assert {module: names for module, names in stale.items() if names} == {}
    assert all(reach.module in parsed() for reach in REACHES)


@pytest.mark.parametrize("reach", REACHES, ids=lambda reach: reach.module)
def test_the_installed_dependencies_are_the_versions_each_reach_was_checked_against(reach) -> None:
    installed = {package: version(package) for package in reach.checked_with}

    assert installed == reach.checked_with, (
        f"{reach.module} reaches into private API ({reach.why}), checked against {reach.checked_with}: check it "
        "again on the installed versions (or find a public way), then update core.reaches"
    )


def test_the_scan_finds_each_kind_of_reach_it_names() -> None:
    tree = ast.parse(
        "import fastapi._compat\n"
        "from pydantic._internal._config import config_defaults\n"
        "from mcp import _private\n"
        "from pydantic import TypeAdapter\n"
        "import fastapi.encoders\n"
        "server._lowlevel_server.handlers\n"
        "TypeAdapter.__dict__.get('_defer_build')\n"
        "getattr(TypeAdapter, '_core_schema')\n"
        "fastapi.encoders.check = None\n"
        "setattr(TypeAdapter, name, None)\n"
        "self._own, cls._own_too, ours._helper\n"
    )

    assert reaches_of(tree, frozenset({"_helper"})) == {
        "fastapi._compat",
        "pydantic._internal._config",
        "mcp._private",
        "_lowlevel_server",
        "_defer_build",
        "_core_schema",
        "patch fastapi.encoders.check",
        "patch TypeAdapter",
    }
