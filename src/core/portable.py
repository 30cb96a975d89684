"""The export format: newline-delimited JSON, a header line naming the format and its version, then one line per
memory (in id order) with everything needed to bring it back exactly: the record (every timestamp, the version,
the status), for a deleted memory the status it had and when it was deleted, and, when asked for, its history.

Every line is validated by the contract's rules before anything is imported (`parse_export`), so a file is either
imported whole or refused with the number of its first bad line: a record in its stored form, ids and versions that
leave room after them, a history some memory could have lived (core.life), a header whose flags agree with the lines.

A line ends at "\n" only. The export writes every other character that line-splitting tools break lines at (U+2028,
U+2029, U+0085; JSON already escapes those below U+0020) as a JSON escape, so each memory stays on one line for them
too; files of the first version hold them raw and still import.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Final, Literal, Self, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.clock import TIMESTAMP_FORMAT, format_timestamp, utc_now
from core.errors import FieldError, InvalidInputError
from core.history import Revision
from core.life import after_the_import, life_errors
from core.limits import IMPORT_MAX_ID, IMPORT_MAX_LINE_CHARS, IMPORT_MAX_VERSION, MAX_MEMORY_ID, MAX_VERSION
from core.model import Content, Memory, MemoryType, Status, Tags, WritableStatus, field_errors

FORMAT: Final = "agent-memory-export"
FORMAT_VERSION: Final = 1
_BYTE_ORDER_MARK: Final = "\ufeff"
_LINE_BREAKS: Final = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


def _timestamp(value: str | None, field: str) -> None:
    if value is None:
        return
    try:
        valid = datetime.strptime(value, TIMESTAMP_FORMAT).strftime(TIMESTAMP_FORMAT) == value
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"{field} must be a timestamp like 2026-04-06T14:12:00.000000Z, not {value!r}")


def _leaving_room(bound: int, room: str) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value > bound:
            raise ValueError(f"must be at most {bound} in an import, {room}")
        return value

    return check


ImportedId = Annotated[
    int,
    Field(ge=1),
    AfterValidator(
        _leaving_room(IMPORT_MAX_ID, f"so new memories keep room for their ids after it (up to {MAX_MEMORY_ID})")
    ),
]
ImportedVersion = Annotated[
    int,
    Field(ge=1),
    AfterValidator(
        _leaving_room(
            IMPORT_MAX_VERSION, f"so the memory keeps room for its next changes (up to version {MAX_VERSION})"
        )
    ),
]


class ExportHeader(BaseModel):
    """The first line of an export."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["agent-memory-export"] = FORMAT
    version: Literal[1] = FORMAT_VERSION
    namespace: str
    exported_at: str
    include_deleted: bool
    history: bool


class StoredRecord(BaseModel):
    """A record as an import stores it: the contract's rules for each field, already in their stored form."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: ImportedId
    content: Content
    tags: Tags
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    memory_type: MemoryType
    status: Status
    version: ImportedVersion

    @model_validator(mode="after")
    def _times(self) -> Self:
        for field in ("created_at", "updated_at", "last_accessed_at"):
            _timestamp(getattr(self, field), field)
        if self.updated_at < self.created_at:
            raise ValueError("updated_at must not be before created_at")
        return self


class ExportedMemory(BaseModel):
    """One memory line: the record, what a deleted one needs to be restored and purged on time, its history."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory: Memory
    prior_status: WritableStatus | None = None
    deleted_at: str | None = None
    # Oldest first; None when the export left history out.
    revisions: list[Revision] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        deleted = self.memory.status == "deleted"
        if deleted != (self.prior_status is not None and self.deleted_at is not None):
            raise ValueError("prior_status and deleted_at are given exactly when the memory is deleted")
        _timestamp(self.deleted_at, "deleted_at")
        if self.revisions is not None:
            self._check_history(self.revisions)
        return self

    def _check_history(self, revisions: list[Revision]) -> None:
        if [revision.revision for revision in revisions] != list(range(1, len(revisions) + 1)):
            raise ValueError("revisions must be numbered 1, 2, 3 ... oldest first")
        for revision in revisions:
            StoredRecord.model_validate(revision.memory().model_dump())
            _timestamp(revision.changed_at, "changed_at")
            if revision.id != self.memory.id:
                raise ValueError(f"revision {revision.revision} belongs to memory {revision.id}")

    @classmethod
    def of(
        cls, memory: Memory, prior_status: str | None, deleted_at: str | None, revisions: list[Revision] | None
    ) -> Self:
        status = cast("WritableStatus | None", prior_status)
        return cls(memory=memory, prior_status=status, deleted_at=deleted_at, revisions=revisions)

    def line(self) -> str:
        fields: dict[str, Any] = {"memory": self.memory.model_dump(mode="json")}
        if self.memory.status == "deleted":
            fields |= {"prior_status": self.prior_status, "deleted_at": self.deleted_at}
        if self.revisions is not None:
            fields["revisions"] = [revision.model_dump(mode="json") for revision in self.revisions]
        return _dumps(fields)


def header_line(header: ExportHeader) -> str:
    return _dumps(header.model_dump(mode="json"))


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_LINE_BREAKS)


class BadLineError(InvalidInputError):
    """A line of an import that breaks the format or the contract; `line_number` counts from 1."""

    def __init__(self, line_number: int, errors: list[FieldError]) -> None:
        self.line_number = line_number
        super().__init__([FieldError(f"line {line_number}: {error.field}", error.message) for error in errors])


