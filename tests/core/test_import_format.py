"""`agent-memory import` refuses a file that leaves no room or breaks the format, naming the line and the field,
before it touches any store: a header whose flags disagree with its lines, ids and versions too high to leave room
after them, a line nested too deeply or too long. A byte-order mark is read past; an export warns of a line no import
takes."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.limits import IMPORT_MAX_ID, IMPORT_MAX_LINE_CHARS, IMPORT_MAX_VERSION
from core.memories import MemoryService
from core.model import NewMemory
from core.portable import parse_export
from local import cli, portability
from tests.conftest import free_port
from tests.exports import Lines, header, lines, refused, text, without_history

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


def twice(value: dict[str, Any], key: str) -> dict[str, Any]:
    """`value` whose `key` is dumped twice (the same value both times): first under a stand-in name, renamed after."""
    return {"GIVEN TWICE": value[key], **value}


TWICE_CASES: dict[str, tuple[str, Callable[[dict[str, Any], Lines], None], int]] = {
    "in the header": ("history", lambda head, body: head.update(twice(head, "history")), 1),
    "in a line": ("memory", lambda head, body: body.__setitem__(0, twice(body[0], "memory")), 2),
    "in a record": ("id", lambda head, body: body[1].update(memory=twice(body[1]["memory"], "id")), 3),
    "in a revision": (
        "change",
        lambda head, body: body[2]["revisions"].__setitem__(0, twice(body[2]["revisions"][0], "change")),
        4,
    ),
}


@pytest.mark.parametrize(("key", "edit", "line"), TWICE_CASES.values(), ids=TWICE_CASES.keys())
def test_a_key_given_twice_in_an_object_is_a_line_numbered_error(
    key: str,
    edit: Callable[[dict[str, Any], Lines], None],
    line: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Which value was meant is unclear (the HTTP door refuses such a body too): an import takes neither, even when
    # the two agree, rather than the last one as JSON parsers do.
    head, body = header(), lines()
    edit(head, body)
    content = text(head, body).replace('"GIVEN TWICE"', f'"{key}"')

    field = "header" if line == 1 else "line"
    assert f"line {line}: {field}: gives {key!r} more than once" in refused(tmp_path, capsys, content)


@pytest.mark.parametrize("revisions", [5, True, "created"])
def test_revisions_that_are_no_list_are_a_line_numbered_error(
    revisions: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = lines()
    body[0]["revisions"] = revisions

    assert "line 2: revisions: must be a list of revisions" in refused(tmp_path, capsys, text(header(), body))


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


def test_an_export_warns_of_each_memory_whose_line_no_import_takes(
    moto_table: str, moto_service: MemoryService, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    moto_service.create("alice", NewMemory.parse({"content": "short"}))
    long = moto_service.create("alice", NewMemory.parse({"content": "long " * 200}))
    monkeypatch.setattr(portability, "IMPORT_MAX_LINE_CHARS", 1000)
    args = cli.build_parser().parse_args(
        ["export", "--namespace", "alice", "--history", "--aws", "--table", moto_table]
    )
    out = io.StringIO()

    code = portability.export_namespace(args, out)

    err = capsys.readouterr().err
    assert code == 0
    assert len(out.getvalue().splitlines()) == 3  # written all the same: the file still holds every memory
    # Only the long one is named: "memories 1, 2" would name both.
    assert f"warning: the lines of memories {long.id} are longer than an import takes (1000 characters)" in err
