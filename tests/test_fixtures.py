"""The shared fixtures' own promises: a `serve` that cannot start is reported with what it said and how it ended."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port, wait_until_healthy


def test_a_serve_that_exits_before_answering_is_reported_with_its_exit_status_and_everything_it_said(
    tmp_path: Path,
) -> None:
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        said = "print('starting Amazon DynamoDB Local', flush=True); raise SystemExit(3)"
        process = subprocess.Popen([sys.executable, "-u", "-c", said], stdout=log, stderr=subprocess.STDOUT)
        process.wait()
        with pytest.raises(pytest.fail.Exception) as failed:
            wait_until_healthy(f"http://127.0.0.1:{free_port()}", process, log_path)

    assert "exited with status 3" in str(failed.value)
    assert "starting Amazon DynamoDB Local" in str(failed.value)


def test_a_serve_still_starting_is_waited_for_until_it_answers_or_hangs(tmp_path: Path) -> None:
    log_path = tmp_path / "serve.log"
    log_path.write_text("")
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(pytest.fail.Exception) as failed:
            wait_until_healthy(f"http://127.0.0.1:{free_port()}", process, log_path, patience=1)
    finally:
        process.kill()
        process.wait()

    assert "still not answering after 1 s" in str(failed.value)
    assert "(nothing)" in str(failed.value)
