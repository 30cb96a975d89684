"""`agent-memory import` refuses a file that leaves no room or makes no sense, naming the line and the field, before
it touches any store: a header whose flags disagree with its lines, ids and versions too high to leave room after
them, a history no memory can have lived, a line nested too deeply or too long. What a real store can export
(histories begun after a memory's creation, overlapping requests' times) is accepted."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.limits import IMPORT_MAX_ID, IMPORT_MAX_LINE_CHARS, IMPORT_MAX_VERSION
from core.memories import MemoryService
from core.model import NewMemory, format_timestamp
from core.portable import parse_export
from local import cli, portability
from tests.conftest import free_port

Lines = list[dict[str, Any]]
START = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)


def at(seconds: float) -> str:
    return format_timestamp(START + timedelta(seconds=seconds))


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
        elif change == "deleted":
            prior = prior if record["status"] == "deleted" else record["status"]
            deleted_at, record = at(seconds), record | {"status": "deleted"}
        else:
            record = record | {"status": prior}
        revisions.append(_revision(len(revisions) + 1, change, seconds, record))
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


def _set(line: int, *changes: tuple[str, object]) -> Callable[[Lines], None]:
    """Set fields of the file's line `line` (the header is 1), each named by a dotted path (list indexes too)."""

    def edit(body: Lines) -> None:
        for path, value in changes:
            *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
            target: Any = body[line - 2]
            for part in parents:
                target = target[part]
            target[last] = value

    return edit


def _replace(line: int, memory: dict[str, Any]) -> Callable[[Lines], None]:
    def edit(body: Lines) -> None:
        body[line - 2] = memory

    return edit


HISTORY_CASES: dict[str, tuple[Callable[[Lines], None], str]] = {
    "a revision's version that leaves no room": (
        _set(2, ("revisions.1.version", IMPORT_MAX_VERSION + 1)),
        f"line 2: revisions[1].version: must be at most {IMPORT_MAX_VERSION}",
    ),
    "a first change that is not the creation": (
        _set(2, ("revisions.0.change", "updated")),
        "line 2: revisions[0].change: ",
    ),
    "a creation after the first change": (
        _set(2, ("revisions.1.change", "created")),
        "line 2: revisions[1].change: ",
    ),
    "a creation at another time than created_at": (
        _set(2, ("revisions.0.changed_at", at(1))),
        "line 2: revisions[0].changed_at: ",
    ),
    "a creation at a version other than 1": (
        _set(4, ("revisions.0.version", 2), ("memory.version", 2)),
        "line 4: revisions[0].version: ",
    ),
    "a deleted revision ending an active record": (
        _set(3, ("memory.status", "active"), ("prior_status", None), ("deleted_at", None)),
        "line 3: revisions[1].status: ",
    ),
    "an update of a deleted memory": (
        _replace(2, life(1, ("deleted", 60), ("updated", 120))),
        "line 2: revisions[2].change: ",
    ),
    "a delete of a deleted memory": (
        _replace(3, life(2, ("deleted", 60), ("deleted", 120))),
        "line 3: revisions[2].change: ",
    ),
    "a restore of a memory not deleted": (
        _replace(4, life(3, ("restored", 60))),
        "line 4: revisions[1].change: ",
    ),
    "a status deleted by an update": (
        _set(3, ("revisions.1.change", "updated")),
        "line 3: revisions[1].status: ",
    ),
    "an update that does not add 1 to the version": (
        _set(2, ("revisions.1.version", 3)),
        "line 2: revisions[1].version: ",
    ),
    "an update whose updated_at is not its time": (
        _set(2, ("revisions.1.updated_at", at(59))),
        "line 2: revisions[1].updated_at: ",
    ),
    "a delete that changes the content": (
        _set(3, ("revisions.1.content", "changed by a delete")),
        "line 3: revisions[1].content: ",
    ),
    "a revision with another creation time": (
        _set(2, ("revisions.1.created_at", at(1))),
        "line 2: revisions[1].created_at: ",
    ),
    "a change long before the one before it": (
        _replace(2, life(1, ("updated", 600), ("deleted", 120), ("restored", 700))),
        "line 2: revisions[2].changed_at: ",
    ),
    "a read before the creation": (
        _set(4, ("memory.last_accessed_at", at(-1))),
        "line 4: memory.last_accessed_at: ",
    ),
    "a deletion before the creation": (
        _set(3, ("deleted_at", at(-1))),
        "line 3: deleted_at: ",
    ),
}


