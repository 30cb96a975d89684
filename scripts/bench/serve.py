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

from bench.engine import dynamodb_local, free_port

ROOT = Path(__file__).resolve().parents[2]
KEY = re.compile(r"^API key +(am_\S+)$", re.MULTILINE)


def _wait_healthy(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 90) -> None:
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


def measure(clients: int = 16, seconds: float = 8, rounds: int = 3) -> dict[str, Any]:
    from handlers.bootstrap import use_placeholder_credentials

    use_placeholder_credentials()
    with (
        tempfile.TemporaryDirectory(prefix="bench-serve-") as scratch,
        open(Path(scratch) / "ddb.log", "wb") as ddb,
        dynamodb_local(ddb) as endpoint_url,
    ):
        port = free_port()
        log_path = Path(scratch) / "serve.log"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
        }
        command = [sys.executable, "-m", "local", "serve", "--port", str(port)]
        command += ["--endpoint-url", endpoint_url, "--table", "bench-serve"]
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
            try:
                _wait_healthy(port, process, log_path)
                (token,) = KEY.findall(log_path.read_text(errors="replace"))
                _round(port, token, clients, 2)  # warm-up: first imports, connections, the key cache
                measured = [_round(port, token, clients, seconds) for _ in range(rounds)]
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
    }


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
