"""Export files for import tests, written as the service writes them (one memory's life at a time), and the
command line's answer to one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.clock import format_timestamp
from local import cli
from tests.conftest import free_port

Lines = list[dict[str, Any]]
START = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)


def at(seconds: float) -> str:
    return format_timestamp(START + timedelta(seconds=seconds))


# The memory that supersedes one in a `life` with a change "superseded".
SUPERSEDER = 99


def life(memory_id: int, *changes: tuple[str, float], accessed: float | None = None) -> dict[str, Any]:
    """The line of a memory created at START whose life after that is `changes` (change, seconds after START),
    as the service records it."""
    record: dict[str, Any] = {
        "id": memory_id,
        "content": f"memory {memory_id}",
        "tags": ["t"],
        "created_at": at(0),
        "updated_at": at(0),
        "last_accessed_at": None,
        "memory_type": "fact",
        "status": "active",
        "version": 1,
    }
    revisions = [_revision(1, "created", 0, record)]
    prior, deleted_at = "active", None
    for change, seconds in changes:
        if change == "updated":
            record = record | {"content": f"memory {memory_id} at {seconds}", "updated_at": at(seconds)}
            record["version"] += 1
        elif change == "superseded":
            record = record | {"status": "invalid", "updated_at": at(seconds), "version": record["version"] + 1}
        elif change == "deleted":
            prior = prior if record["status"] == "deleted" else record["status"]
            deleted_at, record = at(seconds), record | {"status": "deleted"}
        else:
            record = record | {"status": prior}
        revisions.append(_revision(len(revisions) + 1, change, seconds, record))
        if change == "superseded":
            revisions[-1]["superseded_by"] = SUPERSEDER
    line: dict[str, Any] = {"memory": record | {"last_accessed_at": None if accessed is None else at(accessed)}}
    if record["status"] == "deleted":
        line |= {"prior_status": prior, "deleted_at": deleted_at}
    return line | {"revisions": revisions}


def _revision(number: int, change: str, seconds: float, record: dict[str, Any]) -> dict[str, Any]:
    fields = {name: value for name, value in record.items() if name != "last_accessed_at"}
    return {"revision": number, "change": change, "changed_at": at(seconds), "key_id": None, **fields}


def header(*, history: bool = True, include_deleted: bool = True) -> dict[str, Any]:
    return {
        "format": "agent-memory-export",
        "version": 1,
        "namespace": "alice",
        "exported_at": at(10_000),
        "include_deleted": include_deleted,
        "history": history,
    }


def lines() -> Lines:
    """Line 2: edited, deleted, restored; line 3: deleted; line 4: read, never changed."""
    return [
        life(1, ("updated", 60), ("deleted", 120), ("restored", 180)),
        life(2, ("deleted", 60)),
        life(3, accessed=30),
    ]


def without_history(line: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in line.items() if name != "revisions"}


def text(head: dict[str, Any], body: Lines) -> str:
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in [head, *body]) + "\n"


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> str:
    """What `agent-memory import` says of `content`; no store is running on its port, so a refusal that names a
    line came before any connection: nothing was written."""
    path = tmp_path / "file.ndjson"
    path.write_text(content)

    code = cli.main(["import", "--namespace", "alice", str(path), "--ddb-port", str(free_port())])

    err = capsys.readouterr().err
    assert code == 1
    assert "nothing imported" in err, err
    return err
