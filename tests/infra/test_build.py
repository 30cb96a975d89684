"""How `make build` gives each function its own dependency set from the one uv.lock: template.yaml hands every
function to a Makefile target, the Makefile names the function's pyproject extra and the runtime's wheels, and the
locked closure of each extra keeps the other door's framework out."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from local.template import load_template

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "agent-memory"
# What must stay out of each function's locked closure: the other door's framework (and the MCP SDK's heaviest part).
FOREIGN = {"HttpFunction": {"mcp", "mcp-types", "cryptography"}, "McpFunction": {"fastapi"}}
# What each function needs at runtime: the shared stack and its own door.
NEEDED = {
    "HttpFunction": {"fastapi", "mangum", "aws-lambda-powertools", "pydantic"},
    "McpFunction": {"mcp", "mangum", "aws-lambda-powertools", "pydantic"},
}
# The Lambda runtime provides these.
RUNTIME_PROVIDED = {"boto3", "botocore", "s3transfer"}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


@pytest.fixture(scope="module")
def make_variables() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text()
    return dict(re.findall(r"^([A-Za-z_]+) := (.*)$", text, re.MULTILINE))


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: resource
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def _locked_closure(extra: str) -> set[str]:
    """Every package uv.lock installs for the project's runtime dependencies plus `extra` (markers ignored: a
    superset of any one platform's set)."""
    lock = {package["name"]: package for package in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}
    project = lock[PROJECT]
    pending = [dep["name"] for dep in (*project["dependencies"], *project["optional-dependencies"][extra])]
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(dep["name"] for dep in lock[name].get("dependencies", ()))
    return seen


def test_every_function_is_built_by_its_own_target_of_the_root_makefile(template: dict[str, Any]):
    targets = (ROOT / "Makefile").read_text()
    for name, resource in _functions(template).items():
        assert resource["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "."}, name
        assert re.search(rf"^[^#\n]*\bbuild-{name}\b[^\n]*:", targets, re.MULTILINE), name


def test_every_function_installs_a_pyproject_extra_of_its_own(template: dict[str, Any], make_variables: dict[str, str]):
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    chosen = [make_variables[f"LAMBDA_EXTRA_{name}"] for name in _functions(template)]
    assert len(set(chosen)) == len(chosen)
    assert all(extra in extras and extra != "local" for extra in chosen)


def test_wheels_are_chosen_for_the_templates_runtime_and_architecture(
    template: dict[str, Any], make_variables: dict[str, str]
):
    function_globals = template["Globals"]["Function"]
    assert function_globals["Runtime"] == f"python{make_variables['LAMBDA_PYTHON_VERSION']}"
    arch = {"arm64": "aarch64", "x86_64": "x86_64"}[function_globals["Architectures"][0]]
    assert make_variables["LAMBDA_PLATFORM"].startswith(f"{arch}-manylinux")
    for resource in _functions(template).values():
        assert "Runtime" not in resource["Properties"]
        assert "Architectures" not in resource["Properties"]


@pytest.mark.parametrize("function", sorted(FOREIGN))
def test_each_functions_locked_closure_has_its_door_and_not_the_other_doors_framework(
    function: str, make_variables: dict[str, str]
):
    closure = _locked_closure(make_variables[f"LAMBDA_EXTRA_{function}"])
    assert closure >= NEEDED[function]
    assert not closure & FOREIGN[function]
    assert not closure & RUNTIME_PROVIDED
