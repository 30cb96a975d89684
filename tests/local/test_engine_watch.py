"""`serve`'s watch over the DynamoDB Local it owns (local.engine_watch), on a stand-in child process: an engine that
exits unasked is reaped and reported once, and the app serve runs answers every request 503 from then on; an engine
stopped on purpose is not reported; a server that cannot listen is a startup failure, not an engine exit. And an
engine the launcher cannot bind to loopback only is refused, not run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.memories import MemoryService
from handlers.auth import open_access
from handlers.http.app import create_app
from local import cli, engines
from local.engine_watch import ENGINE_EXITED, STARTUP_FAILED, EngineWatch, run_server, unless_engine_exited
from tests.conftest import free_port
from tests.threads import all_ended, threads_started

WAIT = 60  # seconds: a generous ceiling on every wait, never a speed claim
LOG = "java.lang.OutOfMemoryError: Java heap space"


class ChildEngine:
    """A real child process standing in for DynamoDB Local (local.engine_watch.Engine)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])

    @property
    def pid(self) -> int:
        return self.process.pid

    def exit_code(self) -> int | None:
        return self.process.poll()

    def log_tail(self) -> str:
        return LOG


@pytest.fixture
def engine() -> Iterator[ChildEngine]:
    child = ChildEngine()
    yield child
    child.process.kill()
    child.process.wait()


def wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.02)


def test_an_engine_that_exits_unasked_is_reaped_and_reported_once_on_stderr(
    engine: ChildEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    exits: list[str] = []
    watch = EngineWatch(engine, lambda: exits.append("stop"), every=0.02).start()
    try:
        engine.process.send_signal(signal.SIGKILL)
        wait_for(lambda: exits, "the watch noticed the engine's exit")
    finally:
        watch.stop()

    assert exits == ["stop"]
    with pytest.raises(ChildProcessError):  # reaped by the watch: no zombie is left to wait for
        os.waitpid(engine.pid, os.WNOHANG)
    err = capsys.readouterr().err
    assert err.strip() == watch.report
    assert f"Amazon DynamoDB Local (pid {engine.pid}) exited on its own (killed by signal 9, SIGKILL)" in err
    assert "in-memory data is gone" in err
    assert f"serve stops now (exit status {ENGINE_EXITED})" in err
    assert err.rstrip().endswith(LOG)


def test_an_engine_stopped_after_the_watch_is_not_reported(
    engine: ChildEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    exits: list[str] = []
    with threads_started() as watching:
        watch = EngineWatch(engine, lambda: exits.append("stop"), every=0.02).start()
    watch.stop()
    engine.process.terminate()
    engine.process.wait()

    assert watching  # the watch's thread ...
    assert all_ended(watching)  # ... had ended before the engine did: nothing is left that could report its exit
    assert (exits, watch.report, capsys.readouterr().err) == ([], None, "")


def test_once_the_engine_has_exited_every_request_healthz_included_gets_a_503_problem(
    engine: ChildEngine, memory_service: MemoryService
) -> None:
    exits: list[str] = []
    watch = EngineWatch(engine, lambda: exits.append("stop"), every=0.02)
    app = create_app(memory_service, open_access(), version="test")
    with TestClient(unless_engine_exited(app, watch)) as client:
        before = [client.get("/healthz").status_code, client.get("/memories").status_code]
        watch.start()
        try:
            engine.process.kill()
            wait_for(lambda: exits, "the watch noticed the engine's exit")
        finally:
            watch.stop()
        after = [client.get("/healthz"), client.get("/memories"), client.post("/memories", json={"content": "x"})]

    assert before == [200, 200]
    for response in after:
        assert response.status_code == 503
        assert response.headers["content-type"] == "application/problem+json"
        assert "retry-after" not in response.headers  # no retry brings the data back
        problem = response.json()
        assert set(problem) >= {"type", "title", "status", "detail"}
        assert problem["status"] == 503
        assert "DynamoDB Local" in problem["detail"]
        assert "exited" in problem["detail"]


def test_serve_refuses_an_engine_its_launcher_cannot_bind_to_loopback_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A java whose launcher finds a DynamoDB Local built differently: it says so and exits NOT_FENCED, unstarted.
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    said = "agent-memory: cannot bind DynamoDB Local to 127.0.0.1 only (no field server); not starting it"
    java.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit {engines.NOT_FENCED}\n")
    java.chmod(0o755)
    jar = tmp_path / "lib" / "dynamodb_local_2026-01-01" / "DynamoDBLocal.jar"
    jar.parent.mkdir(parents=True)
    jar.touch()
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: str(java) if name == "java" else real_which(name))
    monkeypatch.setattr(engines, "DYNAMODB_LOCAL_LIB", tmp_path / "lib")
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)

    code = cli.main(["serve", "--port", str(free_port()), "--ddb-port", str(free_port())])

    out, err = capsys.readouterr()
    assert code == 1
    assert err.startswith(
        "agent-memory: cannot run Amazon DynamoDB Local (DynamoDB Local could not be bound to 127.0.0.1 only, so it "
        "was not started: it would have listened on every interface)."
    )
    assert err.rstrip().endswith(said)
    assert "HTTP API" not in out  # nothing was served


def test_a_server_that_cannot_listen_is_a_startup_failure_not_an_engine_exit(
    memory_service: MemoryService, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(memory_service, open_access(), version="test")

    # 203.0.113.5 (TEST-NET-3) is no address of this machine: the bind fails, and uvicorn exits with 3.
    code = run_server(app, "203.0.113.5", free_port(), None)

    assert code == STARTUP_FAILED != ENGINE_EXITED
    assert "could not bind" in capsys.readouterr().err  # uvicorn said why
