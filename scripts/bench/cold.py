"""Cold start: a fresh interpreter importing each Lambda handler module (which builds its app at import), against
`import boto3` alone, with `python -c pass` subtracted; cases interleaved round by round."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "pass": "pass",
    "boto3": "import boto3",
    "http": "import handlers.http_api",
    "mcp": "import handlers.mcp_server",
}
# Modules that should not load at a handler's import (performance anchors, section 6): reported, not judged.
DENY = ("fastapi.openapi.models", "aws_xray_sdk", "s3transfer", "mcp_types._v20")


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "AWS_"))}
    env.update(
        PYTHONPATH=str(ROOT / "src"),
        AWS_REGION="us-east-1",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",  # noqa: S106  # a placeholder: nothing is called
        TABLE_NAME="agent-memory",
        POWERTOOLS_SERVICE_NAME="agent-memory",
    )
    return env


def _run(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)  # noqa: S603
    return (time.perf_counter() - start) * 1000


def _modules(code: str, env: dict[str, str]) -> dict[str, Any]:
    probe = f"{code}\nimport sys\nprint(len(sys.modules))\nprint(' '.join(sys.modules))"
    out = subprocess.run(  # noqa: S603
        [sys.executable, "-c", probe], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout.splitlines()
    names = out[1].split() if len(out) > 1 else []
    loaded = sorted({deny for deny in DENY for name in names if name.startswith(deny)})
    return {"modules": int(out[0]), "denied_loaded": loaded}


def measure(rounds: int) -> dict[str, Any]:
    env = _env()
    for code in CASES.values():  # once untimed, so every case runs from written bytecode
        _run(code, env)
    samples: dict[str, list[float]] = {case: [] for case in CASES}
    for round_no in range(rounds):
        order = list(CASES.items())
        if round_no % 2:
            order.reverse()
        for case, code in order:
            samples[case].append(_run(code, env))
    base = statistics.median(samples["pass"])
    net = {case: statistics.median(values) - base for case, values in samples.items() if case != "pass"}
    result: dict[str, Any] = {"rounds": rounds, "python": sys.version.split()[0], "pass_ms": base}
    for case in ("boto3", "http", "mcp"):
        result[case] = {
            "net_ms": net[case],
            "ratio_to_boto3": net[case] / net["boto3"],
            **_modules(CASES[case], env),
        }
    return result