def parse_header(text: str) -> ExportHeader:
    data = _json(text, 1, "header", f"must be a JSON object naming format {FORMAT!r}")
    try:
        return ExportHeader.model_validate(data)
    except ValidationError as exc:
        raise BadLineError(1, field_errors(exc)) from None


def _json(text: str, line_number: int, field: str, not_json: str | None = None) -> object:
    """One line's JSON, bounded: a line too long or nested too deeply to be an export's is refused, not parsed."""
    if len(text) > IMPORT_MAX_LINE_CHARS:
        message = f"is {len(text)} characters long; a line of an import holds at most {IMPORT_MAX_LINE_CHARS}"
        raise BadLineError(line_number, [FieldError(field, message)])
    try:
        return json.loads(text, object_pairs_hook=_object)
    except _KeyGivenTwiceError as exc:
        message = f"gives {exc.key!r} more than once in one object, which leaves unclear which value is meant"
        raise BadLineError(line_number, [FieldError(field, message)]) from None
    except RecursionError:
        message = "is nested too deeply: a line of an export nests objects and lists a few levels deep"
        raise BadLineError(line_number, [FieldError(field, message)]) from None
    except ValueError as exc:
        raise BadLineError(line_number, [FieldError(field, not_json or f"is not JSON: {exc}")]) from None


class _KeyGivenTwiceError(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object of a line; _KeyGivenTwiceError naming its first key given twice (JSON parsers keep the last)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _KeyGivenTwiceError(key)
        found[key] = value
    return found


def _stored_form(record: object, field: str, line_number: int) -> None:
    """A record exactly as the service stores it: valid by the contract's rules and already normalised."""
    try:
        stored = StoredRecord.model_validate(record)
    except ValidationError as exc:
        # A record that is not an object at all is named by its own field ("memory"), not as a body.
        errors = [
            FieldError(field if error.field == "body" else f"{field}.{error.field}", error.message)
            for error in field_errors(exc)
        ]
        raise BadLineError(line_number, errors) from None
    if stored.model_dump() != record:
        assert isinstance(record, dict)  # a record that validated is a JSON object
        unlike = [name for name, value in stored.model_dump().items() if value != record.get(name)]
        raise BadLineError(
            line_number,
            [FieldError(f"{field}.{name}", "is not in its stored form (trimmed, lower-cased tags)") for name in unlike],
        )


def parse_line(text: str, line_number: int, now: str | None = None) -> ExportedMemory:
    """One memory line, checked by the contract's rules (the record in its stored form, its history coherent) and,
    given `now` (the import's own time), recording nothing after it."""
    data = _json(text, line_number, "line")
    if not isinstance(data, dict):
        raise BadLineError(line_number, [FieldError("line", "must be a JSON object")])
    _stored_form(data.get("memory"), "memory", line_number)
    revisions = data.get("revisions")
    if not isinstance(revisions, list | None):
        raise BadLineError(line_number, [FieldError("revisions", "must be a list of revisions, oldest first")])
    for index, revision in enumerate(revisions or []):
        if isinstance(revision, dict):
            record = {name: value for name, value in revision.items() if name in StoredRecord.model_fields}
            _stored_form({**record, "last_accessed_at": None}, f"revisions[{index}]", line_number)
    try:
        exported = ExportedMemory.model_validate(data)
    except ValidationError as exc:
        raise BadLineError(line_number, field_errors(exc)) from None
    problem = next(life_errors(exported.memory, exported.deleted_at, exported.revisions, now), None)
    if problem is not None:
        raise BadLineError(line_number, [problem])
    return exported


def parse_export(text: str, now: str | None = None) -> list[ExportedMemory]:
    """Every memory of an export, each line checked and agreeing with the header, and none recording a time after
    `now`, the import's own time (by default the clock's now); BadLineError names the first bad line. A byte-order
    mark before the header is skipped, and a "\r" before a "\n" (files through Windows tools)."""
    now = now or format_timestamp(utc_now())
    lines = text.removeprefix(_BYTE_ORDER_MARK).split("\n")
    if all(_blank(line) for line in lines):
        raise BadLineError(1, [FieldError("header", "is missing: the file is empty")])
    header = parse_header(lines[0].removesuffix("\r"))
    if header.exported_at > now:
        raise BadLineError(1, [FieldError("exported_at", after_the_import(now))])
    memories: list[ExportedMemory] = []
    for number, line in enumerate(lines[1:], start=2):
        if _blank(line):
            continue
        memory = parse_line(line.removesuffix("\r"), number, now)
        _agree(header, memory, number)
        if memories and memory.memory.id <= memories[-1].memory.id:
            before = memories[-1].memory.id
            raise BadLineError(number, [FieldError("memory.id", f"must be above {before}, the id before it")])
        memories.append(memory)
    return memories


def _blank(line: str) -> bool:
    return not line.strip(" \t\r")


def _agree(header: ExportHeader, exported: ExportedMemory, line_number: int) -> None:
    """A line holds what the header says the export holds: history exactly when it has history, deleted memories
    only when it includes them."""
    if exported.revisions is not None and not header.history:
        message = "must not be given: the header says this export has no history (history: false)"
        raise BadLineError(line_number, [FieldError("revisions", message)])
    if exported.revisions is None and header.history:
        message = "is required: the header says this export has history (history: true); [] for a memory without any"
        raise BadLineError(line_number, [FieldError("revisions", message)])
    if exported.memory.status == "deleted" and not header.include_deleted:
        message = (
            "must not be 'deleted': the header says this export leaves deleted memories out (include_deleted: false)"
        )
        raise BadLineError(line_number, [FieldError("memory.status", message)])
