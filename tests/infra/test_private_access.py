"""Tests reach what they check through fixtures and public seams, never through another object's private attributes
(`service._repository`, `vars(keys)["_cache"]`, a module's `_helper`): a test that does breaks on a rename that
changes no behaviour, and checks how a thing is built rather than what it does. An object's own `self._name` is its
own business."""

from __future__ import annotations

import ast

from tests.conftest import SERVE_ROOT

TESTS = SERVE_ROOT / "tests"
REFLECTIVE = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def is_private(name: object) -> bool:
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__")


def named(node: ast.AST, names: frozenset[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def reflects_private(call: ast.Call) -> bool:
    """getattr(x, "_name") and its kin, monkeypatch.setattr(x, "_name", ...) or monkeypatch.setattr("module._name")."""
    func = call.func
    if not (named(func, REFLECTIVE) or (isinstance(func, ast.Attribute) and func.attr in ("setattr", "delattr"))):
        return False
    target = constant(call.args[0]) if call.args else None
    if isinstance(target, str) and any(is_private(part) for part in target.split(".")[1:]):
        return True
    return len(call.args) > 1 and is_private(constant(call.args[1]))


def reaches_private(node: ast.AST) -> bool:
    """Whether `node` names a private attribute of anything but `self` or `cls`: an attribute, an import, a name
    given to getattr and its kin or to monkeypatch.setattr, or a key read from vars()."""
    if isinstance(node, ast.Attribute):
        return is_private(node.attr) and not named(node.value, frozenset({"self", "cls"}))
    if isinstance(node, ast.ImportFrom):
        return any(is_private(alias.name) for alias in node.names)
    if isinstance(node, ast.Call):
        return reflects_private(node)
    if isinstance(node, ast.Subscript):
        called = node.value.func if isinstance(node.value, ast.Call) else node.value
        return named(called, frozenset({"vars"})) and is_private(constant(node.slice))
    return False


def test_no_test_reaches_into_another_objects_private_attributes() -> None:
    modules = [path for path in sorted(TESTS.rglob("*.py")) if "node_modules" not in path.parts]
    found = [
        f"{path.relative_to(SERVE_ROOT)}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)}"
        for path in modules
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if reaches_private(node)
    ]

    assert modules
    assert found == []
