"""scripts/lambda_package.py: each function's artifact gets exactly the modules its entrypoint imports, and the
project's metadata, from which the one version string is read on Lambda."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "lambda_package.py"


@pytest.fixture(scope="module")
def lambda_package() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lambda_package", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("entry", "carried", "left_out"),
    [
        (
            "handlers.aws.http",
            {
                "handlers/http/app.py",
                "handlers/http/openapi.py",
                "adapters/dynamodb/memories.py",
                # the console's page is served from the package's static files
                "handlers/console/static/index.html",
                "handlers/console/static/console.js",
                "handlers/console/static/console.css",
            },
            {"handlers/mcp/tools.py", "handlers/mcp/endpoint.py", "handlers/aws/mcp.py", "local"},
        ),
        (
            "handlers.aws.mcp",
            {
                "handlers/mcp/tools.py",
                "handlers/mcp/endpoint.py",
                "adapters/dynamodb/memories.py",
                # imported on the first OAuth request only, yet shipped: a function cannot fetch a module later
                "handlers/oauth/provider.py",
                "handlers/oauth/guard.py",
                "handlers/oauth/consent.py",
                "adapters/dynamodb/grants.py",
            },
            {"handlers/http/app.py", "handlers/http/openapi.py", "handlers/aws/http.py", "handlers/console", "local"},
        ),
    ],
)
def test_a_function_carries_its_entrypoints_modules_and_not_the_other_doors_or_local_tooling(
    lambda_package: ModuleType, tmp_path: Path, entry: str, carried: set[str], left_out: set[str]
):
    assert lambda_package.main(entry, ROOT / "src", tmp_path) == 0
    files = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file()}
    assert carried <= files
    assert {"core/__init__.py", "handlers/__init__.py", "adapters/dynamodb/__init__.py"} <= files
    assert not {path for path in files for name in left_out if path == name or path.startswith(f"{name}/")}


def test_the_artifact_answers_the_projects_version_from_its_metadata(lambda_package: ModuleType, tmp_path: Path):
    lambda_package.main("handlers.aws.http", ROOT / "src", tmp_path)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    # A bare interpreter (-I: no site-packages, so not the editable install) with only the artifact on its path.
    read = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import sys, importlib.metadata as m; sys.path.insert(0, sys.argv[1]); print(m.version('agent-memory'))",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert read.stdout.strip() == version


@pytest.mark.parametrize("entry", ["handlers.aws.http", "handlers.aws.mcp", "handlers.aws.purge"])
def test_no_function_carries_the_in_memory_store(lambda_package: ModuleType, tmp_path: Path, entry: str):
    # adapters.memory is the tests' and the bench's store: no entrypoint imports it, so none ships it.
    assert lambda_package.main(entry, ROOT / "src", tmp_path) == 0
    files = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file()}
    assert "adapters/dynamodb/memories.py" in files
    assert not [path for path in files if path.startswith("adapters/memory/")]
