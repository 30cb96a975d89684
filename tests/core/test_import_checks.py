"""`agent-memory import` refuses a history no memory can have lived, naming the line and the field, before it
touches any store; what a real store can export (histories begun after a memory's creation, overlapping requests'
times) is accepted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.limits import IMPORT_MAX_VERSION
from core.portable import BadLineError, parse_export
from tests.exports import Lines, at, header, life, lines, refused, text, without_history


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


def _edited(line: dict[str, Any], revision: int, **fields: object) -> dict[str, Any]:
    """`line` with fields of its revision `revision` (0 is the creation) set, the record too where it holds them."""
    line["revisions"][revision] |= fields
    if revision == len(line["revisions"]) - 1:
        line["memory"] |= {name: value for name, value in fields.items() if name in line["memory"]}
    return line


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
    "a supersede that leaves the memory active": (
        _replace(2, _edited(life(1, ("superseded", 60)), 1, status="active")),
        "line 2: revisions[1].status: must be 'invalid'",
    ),
    "a supersede that names no superseder": (
        _replace(2, _edited(life(1, ("superseded", 60)), 1, superseded_by=None)),
        "line 2: revisions[1].superseded_by: must name the memory that superseded it",
    ),
    "an update that names a superseder": (
        _replace(2, _edited(life(1, ("updated", 60)), 1, superseded_by=7)),
        "line 2: revisions[1].superseded_by: must be null",
    ),
    "a supersede of a deleted memory": (
        _replace(2, life(1, ("deleted", 60), ("superseded", 120))),
        "line 2: revisions[2].change: ",
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


def test_what_a_real_store_exports_is_accepted_histories_begun_late_overlapping_changes_and_supersedes() -> None:
    # A memory imported without its history: its history begins with its first change after the import.
    begun_late = life(1, ("updated", 60), ("deleted", 120))
    begun_late["revisions"] = begun_late["revisions"][1:]
    for number, revision in enumerate(begun_late["revisions"], start=1):
        revision["revision"] = number
    # Two overlapping updates land in the other order than they arrived: the second carries the earlier time.
    overlapping = life(2, ("updated", 60), ("updated", 50))
    superseded = life(3, ("updated", 60), ("superseded", 120), ("updated", 180))

    imported = parse_export(text(header(), [begun_late, overlapping, superseded]))

    assert [memory.memory.id for memory in imported] == [1, 2, 3]
    assert [r.superseded_by for r in imported[2].revisions or []] == [None, None, 99, None]


FUTURE = "9999-12-31T23:59:59.999999Z"
FUTURE_CASES: dict[str, tuple[Callable[[Lines], None], str]] = {
    "a read in year 9999": (_set(4, ("memory.last_accessed_at", FUTURE)), "line 4: memory.last_accessed_at: "),
    "a deletion in year 9999": (_set(3, ("deleted_at", FUTURE)), "line 3: deleted_at: "),
    "a whole life in year 9999": (
        _replace(2, {"memory": life(1)["memory"] | {"created_at": FUTURE, "updated_at": FUTURE}, "revisions": []}),
        "line 2: memory.created_at: ",
    ),
}


@pytest.mark.parametrize(("edit", "said"), FUTURE_CASES.values(), ids=FUTURE_CASES.keys())
def test_an_import_holding_a_time_after_its_own_is_refused_naming_the_line_and_field(
    edit: Callable[[Lines], None], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = lines()
    edit(body)

    err = refused(tmp_path, capsys, text(header(), body))

    assert f"{said}must not be after this import's own time (" in err


def test_an_export_made_after_the_imports_own_time_is_refused_naming_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(tmp_path, capsys, text(header() | {"exported_at": FUTURE}, lines()))

    assert "line 1: exported_at: must not be after this import's own time (" in err


def test_the_imports_own_time_is_its_clock_reading_when_it_began() -> None:
    content = text(header() | {"exported_at": at(100)}, lines())

    with pytest.raises(BadLineError) as raised:
        parse_export(content, now=at(100))

    # Line 2's memory was deleted at 120 s and restored at 180 s, after the import's time.
    assert str(raised.value) == (
        f"line 2: revisions[2].changed_at: must not be after this import's own time ({at(100)}): an export holds "
        "only what has already happened"
    )
    assert parse_export(content, now=at(180))
