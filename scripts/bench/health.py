"""`/healthz` while searches or recalls run: one `agent-memory serve` (a subprocess, as users run it, over its own
DynamoDB Local), a namespace of N memories imported by the command line, 4 clients each repeating a `q` search every
memory matches (then, in the same serve, a recall), and /healthz probed every 20 ms meanwhile: its p50 and p99.

    PYTHONPATH=src:scripts python -m bench.health [--memories 10000] [--probes 300] [--loads search,recall]

`make bench` runs it as its `health` part; `make bench ARGS="--only health"` runs it alone.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.engine import free_port
from bench.portability import synthetic_export
from bench.serve import KEY, ROOT, serve_environment, wait_healthy
from bench.timing import percentile

SEARCHERS = 4
PROBE_EVERY_S = 0.02
# Every memory of synthetic_export holds the word, so each search matches the whole namespace.
SEARCH = "/memories?q=memory&limit=100&sort=updated_at"
RECALL = "/recall?query=which+memory+was+noted+first&limit=10"
LOADS = {"search": SEARCH, "recall": RECALL}


@contextmanager
def serving(scratch: Path) -> Iterator[tuple[int, int, str]]:
    """One `serve` (no background embedding: the searches are the only load), yielding its port, its engine's port
    and its first API key; stopped when the block ends."""
    port, engine_port = free_port(), free_port()
    log_path = scratch / "serve.log"
    command = [sys.executable, "-m", "local", "serve", "--port", str(port), "--ddb-port", str(engine_port)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 (our own command line)
            [*command, "--no-embed"], cwd=ROOT, env=serve_environment(), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            wait_healthy(port, process, log_path)
            (token,) = KEY.findall(log_path.read_text(errors="replace"))
            yield port, engine_port, token
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def load(scratch: Path, engine_port: int, memories: int) -> float:
    """`memories` memories imported into the key's namespace by `agent-memory import`; the seconds it took."""
    source = scratch / "load.ndjson"
    source.write_text(synthetic_export("default", memories))
    started = time.perf_counter()
    command = [sys.executable, "-m", "local", "import", "--namespace", "default", str(source)]
    done = subprocess.run(  # noqa: S603 (our own command line)
        [*command, "--ddb-port", str(engine_port)],
        cwd=ROOT,
        env=serve_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"agent-memory import failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def probe(
    port: int, token: str, *, path: str = SEARCH, searchers: int = SEARCHERS, probes: int = 300
) -> dict[str, Any]:
    """/healthz latency from one client, probed every PROBE_EVERY_S, while `searchers` clients each repeat `path`."""
    stop, started = threading.Event(), threading.Barrier(searchers + 1)
    headers = {"authorization": f"Bearer {token}"}
    searched: list[float] = []
    failed = [0]

    def search() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        started.wait()
        while not stop.is_set():
            began = time.perf_counter()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
            except OSError:  # counted, and the next search opens a new connection
                failed[0] += 1
                connection.close()
                continue
            if response.status != 200:
                failed[0] += 1
            searched.append((time.perf_counter() - began) * 1000)
        connection.close()

    workers = [threading.Thread(target=search, daemon=True) for _ in range(searchers)]
    for worker in workers:
        worker.start()
    started.wait()
    while len(searched) < searchers:  # every search client has had an answer: all are under way
        time.sleep(PROBE_EVERY_S)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    spent, statuses = [], set()
    for _ in range(probes):
        began = time.perf_counter()
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        statuses.add(response.status)
        spent.append((time.perf_counter() - began) * 1000)
        time.sleep(PROBE_EVERY_S)
    stop.set()
    for worker in workers:
        worker.join()
    return {
        "p50_ms": statistics.median(spent),
        "p99_ms": percentile(spent, 0.99),
        "max_ms": max(spent),
        "probes": probes,
        "statuses": sorted(statuses),
        "searchers": searchers,
        "path": path,
        "searches": len(searched),
        "search_p50_ms": statistics.median(searched) if searched else None,
        "failed": failed[0],
    }


def measure(memories: int = 10_000, probes: int = 300, loads: tuple[str, ...] = tuple(LOADS)) -> dict[str, Any]:
    """One serve over `memories` imported memories: /healthz probed while 4 clients search, then while 4 recall."""
    measured: dict[str, Any] = {"memories": memories, "probe_every_ms": PROBE_EVERY_S * 1000}
    with tempfile.TemporaryDirectory(prefix="bench-health-") as scratch, serving(Path(scratch)) as running:
        port, engine_port, token = running
        measured["load_s"] = load(Path(scratch), engine_port, memories)
        for name in loads:
            probe(port, token, path=LOADS[name], probes=20)  # warm-up: connections, the key cache, the warm copy
            measured[name] = probe(port, token, path=LOADS[name], probes=probes)
    return measured


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.health", description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="memories in the namespace searched")
    parser.add_argument("--probes", type=int, default=300, help="/healthz probes under each load, one every 20 ms")
    parser.add_argument("--loads", default=",".join(LOADS), help="comma-separated: search, recall (default both)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _arguments(None)
    print(json.dumps(measure(args.memories, args.probes, tuple(args.loads.split(","))), indent=2))
