"""The import-linter contracts (pyproject.toml) cover every module under src/: each module, including one written
tomorrow, is in the contracts that should hold for it, because the contracts name packages, not hand lists."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CONTRACTS: list[dict[str, Any]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"
]


def _modules() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[0] in ("core", "adapters", "handlers", "local"):
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


MODULES = _modules()


def _under(module: str, *packages: str) -> bool:
    return any(module == package or module.startswith(f"{package}.") for package in packages)


def _modules_under(*packages: str, but: tuple[str, ...] = ()) -> list[str]:
    return [module for module in MODULES if _under(module, *packages) and not _under(module, *but)]


def _contract(name_starts: str) -> dict[str, Any]:
    (contract,) = [contract for contract in CONTRACTS if contract["name"].startswith(name_starts)]
    return contract


def _layered(contract: dict[str, Any], module: str) -> bool:
    """Whether `module` is in one of the contract's layers (inside one of its containers, if it has any)."""
    containers = contract.get("containers", [""])
    for container in containers:
        for layer in contract["layers"]:
            for name in layer.replace(":", "|").split("|"):
                if _under(module, f"{container}.{name.strip()}" if container else name.strip()):
                    return True
    return False


def test_the_contracts_see_every_package_of_the_source() -> None:
    assert {module.split(".")[0] for module in MODULES} == {"core", "adapters", "handlers", "local"}
    assert len(MODULES) > 100


@pytest.mark.parametrize("module", _modules_under("core"))
def test_every_core_module_is_in_the_cores_layers_and_imports_no_framework_nor_the_in_memory_store(
    module: str,
) -> None:
    assert module == "core" or _layered(_contract("Inside the core:"), module)
    assert _under(module, *_contract("The core imports no web").get("source_modules", []))
    assert _under(module, *_contract("No module imports the in-memory store").get("source_modules", []))


# The packages themselves (their __init__ holds a docstring) are not layered: their modules are.
PACKAGES = ("handlers", "handlers.aws")


@pytest.mark.parametrize(
    "module", [m for m in _modules_under("handlers", but=("handlers.bootstrap", "handlers.aws")) if m not in PACKAGES]
)
def test_every_door_module_is_in_the_doors_layers_below_the_composition_root(module: str) -> None:
    layers = _contract("Inside the doors:")["layers"]
    assert _layered({"layers": layers[layers.index("handlers.bootstrap") + 1 :]}, module)


@pytest.mark.parametrize(
    "module", [m for m in _modules_under("handlers.aws", "handlers.bootstrap") if m not in PACKAGES]
)
def test_every_entrypoint_and_wiring_module_is_in_the_doors_layers(module: str) -> None:
    assert _layered(_contract("Inside the doors:"), module)


@pytest.mark.parametrize("module", _modules_under("handlers.http", "handlers.console"))
def test_every_module_of_the_http_door_is_kept_from_the_mcp_sdk(module: str) -> None:
    contract = _contract("The HTTP door never imports the MCP SDK")
    assert _under(module, *contract["source_modules"])
    assert {"mcp", "handlers.mcp"} <= set(contract["forbidden_modules"])


@pytest.mark.parametrize("module", _modules_under("handlers.mcp", "handlers.oauth"))
def test_every_module_of_the_mcp_door_is_kept_from_fastapi(module: str) -> None:
    contract = _contract("The MCP door never imports FastAPI")
    assert _under(module, *contract["source_modules"])
    assert {"fastapi", "handlers.http"} <= set(contract["forbidden_modules"])


@pytest.mark.parametrize("module", [m for m in _modules_under("handlers.oauth") if m != "handlers.oauth"])
def test_every_module_of_the_oauth_door_is_in_its_layers(module: str) -> None:
    assert _layered(_contract("Inside the OAuth door"), module)


@pytest.mark.parametrize(
    "module", [m for m in _modules_under("handlers.aws", but=("handlers.aws.events",)) if m not in PACKAGES]
)
def test_every_function_entrypoint_has_its_own_contract_keeping_the_other_doors_out(module: str) -> None:
    (contract,) = [contract for contract in CONTRACTS if contract.get("source_modules") == [module]]
    assert contract["type"] == "forbidden"
    assert {"local", "moto"} <= set(contract["forbidden_modules"])


AWS_ADAPTERS = ("adapters.dynamodb", "adapters.bedrock", "adapters.s3vectors")


# The adapters' package itself holds a docstring only: its modules are listed.
@pytest.mark.parametrize(
    "module", [m for m in _modules_under("core", "adapters", "handlers", "local", but=AWS_ADAPTERS) if m != "adapters"]
)
def test_every_module_is_kept_from_boto_unless_it_is_an_aws_adapter(module: str) -> None:
    contract = _contract("Only the AWS adapters import boto3 or botocore")
    assert _under(module, *contract["source_modules"])
    assert "ignore_imports" not in contract  # no carve-out: the AWS adapters are simply not among the sources


def test_only_the_composition_root_and_local_tooling_may_import_an_adapter() -> None:
    contract = _contract("Only the composition root and local tooling import the adapters")
    assert (contract["type"], contract["protected_modules"]) == ("protected", ["adapters"])
    assert set(contract["allowed_importers"]) == {"handlers.bootstrap", "local"}


def test_no_contract_carves_out_an_import() -> None:
    assert [contract["name"] for contract in CONTRACTS if "ignore_imports" in contract] == []


@pytest.mark.parametrize("module", _modules_under("handlers", "local"))
def test_no_door_nor_local_tool_may_import_the_in_memory_store(module: str) -> None:
    assert _under(module, *_contract("No module imports the in-memory store")["source_modules"])


FILE_HELPERS = {"local.engines", "local.running"}


def test_every_module_but_the_composition_root_and_the_file_helpers_is_kept_from_os() -> None:
    # A protected contract covers every module but its allowed importers: a new exception is a deliberate edit here.
    contract = _contract("Only bootstrap reads the environment")
    assert (contract["type"], contract["protected_modules"]) == ("protected", ["os"])
    assert set(contract["allowed_importers"]) <= {"handlers.bootstrap", *FILE_HELPERS}


@pytest.mark.parametrize("module", sorted(FILE_HELPERS))
def test_a_file_helper_uses_os_for_files_and_never_reads_the_environment(module: str) -> None:
    source = (SRC / Path(*module.split("."))).with_suffix(".py").read_text()
    assert "environ" not in source
    assert "getenv" not in source
