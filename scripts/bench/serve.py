"""One `agent-memory serve` (a subprocess, as users run it) against Amazon DynamoDB Local, driven over HTTP by
concurrent clients: operations per second, the median of a few timed rounds. Each client keeps one connection and
repeats create, read-by-id, search (the first 10 of its namespace)."""

from __future__ import annotations

import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from adapters.dynamodb.changes import WINDOW_SECONDS
from bench.engine import free_port
from bench.timing import percentile

ROOT = Path(__file__).resolve().parents[2]
KEY = re.compile(r"^API key +(am_\S+)$", re.MULTILINE)


def wait_healthy(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
    """Return once the serve started as `process` answers /healthz with 200; its log's tail if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("serve did not start")


def serve_environment() -> dict[str, str]:
    """This process's environment with the repository's src/ on PYTHONPATH, for a `python -m local serve`."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    }


class _Client(threading.Thread):
    """One client: one keep-alive connection, create / read / search in turn until `stop` is set."""

    def __init__(self, port: int, token: str, start: threading.Barrier, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self._port, self._start, self._stop = port, start, stop
        self._headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        self.ok = 0
        self.failed = 0

    def _call(self, connection: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> Any:
        connection.request(method, path, json.dumps(body) if body is not None else None, self._headers)
        response = connection.getresponse()
        data = response.read()
        if 200 <= response.status < 300:
            self.ok += 1
            return json.loads(data) if data else None
        self.failed += 1
        return None

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self._port, timeout=60)
        self._start.wait()
        n = 0
        while not self._stop.is_set():
            n += 1
            created = self._call(connection, "POST", "/memories", {"content": f"The user noted item {n}"})
            if self._stop.is_set():
                break
            if created is not None:
                self._call(connection, "GET", f"/memories/{created['id']}")
            if self._stop.is_set():
                break
            self._call(connection, "GET", "/memories?limit=10")
        connection.close()


def _round(port: int, token: str, clients: int, seconds: float) -> dict[str, float]:
    start, stop = threading.Barrier(clients + 1), threading.Event()
    workers = [_Client(port, token, start, stop) for _ in range(clients)]
    for worker in workers:
        worker.start()
    start.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - began
    ok, failed = sum(w.ok for w in workers), sum(w.failed for w in workers)
    return {"ops_per_s": ok / elapsed, "failed": failed, "ok": ok}


def _rss_mb_by_process(pid: int) -> dict[str, float]:
    """Resident memory of a process and all its descendants (MB, from /proc), by process name."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent and child not in tree]
        tree.update(children)
        frontier.extend(children)
    by_name: dict[str, float] = {}
    for member in tree:
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        lines = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        name = lines.get("Name", "?").strip()
        by_name[name] = by_name.get(name, 0.0) + int(lines.get("VmRSS", "0 kB").split()[0]) / 1024
    return by_name


def _load(port: int, token: str, count: int, threads: int) -> None:
    """`count` creates over `threads` keep-alive connections."""
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    per_thread = [count // threads + (1 if i < count % threads else 0) for i in range(threads)]

    def run(n: int, offset: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(n):
            body = {"content": f"The user noted item {offset + i}: prefers a window seat", "tags": ["travel"]}
            connection.request("POST", "/memories", json.dumps(body), headers)
            response = connection.getresponse()
            response.read()
            if response.status != 201:
                raise RuntimeError(f"create answered {response.status}")
        connection.close()

    workers = [
        threading.Thread(target=run, args=(n, sum(per_thread[:i])), daemon=True) for i, n in enumerate(per_thread)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def _timed_creates(port: int, token: str, count: int) -> list[float]:
    """ms of each of `count` creates by one client, one after another."""
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    spent = []
    for i in range(count):
        body = json.dumps({"content": f"The user noted late item {i}", "tags": ["late"]})
        start = time.perf_counter()
        connection.request("POST", "/memories", body, headers)
        response = connection.getresponse()
        response.read()
        spent.append((time.perf_counter() - start) * 1000)
    connection.close()
    return spent


# Recalls timed one after another by one client at the end: the first is the process's first recall of the namespace
# (it reads every digest: cold), the rest read from its warm copy (core.recall.warm). Right after the load and the
# client rounds, each refresh of the copy lists again every change of the change index's window; the same recalls are
# timed once more when the window has passed since the last write (settled: what a hot namespace costs between bursts).
RECALLS = 31
SETTLE_S = WINDOW_SECONDS + 5
RECALL_QUESTION = "/recall?query=which+seat+does+the+user+prefer&limit=10"


def _timed_recalls(port: int, token: str, count: int) -> list[float]:
    """ms of `count` recalls by one client, one after another."""
    headers = {"authorization": f"Bearer {token}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    spent = []
    for _ in range(count):
        start = time.perf_counter()
        connection.request("GET", RECALL_QUESTION, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"recall answered {response.status}")
        spent.append((time.perf_counter() - start) * 1000)
    connection.close()
    return spent


def _recall_figures(port: int, token: str) -> dict[str, float]:
    """The first recall (cold) and the median and p99 of the rest (warm) right after the writes, then the median and
    p99 of as many recalls once the change index's window has passed since the last write (settled)."""
    burst = _timed_recalls(port, token, RECALLS)
    time.sleep(SETTLE_S)
    settled = _timed_recalls(port, token, RECALLS - 1)
    return {
        "cold_ms": burst[0],
        "warm_p50_ms": statistics.median(burst[1:]),
        "warm_p99_ms": percentile(burst[1:], 0.99),
        "settled_p50_ms": statistics.median(settled),
        "settled_p99_ms": percentile(settled, 0.99),
        "settled_after_s": SETTLE_S,
        "recalls": RECALLS - 1,
    }


def _health_under_slow_lists(port: int, token: str, listers: int, probes: int) -> dict[str, float]:
    """/healthz latency from one client while `listers` clients each repeat a search of the whole namespace."""
    stop = threading.Event()
    headers = {"authorization": f"Bearer {token}"}
    searches = [0]

    def list_slowly() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while not stop.is_set():
            connection.request("GET", "/memories?q=window&limit=100&sort=updated_at", headers=headers)
            connection.getresponse().read()
            searches[0] += 1
        connection.close()

    workers = [threading.Thread(target=list_slowly, daemon=True) for _ in range(listers)]
    for worker in workers:
        worker.start()
    time.sleep(1)  # the searches are under way
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    spent = []
    for _ in range(probes):
        start = time.perf_counter()
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        spent.append((time.perf_counter() - start) * 1000)
        time.sleep(0.02)
    stop.set()
    for worker in workers:
        worker.join()
    ordered = sorted(spent)
    return {
        "p50_ms": statistics.median(ordered),
        "p99_ms": percentile(ordered, 0.99),
        "probes": probes,
        "listers": listers,
        "searches": searches[0],
    }


def measure(clients: int = 16, seconds: float = 8, rounds: int = 3, memories: int = 10_000) -> dict[str, Any]:
    """One `serve` started as users start it (its own DynamoDB Local): `memories` creates (the last 500 timed one
    by one), the resident memory of serve and its engine, ops/s of `clients` concurrent clients, /healthz
    while whole-namespace searches run, and at the end recalls one by one, cold then warm."""
    timed = min(500, memories // 2)
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as scratch:
        port = free_port()
        log_path = Path(scratch) / "serve.log"
        env = serve_environment()
        command = [sys.executable, "-m", "local", "serve", "--port", str(port), "--ddb-port", str(free_port())]
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
            try:
                wait_healthy(port, process, log_path)
                (token,) = KEY.findall(log_path.read_text(errors="replace"))
                began = time.perf_counter()
                _load(port, token, memories - timed, threads=8)
                creates = _timed_creates(port, token, timed)
                load_s = time.perf_counter() - began
                rss = _rss_mb_by_process(process.pid)
                health = _health_under_slow_lists(port, token, listers=4, probes=100)
                _round(port, token, clients, 2)  # warm-up: connections, the key cache
                measured = [_round(port, token, clients, seconds) for _ in range(rounds)]
                rss_after = _rss_mb_by_process(process.pid)
                recalled = _recall_figures(port, token)
            finally:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
    return {
        "clients": clients,
        "seconds": seconds,
        "rounds": measured,
        "median_ops_per_s": statistics.median(r["ops_per_s"] for r in measured),
        "failed": sum(int(r["failed"]) for r in measured),
        "memories": memories,
        "load_s": load_s,
        "create_p50_ms": statistics.median(creates),
        "create_timed": timed,
        "rss_mb": sum(rss.values()),
        "rss_after_mb": sum(rss_after.values()),
        "rss_parts": rss,
        "rss_after_parts": rss_after,
        "health": health,
        "recall": {"memories": memories, **recalled},
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