@pytest.mark.parametrize(("edit", "said"), HISTORY_CASES.values(), ids=HISTORY_CASES.keys())
def test_an_import_whose_line_no_real_memory_can_have_is_refused_naming_the_line_and_field(
    edit: Callable[[Lines], None], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = lines()
    assert parse_export(text(header(), body))  # the file as the service writes it imports
    edit(body)

    assert said in refused(tmp_path, capsys, text(header(), body))


def test_a_read_before_the_creation_is_refused_without_history_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = [without_history(line) for line in lines()]
    body[2]["memory"]["last_accessed_at"] = at(-1)

    assert "line 4: memory.last_accessed_at: must not be before created_at" in refused(
        tmp_path, capsys, text(header(history=False), body)
    )


FLAG_CASES: dict[str, tuple[dict[str, Any], Callable[[Lines], object], str]] = {
    "history false, a line with revisions": (
        header(history=False),
        lambda body: [body[0].pop("revisions"), body[2].pop("revisions")],
        "line 3: revisions: ",
    ),
    "history true, a line without revisions": (header(), lambda body: body[1].pop("revisions"), "line 3: revisions: "),
    "include_deleted false, a deleted line": (
        header(include_deleted=False),
        lambda body: None,
        "line 3: memory.status: ",
    ),
}


@pytest.mark.parametrize(("head", "edit", "said"), FLAG_CASES.values(), ids=FLAG_CASES.keys())
def test_an_import_whose_header_flags_disagree_with_a_line_is_refused_on_that_line(
    head: dict[str, Any], edit: Callable[[Lines], object], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = lines()
    edit(body)

    assert said in refused(tmp_path, capsys, text(head, body))


def test_a_line_nested_too_deeply_is_a_line_numbered_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = text(header(), lines()).splitlines()

    def nested(depth: int) -> str:
        return "\n".join([*body[:2], '{"memory": ' + "[" * depth + "]" * depth + "}", *body[3:]]) + "\n"

    assert "line 3: line: is nested too deeply" in refused(tmp_path, capsys, nested(100_000))
    # Within the parser's reach, the same line is a plain field error.
    assert "line 3: memory: must be a JSON object" in refused(tmp_path, capsys, nested(900))


def test_ids_and_versions_that_leave_no_room_are_refused_and_those_at_the_bound_imported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = [without_history(line) for line in lines()]
    body[1]["memory"] |= {"id": IMPORT_MAX_ID - 1, "version": IMPORT_MAX_VERSION}
    body[2]["memory"] |= {"id": IMPORT_MAX_ID}
    assert [m.memory.id for m in parse_export(text(header(history=False), body))] == [
        1,
        IMPORT_MAX_ID - 1,
        IMPORT_MAX_ID,
    ]

    body[2]["memory"]["id"] = IMPORT_MAX_ID + 1
    said = refused(tmp_path, capsys, text(header(history=False), body))
    assert f"line 4: memory.id: must be at most {IMPORT_MAX_ID}" in said
    body[2]["memory"]["id"] = IMPORT_MAX_ID
    body[1]["memory"]["version"] = IMPORT_MAX_VERSION + 1
    said = refused(tmp_path, capsys, text(header(history=False), body))
    assert f"line 3: memory.version: must be at most {IMPORT_MAX_VERSION}" in said


def test_a_line_longer_than_the_bound_is_refused_before_it_is_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = lines()
    body[1]["memory"]["content"] = "x" * IMPORT_MAX_LINE_CHARS

    said = refused(tmp_path, capsys, text(header(), body))

    assert "line 3: line: is " in said
    assert f"at most {IMPORT_MAX_LINE_CHARS}" in said


def test_a_byte_order_mark_is_skipped_and_a_file_that_is_not_utf8_is_refused_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = text(header(), lines())
    assert parse_export("\ufeff" + content) == parse_export(content)

    path = tmp_path / "latin1.ndjson"
    path.write_bytes(content.replace("memory 3", "m\xe9moire").encode("latin-1"))
    code = cli.main(["import", "--namespace", "alice", str(path), "--ddb-port", str(free_port())])

    assert code == 1
    assert "cannot read" in capsys.readouterr().err


def test_what_a_real_store_exports_is_accepted_histories_begun_late_and_overlapping_changes() -> None:
    body = lines()
    # A memory stored before history existed: its history begins with its first change after the upgrade.
    begun_late = life(1, ("updated", 60), ("deleted", 120))
    begun_late["revisions"] = begun_late["revisions"][1:]
    for number, revision in enumerate(begun_late["revisions"], start=1):
        revision["revision"] = number
    # Two overlapping updates land in the other order than they arrived: the second carries the earlier time.
    overlapping = life(2, ("updated", 60), ("updated", 50))

    imported = parse_export(text(header(), [begun_late, overlapping, body[2]]))

    assert [memory.memory.id for memory in imported] == [1, 2, 3]


def test_an_export_warns_of_each_memory_whose_line_no_import_takes(
    moto_table: str, moto_service: MemoryService, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    moto_service.create("alice", NewMemory.parse({"content": "short"}))
    long = moto_service.create("alice", NewMemory.parse({"content": "long " * 200}))
    monkeypatch.setattr(portability, "IMPORT_MAX_LINE_CHARS", 1000)
    args = cli._parser().parse_args(["export", "--namespace", "alice", "--history", "--aws", "--table", moto_table])
    out = io.StringIO()

    code = portability.export_namespace(args, out)

    err = capsys.readouterr().err
    assert code == 0
    assert len(out.getvalue().splitlines()) == 3  # written all the same: the file still holds every memory
    # Only the long one is named: "memories 1, 2" would name both.
    assert f"warning: the lines of memories {long.id} are longer than an import takes (1000 characters)" in err
