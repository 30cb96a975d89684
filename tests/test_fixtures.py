"""The shared fixtures' own promises: a `serve` that cannot start is reported with what it said and how it ended;
the slow tests run first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import free_port, slow_first, wait_until_healthy


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


class Collected:
    """What slow_first reads of a collected test: its name and its markers."""

    def __init__(self, name: str, *markers: str) -> None:
        self.name = name
        self._markers = markers

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return getattr(pytest.mark, name).mark if name in self._markers else None


def test_the_slow_tests_run_first_and_each_group_keeps_its_collected_order() -> None:
    collected = [
        Collected("quick_a"),
        Collected("slow_a", "slow"),
        Collected("quick_b", "browser"),
        Collected("slow_b", "slow", "browser"),
        Collected("quick_c"),
    ]

    ordered = slow_first(cast("list[pytest.Item]", collected))

    assert [item.name for item in ordered] == ["slow_a", "slow_b", "quick_a", "quick_b", "quick_c"]


def test_this_run_collected_its_slow_tests_before_every_other(request: pytest.FixtureRequest) -> None:
    slow = [item.get_closest_marker("slow") is not None for item in request.session.items]

    assert slow == sorted(slow, reverse=True)
