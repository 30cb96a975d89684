"""Cold-import benchmark: how much slower a fresh interpreter imports each Lambda handler than it imports boto3.

Each sample is a fresh `python -c 'import ...'`, the cases interleaved so that machine noise hits them alike; a case's
cost is its median minus the median of `python -c pass`. Ratios to `import boto3` from the same run are what compare
across machines. The targets are issue 7's; exit status 1 when a handler is over its target.

    .venv/bin/python scripts/cold_import.py [--rounds 12] [--python .venv/bin/python]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "boto3"
CASES = {
    "pass": "pass",
    BASELINE: "import boto3",
    "http_api": "import handlers.http_api",
    "mcp_server": "import handlers.mcp_server",
}
# The most each handler's cold import may cost, as a multiple of `import boto3`.
TARGETS = {"http_api": 3.0, "mcp_server": 4.5}


def sample(python: str, code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", code], cwd=ROOT, env=env, check=True)  # noqa: S603  # our own interpreter and code
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    # The region is set on Lambda; without one botocore would look further (config files) at client creation.
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "AWS_REGION": "us-east-1"}
    for code in CASES.values():  # warm the page cache and write any missing bytecode before timing
        sample(args.python, code, env)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.rounds):
        for name, code in CASES.items():
            times[name].append(sample(args.python, code, env))
    floor = statistics.median(times["pass"])
    net = {name: statistics.median(values) - floor for name, values in times.items() if name != "pass"}
    print(f"{args.rounds} interleaved rounds; `python -c pass` {floor:.0f} ms subtracted")
    over = []
    for name, ms in net.items():
        ratio = ms / net[BASELINE]
        target = TARGETS.get(name)
        verdict = "" if target is None else f"  target <= {target:.1f}x: {'ok' if ratio <= target else 'OVER'}"
        print(f"  {name:<10} {ms:7.0f} ms  {ratio:4.2f}x import boto3{verdict}")
        if target is not None and ratio > target:
            over.append(name)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
