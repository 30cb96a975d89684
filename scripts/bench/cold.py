"""Cold start: a fresh interpreter importing each Lambda handler module (which builds its app at import), against
`import boto3` alone, with `python -c pass` subtracted; cases interleaved round by round.

Beside each door, its floor: what the function imports and builds whatever our code does (boto3 and a DynamoDB
client, the frameworks the design names, the MCP SDK's server as the function imports it, handlers.aws.sdk), with
models built on first use as the function does (handlers.aws.models), and no code of ours. Where valgrind is
installed, every case's instructions too (cachegrind, once each): they do not move with the machine's load, which
moves the timed ratios by ±0.4 between runs here.

Each handler runs in a virtual environment holding exactly its function's package set (uv.lock's runtime set plus
the function's extra, as `make build` ships it) and boto3 (the runtime's), not in the development environment,
whose extra packages (rich, for one) some libraries pick up when present."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any

from lambda_package import write_dist_info

ROOT = Path(__file__).resolve().parents[2]
# What both functions import and build whatever our code does: the Lambda adapter, Powertools' logger, a client.
_NAMED = "mangum, aws_lambda_powertools.logging, boto3"
_CLIENT = "boto3.client('dynamodb')"
# case -> (the function's extra, code); `pass` and `boto3` run in the HTTP function's environment.
CASES = {
    "pass": ("http", "pass"),
    "boto3": ("http", "import boto3"),
    "http": ("http", "import handlers.aws.http"),
    "mcp": ("mcp", "import handlers.aws.mcp"),
    "http_floor": ("http", f"import handlers.aws.models, fastapi, {_NAMED}; {_CLIENT}"),
    "mcp_floor": ("mcp", f"import handlers.aws.models, handlers.aws.sdk, {_NAMED}; {_CLIENT}"),
}
FLOORS = {"http": "http_floor", "mcp": "mcp_floor"}
UV = ("python3", "-m", "uv")
# Modules that should not load at a handler's import (performance anchors, section 6): reported, not judged. The MCP
# SDK's client side, uvicorn, click and httpx(2) are what the MCP function ships but never runs (handlers.aws.sdk);
# pydantic.v1 is what FastAPI imports only to ask whether a model is one (handlers.http.pydantic_v1);
# tests/handlers/aws/test_cold_import.py fails if a door's import loads them.
DENY = (
    "fastapi.openapi.models",
    "aws_xray_sdk",
    "s3transfer",
    "mcp_types._v20",
    "mcp.client",
    "uvicorn",
    "click",
    "httpx",
    "pydantic.v1",
)


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "AWS_"))}
    # The project's metadata, as the Lambda build puts it beside the code: the doors read their version from it.
    metadata = ROOT / ".bench" / "metadata"
    write_dist_info(metadata)
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(metadata)]),
        AWS_REGION="us-east-1",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",  # noqa: S106  # a placeholder: nothing is called
        TABLE_NAME="agent-memory",
        POWERTOOLS_SERVICE_NAME="agent-memory",
    )
    return env


def runtime_python(extra: str) -> Path:
    """The interpreter of .bench/runtime-<extra>, (re)installed when the locked package set changed."""
    venv = ROOT / ".bench" / f"runtime-{extra}"
    python = venv / "bin" / "python"
    export = [*UV, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-header", "--no-annotate", "--no-hashes"]
    exported = subprocess.run(  # noqa: S603
        [*export, "--quiet", "--extra", extra], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    wanted = f"{exported}boto3=={version('boto3')}\n"
    requirements = venv / "requirements.txt"
    if not python.exists() or not requirements.exists() or requirements.read_text() != wanted:
        subprocess.run([*UV, "venv", "--quiet", "--clear", "--python", sys.executable, str(venv)], check=True)  # noqa: S603
        requirements.write_text(wanted)
        subprocess.run(  # noqa: S603
            [*UV, "pip", "install", "--quiet", "--python", str(python), "--requirement", str(requirements)], check=True
        )
    return python


def _run(python: Path, code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", code], env=env, check=True, cwd=ROOT)  # noqa: S603
    return (time.perf_counter() - start) * 1000


def _modules(python: Path, code: str, env: dict[str, str]) -> dict[str, Any]:
    probe = f"{code}\nimport sys\nprint(len(sys.modules))\nprint(' '.join(sys.modules))"
    out = subprocess.run(  # noqa: S603
        [python, "-c", probe], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    ).stdout.splitlines()
    names = out[1].split() if len(out) > 1 else []
    loaded = sorted({deny for deny in DENY for name in names if name.startswith(deny)})
    return {"modules": int(out[0]), "denied_loaded": loaded}


# The first requests after import (and the same requests again, warm), in a fresh interpreter: a first session's,
# over in-memory services holding the events' key, so what is timed is the function's own first-request work (what
# its import left to first use included, handlers.aws.models), not DynamoDB's.
FIRST = {
    "http": ("handlers.aws.http", ["http_create.json", "http_get.json", "http_search.json"]),
    "mcp": (
        "handlers.aws.mcp",
        ["mcp_initialize.json", "mcp_tools_list.json", "mcp_tools_call_create.json", "mcp_tools_call_search.json"],
    ),
}
# What builds each function's door over its services (the entrypoint serves it).
DOORS = {
    "http": "from handlers.bootstrap.http import lambda_app as door",
    "mcp": "from handlers.bootstrap.mcp import lambda_handler as door",
}
_FIRST_CODE = """
import json, time
from core.access import SCOPES, ApiKey, hash_key, key_id_of
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from adapters.memory.grants import InMemoryGrantRepository
from adapters.memory.keys import InMemoryKeyRepository
from adapters.memory.memories import InMemoryMemoryRepository
from handlers import bootstrap
events = [json.load(open("events/" + name)) for name in {events!r}]
key = events[0]["headers"]["authorization"].removeprefix("Bearer ")
store = InMemoryKeyRepository()
store.add(ApiKey(key_id_of(key), "default", SCOPES, "2026-04-06T14:00:00.000000Z", None, False, hash_key(key)))
keys = KeyService(store)
grants = GrantService(InMemoryGrantRepository(store), keys)
services = bootstrap.Services(MemoryService(InMemoryMemoryRepository()), keys, grants)
import {module} as entry
{door}
from handlers.aws import models
# The door the entrypoint builds, over these services, with its models left to their first use as at import.
models.defer_builds()
handler = entry.entrypoint(door(services), services.settings)
models.resume_builds()
class Context:
    function_name = "bench"; function_version = "$LATEST"; memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"; aws_request_id = "0"
    def get_remaining_time_in_millis(self): return 28000
