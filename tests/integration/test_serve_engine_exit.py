"""A real `agent-memory serve` and the DynamoDB Local it owns: killed outright, the engine takes the in-memory data
with it, so serve says so plainly on stderr and stops with exit status 3 (never a 200 /healthz over a dead engine);
a terminal's Ctrl-C stops serve and its engine in order, with no such report."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from local.engine_watch import ENGINE_EXITED
from tests.conftest import SERVE_ROOT, free_port, serve_env, wait_until_healthy

WAIT = 60  # seconds: a generous ceiling on every wait, never a speed claim
# The engine is found as serve's child through /proc.
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes through /proc (Linux)")


@contextmanager
def serve_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str, int]]:
    """`agent-memory serve` in a session of its own (as a terminal runs it), healthy: the process, its base URL and
    its DynamoDB Local's port; stopped at the end if it still runs."""
    port, ddb_port = free_port(), free_port()
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "local", "serve", "--no-auth", "--port", str(port), "--ddb-port", str(ddb_port)],
            cwd=SERVE_ROOT,
            env=serve_env(),
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}", process, err)
            yield process, f"http://127.0.0.1:{port}", ddb_port
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()


def children(pid: int) -> list[tuple[int, str]]:
    """The (pid, command name) of every process whose parent is `pid` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # exited meanwhile
        name, _, rest = text.partition(" (")[2].rpartition(") ")
        if int(rest.split()[1]) == pid:
            found.append((int(stat.parent.name), name))
    return found


def engine_of(process: subprocess.Popen[bytes]) -> int:
    (pid,) = [child for child, name in children(process.pid) if name == "java"]
    return pid


def healthz(base: str) -> int | None:
    """/healthz's status, or None once nothing answers."""
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=WAIT) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError):
        return None


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()
    except ConnectionRefusedError:
        return False
    return True


def wait_for_exit(process: subprocess.Popen[bytes], base: str) -> list[int | None]:
    """The /healthz statuses seen, in order, until `process` exits (it must within WAIT)."""
    seen: list[int | None] = []
    deadline = time.monotonic() + WAIT
    while process.poll() is None:
        assert time.monotonic() < deadline, f"serve still runs; /healthz answered {seen[-5:]}"
        seen.append(healthz(base))
        time.sleep(0.05)
    return seen


@pytest.mark.slow
def test_serve_whose_dynamodb_local_is_killed_says_its_data_is_gone_and_exits_3(tmp_path: Path) -> None:
    with serve_process(tmp_path) as (process, base, _):
        engine = engine_of(process)
        os.kill(engine, signal.SIGKILL)
        seen = wait_for_exit(process, base)

    err = (tmp_path / "stderr.log").read_text()
    assert process.returncode == ENGINE_EXITED, err
    assert f"Amazon DynamoDB Local (pid {engine}) exited on its own (killed by signal 9, SIGKILL)" in err
    assert "in-memory data is gone" in err
    assert "agent-memory serve stops now" in err
    # Healthy until serve noticed, then 503 (if a request got in before it stopped listening), then nothing: never
    # a 200 once the stop began.
    stopping = next((i for i, status in enumerate(seen) if status != 200), len(seen))
    assert set(seen[stopping:]) <= {503, None}, seen


@pytest.mark.slow
def test_ctrl_c_stops_serve_and_its_dynamodb_local_with_no_engine_report(tmp_path: Path) -> None:
    with serve_process(tmp_path) as (process, base, ddb_port):
        # Its engine is in a group of its own: a terminal's Ctrl-C reaches serve only, which stops the engine itself
        # (an engine interrupted along with it would be reported as one that died).
        assert os.getpgid(engine_of(process)) != os.getpgid(process.pid)
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        wait_for_exit(process, base)

    err = (tmp_path / "stderr.log").read_text()
    assert process.returncode == 0, err
    assert "exited on its own" not in err
    deadline = time.monotonic() + WAIT
    while listening(ddb_port):  # serve stopped its engine (or the kernel did, on serve's exit)
        assert time.monotonic() < deadline, "DynamoDB Local outlived serve"
        time.sleep(0.05)
