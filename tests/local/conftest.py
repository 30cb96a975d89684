"""What the command line's tests share: the state directory where commands look for running serves, and the entry a
running serve leaves there."""

from __future__ import annotations

from pathlib import Path

import pytest

from handlers.bootstrap.runtime import STATE_DIR_VARIABLE, process_id
from local.running import RunningServe
from tests.conftest import REGION


def a_serve(endpoint_url: str | None, table: str, port: int = 8787) -> RunningServe:
    """What a serve on `port` over `table` at `endpoint_url` (None: AWS) announces."""
    return RunningServe(f"http://127.0.0.1:{port}", endpoint_url, table, REGION, process_id())


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the commands this test runs look for running serves."""
    monkeypatch.setenv(STATE_DIR_VARIABLE, str(tmp_path / "state"))
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.delenv("TABLE_NAME", raising=False)
    return tmp_path / "state"