times = []
for event in events + events:
    start = time.perf_counter()
    status = handler(dict(event), Context())["statusCode"]
    times.append((time.perf_counter() - start) * 1000)
    assert status < 300, (event["rawPath"], status)
print("FIRST", json.dumps(times))
"""


def first_invocations(rounds: int) -> dict[str, Any]:
    """Per door: the median ms of its first requests after import, each and summed, and of the same requests warm."""
    env = _env()
    result: dict[str, Any] = {}
    for door, (module, events) in FIRST.items():
        python = runtime_python(door)
        code = _FIRST_CODE.format(module=module, events=events, door=DOORS[door])
        runs = []
        for _ in range(rounds):
            out = subprocess.run(  # noqa: S603
                [python, "-c", code], env=env, check=True, cwd=ROOT, capture_output=True, text=True
            ).stdout
            runs.append(json.loads(out.split("FIRST ", 1)[1]))
        first = [statistics.median(run[index] for run in runs) for index in range(len(events))]
        result[door] = {
            "events": events,
            "first_ms": first,
            "first_total_ms": statistics.median(sum(run[: len(events)]) for run in runs),
            "warm_total_ms": statistics.median(sum(run[len(events) :]) for run in runs),
        }
    return result


def count_instructions(python: Path, code: str, env: dict[str, str]) -> int:
    """The instructions `python -c code` runs, counted by cachegrind (deterministic, unlike its time)."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    out = subprocess.run(  # noqa: S603
        [*command, str(python), "-c", code], env=env, check=True, cwd=ROOT, capture_output=True, text=True
    ).stderr
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if found is None:
        raise RuntimeError(f"cachegrind counted nothing: {out[-500:]}")
    return int(found.group(1).replace(",", ""))


def instructions(cases: dict[str, tuple[Path, str]], env: dict[str, str]) -> dict[str, Any] | None:
    """Per case: instructions net of `pass`, and their ratio to boto3's; None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counted = dict(
            zip(cases, pool.map(lambda case: count_instructions(case[0], case[1], env), cases.values()), strict=True)
        )
    net = {case: count - counted["pass"] for case, count in counted.items() if case != "pass"}
    return {case: {"net": count, "ratio_to_boto3": count / net["boto3"]} for case, count in net.items()}


def measure(rounds: int) -> dict[str, Any]:
    env = _env()
    pythons = {extra: runtime_python(extra) for extra, _ in CASES.values()}
    cases = {case: (pythons[extra], code) for case, (extra, code) in CASES.items()}
    for python, code in cases.values():  # once untimed, so every case runs from written bytecode
        _run(python, code, env)
    samples: dict[str, list[float]] = {case: [] for case in cases}
    pairs: dict[str, list[float]] = {"http": [], "mcp": []}
    for round_no in range(rounds):
        order = list(cases.items())
        if round_no % 2:
            order.reverse()
        for case, (python, code) in order:
            samples[case].append(_run(python, code, env))
        # Each round is a pair: its own net ratio, for the spread.
        net_boto3 = samples["boto3"][-1] - samples["pass"][-1]
        for door in pairs:
            pairs[door].append((samples[door][-1] - samples["pass"][-1]) / net_boto3)
    base = statistics.median(samples["pass"])
    net = {case: statistics.median(values) - base for case, values in samples.items() if case != "pass"}
    result: dict[str, Any] = {
        "rounds": rounds,
        "python": sys.version.split()[0],
        "pass_ms": base,
        "environments": "each function's locked package set + boto3 " + version("boto3"),
    }
    for case in ("boto3", "http", "mcp"):
        result[case] = {
            "net_ms": net[case],
            "ratio_to_boto3": net[case] / net["boto3"],
            **_modules(*cases[case], env),
        }
        if case in pairs:
            ordered = sorted(pairs[case])
            result[case]["pair_ratios"] = {
                "min": ordered[0],
                "q1": ordered[len(ordered) // 4],
                "median": statistics.median(ordered),
                "q3": ordered[(3 * len(ordered)) // 4],
                "max": ordered[-1],
            }
    for door, floor in FLOORS.items():
        result[door]["floor"] = {"net_ms": net[floor], "ratio_to_boto3": net[floor] / net["boto3"]}
    result["instructions"] = instructions(cases, env)
    result["first_invocation"] = first_invocations(max(3, rounds // 3))
    return result
