"""scripts/artifacts.py, which finishes `sam build`'s output: it refuses artifacts carrying what must not ship."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "artifacts.py"
RUNNING = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def artifacts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("artifacts", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_dir(root: Path, runtime: str = RUNNING, functions: tuple[str, ...] = ("HttpFunction",)) -> Path:
    build = root / "build"
    build.mkdir()
    (build / "template.yaml").write_text(f"Resources:\n  F:\n    Properties:\n      Runtime: {runtime}\n")
    for function in functions:
        (build / function / "handlers").mkdir(parents=True)
        (build / function / "handlers" / "http_api.py").write_text("handler = print\n")
        (build / function / "agent_memory-0.1.0.dist-info").mkdir()
        (build / function / "agent_memory-0.1.0.dist-info" / "METADATA").write_text("Name: agent-memory\n")
    return build


def test_a_clean_artifact_is_compiled_to_bytecode_and_reported(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build = _build_dir(tmp_path)
    assert artifacts.main(build, workers=1) == 0
    assert list((build / "HttpFunction" / "handlers" / "__pycache__").glob("http_api.*.pyc"))
    assert "HttpFunction: 0.0 MB unzipped" in capsys.readouterr().out


@pytest.mark.parametrize(
    "intruder", ["tests", "boto3", "botocore", "moto", "yaml", "conftest.py", "local", "handlers/cli.py"]
)
def test_an_artifact_carrying_tests_runtime_provided_or_local_only_packages_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], intruder: str
):
    build = _build_dir(tmp_path)
    (build / "HttpFunction" / intruder).mkdir(exist_ok=True)
    assert artifacts.main(build, workers=1) == 1
    assert f"HttpFunction: {intruder} must not be in the artifact" in capsys.readouterr().err


def test_bytecode_from_an_interpreter_other_than_the_runtime_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build = _build_dir(tmp_path, runtime="python3.99")
    assert artifacts.main(build, workers=1) == 1
    assert f"must be compiled by python3.99, not {RUNNING}" in capsys.readouterr().err


def test_a_build_folder_without_function_artifacts_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build = _build_dir(tmp_path, functions=())
    assert artifacts.main(build, workers=1) == 1
    assert "no function artifacts" in capsys.readouterr().err


def test_a_built_template_without_a_python_runtime_is_refused(artifacts: ModuleType, tmp_path: Path):
    build = _build_dir(tmp_path)
    (build / "template.yaml").write_text("Resources: {}\n")
    with pytest.raises(SystemExit, match="no python Runtime"):
        artifacts.main(build, workers=1)


@pytest.mark.parametrize(
    ("function", "foreign"),
    [
        ("HttpFunction", "mcp"),
        ("HttpFunction", "cryptography"),
        ("HttpFunction", "handlers/mcp/tools.py"),
        ("McpFunction", "fastapi"),
        ("McpFunction", "handlers/http/app.py"),
    ],
)
def test_a_function_carrying_the_other_doors_framework_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], function: str, foreign: str
):
    build = _build_dir(tmp_path, functions=(function,))
    intruder = build / function / foreign
    if intruder.suffix == ".py":
        intruder.parent.mkdir(parents=True, exist_ok=True)
        intruder.write_text("")
    else:
        intruder.mkdir()
    assert artifacts.main(build, workers=1) == 1
    assert f"{function}: {foreign} must not be in the artifact" in capsys.readouterr().err


def test_a_function_over_its_size_budget_is_refused_after_its_size_is_reported(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(artifacts.BUDGET_MB, "HttpFunction", 0.001)
    build = _build_dir(tmp_path)
    (build / "HttpFunction" / "weight.bin").write_bytes(bytes(2048))
    assert artifacts.main(build, workers=1) == 1
    captured = capsys.readouterr()
    assert "HttpFunction: 0.0 MB unzipped of its 0 MB budget" in captured.out
    assert "HttpFunction: 0.0 MB unzipped is over its 0 MB budget" in captured.err


def test_a_function_without_a_size_budget_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build = _build_dir(tmp_path, functions=("NewFunction",))
    assert artifacts.main(build, workers=1) == 1
    assert "NewFunction: no size budget in BUDGET_MB" in capsys.readouterr().err


def test_the_budgets_are_http_24_mb_with_recall_mcp_50_mb_the_purges_16_mb_and_the_vector_syncs_18_mb_with_the_stemmer(
    artifacts: ModuleType,
):
    assert artifacts.BUDGET_MB == {
        "HttpFunction": 24.0,
        "McpFunction": 50.0,
        "PurgeFunction": 16.0,
        "VectorSyncFunction": 18.0,
    }


def test_an_artifact_without_the_projects_metadata_is_refused(
    artifacts: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    build = _build_dir(tmp_path)
    (build / "HttpFunction" / "agent_memory-0.1.0.dist-info" / "METADATA").unlink()
    assert artifacts.main(build, workers=1) == 1
    assert "HttpFunction: no agent_memory .dist-info" in capsys.readouterr().err
