"""`agent-memory serve` stopped as a process manager stops it (SIGTERM, as `docker stop`, systemd and `kill` do):
it finishes, cleans up after itself and exits 0, as its help says, like a Ctrl-C (tests/integration/
test_serve_engine_exit.py stops one with a Ctrl-C)."""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from pathlib import Path

from tests.conftest import SERVE_ROOT, free_port, serve_env, wait_until_healthy


def test_a_serve_stopped_by_sigterm_exits_0_and_leaves_no_state_file(
    dynamodb_local_endpoint: str, tmp_path: Path
) -> None:
    port, state = free_port(), tmp_path / "state"
    log_path = tmp_path / "serve.log"
    table = f"stop-{uuid.uuid4().hex[:8]}"
    store = ["--endpoint-url", dynamodb_local_endpoint, "--table", table]
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # over the suite's engine: no engine of its own to start
            [sys.executable, "-u", "-m", "local", "serve", "--port", str(port), "--no-embed", *store],
            cwd=SERVE_ROOT,
            env=serve_env(state),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}", process, log_path)
            assert [path.name for path in state.iterdir()] != []  # findable while it serves

            process.send_signal(signal.SIGTERM)
            status = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert status == 0, log_path.read_text(errors="replace")[-2000:]
    assert list(state.iterdir()) == []
