"""Finish and check the Lambda artifacts `sam build` left in .aws-sam/build: compile bytecode, refuse what must not
ship, print each function's unzipped size and refuse a function over its size budget.

Bytecode: /var/task is read-only, so without shipped .pyc files every cold start compiles every import again
(1.6-2x slower imports). All are (re)compiled by this interpreter, which must be the runtime's version, checked
by hash rather than by mtime, because a zip keeps mtimes only to 2 s (in local time), which need not match theirs.
"""

from __future__ import annotations

import compileall
import py_compile
import re
import sys
from pathlib import Path

# The Lambda runtime provides these; a copy in the artifact means a dev or local-only dependency leaked in.
RUNTIME_PROVIDED = ("boto3", "botocore", "s3transfer")
# Ours: the tests, the local-run extras and the dev tools stay out of the artifact.
FORBIDDEN = (
    "tests",
    "conftest.py",
    "moto",
    "uvicorn_worker",
    "yaml",
    "werkzeug",
    "pytest",
    "_pytest",
    "mypy",
    "local",
    "handlers/cli.py",
    "handlers/local.py",
)
# Each door ships only its own framework: the MCP SDK (and cryptography, the largest part of its closure) would more
# than double the HTTP function; FastAPI is dead weight in the MCP function.
FOREIGN = {
    "HttpFunction": (
        "mcp",
        "mcp_types",
        "cryptography",
        "handlers/mcp/endpoint.py",
        "handlers/mcp/tools.py",
        "handlers/aws/mcp.py",
    ),
    "McpFunction": ("fastapi", "handlers/http/app.py", "handlers/http/openapi.py", "handlers/aws/http.py"),
    # The purge runs the core alone: no door framework.
    "PurgeFunction": ("fastapi", "mcp", "mcp_types", "cryptography", "handlers/http/app.py", "handlers/mcp/tools.py"),
    # The vector index's stream consumer (RecallVectorIndex) too.
    "VectorSyncFunction": (
        "fastapi",
        "mcp",
        "mcp_types",
        "cryptography",
        "handlers/http/app.py",
        "handlers/mcp/tools.py",
    ),
}
# Unzipped MB, bytecode included (issue 7). A function without a budget is refused, so a new one must declare its own.
# The HTTP function's grew from 20 to 24 MB with recall (issue 27): its Snowball stemmer (1.7 MB with bytecode: every
# language ships in one package) and simsimd (1.5 MB). Size stands in for cold start here; the bench's import check
# measures the cold start itself. The vector index's stream consumer grew from 16 to 18 MB with the same stemmer (issue
# 41): a digest carries its content, and the consumer counts the terms each vector's filterable metadata holds.
BUDGET_MB = {"HttpFunction": 24.0, "McpFunction": 50.0, "PurgeFunction": 16.0, "VectorSyncFunction": 18.0}
MB = 1024 * 1024


def function_dirs(build_dir: Path) -> list[Path]:
    """Every function artifact: a directory holding the handlers package."""
    return sorted(path for path in build_dir.iterdir() if (path / "handlers").is_dir())


def runtime_of(build_dir: Path) -> str:
    match = re.search(r"^\s*Runtime:\s*(python3\.\d+)\s*$", (build_dir / "template.yaml").read_text(), re.MULTILINE)
    if match is None:
        raise SystemExit(f"no python Runtime in {build_dir / 'template.yaml'}")
    return match.group(1)


def problems(artifact: Path) -> list[str]:
    found = []
    for name in (*RUNTIME_PROVIDED, *FORBIDDEN, *FOREIGN.get(artifact.name, ())):
        if (artifact / name).exists():
            found.append(f"{artifact.name}: {name} must not be in the artifact")
    if not any(artifact.glob("agent_memory-*.dist-info/METADATA")):
        found.append(f"{artifact.name}: no agent_memory .dist-info: the version could not be read on Lambda")
    if artifact.name not in BUDGET_MB:
        found.append(f"{artifact.name}: no size budget in BUDGET_MB")
    return found


def over_budget(artifact: Path) -> str | None:
    size = tree_bytes(artifact) / MB
    budget = BUDGET_MB[artifact.name]
    return f"{artifact.name}: {size:.1f} MB unzipped is over its {budget:.0f} MB budget" if size > budget else None


def tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def report(artifact: Path, top: int = 6) -> str:
    entries = [(tree_bytes(item), item.name) for item in artifact.iterdir() if not item.name.endswith(".dist-info")]
    total = tree_bytes(artifact)
    heaviest = ", ".join(f"{name} {size / MB:.1f}" for size, name in sorted(entries, reverse=True)[:top])
    budget = BUDGET_MB[artifact.name]
    return (
        f"{artifact.name}: {total / MB:.1f} MB unzipped of its {budget:.0f} MB budget (boto3/botocore not included); "
        f"largest MB: {heaviest}"
    )


def main(build_dir: Path, workers: int = 0) -> int:
    """`workers=0` compiles on every core (processes); 1 stays in this process."""
    runtime = runtime_of(build_dir)
    interpreter = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if interpreter != runtime:
        print(f"bytecode must be compiled by {runtime}, not {interpreter}", file=sys.stderr)
        return 1
    artifacts = function_dirs(build_dir)
    if not artifacts:
        print(f"no function artifacts under {build_dir}; run `sam build` first", file=sys.stderr)
        return 1
    found = [problem for artifact in artifacts for problem in problems(artifact)]
    if found:
        print("\n".join(found), file=sys.stderr)
        return 1
    for artifact in artifacts:
        ok = compileall.compile_dir(
            artifact,
            force=True,
            quiet=1,
            workers=workers,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        if not ok:
            print(f"{artifact.name}: bytecode compilation failed", file=sys.stderr)
            return 1
        print(report(artifact))
    oversized = [message for artifact in artifacts if (message := over_budget(artifact)) is not None]
    if oversized:
        print("\n".join(oversized), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".aws-sam/build")))
