"""The export format: newline-delimited JSON, a header line naming the format and its version, then one line per
memory (in id order) with everything needed to bring it back exactly: the record (every timestamp, the version,
the status), for a deleted memory the status it had and when it was deleted, and, when asked for, its history.

Every line is validated by the contract's rules before anything is imported (`parse_line`), so a file is either
imported whole or refused with the number of its first bad line.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final, Literal, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import FieldError, InvalidInputError
from core.history import Revision
from core.limits import MAX_MEMORY_ID, MAX_VERSION
from core.model import TIMESTAMP_FORMAT, Content, Memory, MemoryType, Status, Tags, WritableStatus, field_errors

FORMAT: Final = "agent-memory-export"
FORMAT_VERSION: Final = 1


def _timestamp(value: str | None, field: str) -> None:
    if value is None:
        return
    try:
        valid = datetime.strptime(value, TIMESTAMP_FORMAT).strftime(TIMESTAMP_FORMAT) == value
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"{field} must be a timestamp like 2026-04-06T14:12:00.000000Z, not {value!r}")


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
    """A record as stored: the contract's rules for each field, already in their stored form."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: int = Field(ge=1, le=MAX_MEMORY_ID)
    content: Content
    tags: Tags
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    memory_type: MemoryType
    status: Status
    version: int = Field(ge=1, le=MAX_VERSION)

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
        if revisions and revisions[-1].memory() != self.memory.model_copy(update={"last_accessed_at": None}):
            raise ValueError("the last revision must be the memory as it is (but last_accessed_at)")

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
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class BadLineError(InvalidInputError):
    """A line of an import that breaks the format or the contract; `line_number` counts from 1."""

    def __init__(self, line_number: int, errors: list[FieldError]) -> None:
        self.line_number = line_number
        super().__init__([FieldError(f"line {line_number}: {error.field}", error.message) for error in errors])


def parse_header(text: str) -> ExportHeader:
    try:
        return ExportHeader.model_validate(json.loads(text))
    except ValidationError as exc:
        raise BadLineError(1, field_errors(exc)) from None
    except ValueError:
        raise BadLineError(1, [FieldError("header", f"must be a JSON object naming format {FORMAT!r}")]) from None


def _stored_form(record: object, field: str, line_number: int) -> None:
    """A record exactly as the service stores it: valid by the contract's rules and already normalised."""
    try:
        stored = StoredRecord.model_validate(record)
    except ValidationError as exc:
        errors = [FieldError(f"{field}.{error.field}", error.message) for error in field_errors(exc)]
        raise BadLineError(line_number, errors) from None
    if stored.model_dump() != record:
        assert isinstance(record, dict)  # a record that validated is a JSON object
        unlike = [name for name, value in stored.model_dump().items() if value != record.get(name)]
        raise BadLineError(
            line_number,
            [FieldError(f"{field}.{name}", "is not in its stored form (trimmed, lower-cased tags)") for name in unlike],
        )


def parse_line(text: str, line_number: int) -> ExportedMemory:
    """One memory line, checked by the contract's rules (the record in its stored form, its history coherent)."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise BadLineError(line_number, [FieldError("line", "must be a JSON object")])
        _stored_form(data.get("memory"), "memory", line_number)
        for index, revision in enumerate(data.get("revisions") or []):
            if isinstance(revision, dict):
                record = {name: value for name, value in revision.items() if name in StoredRecord.model_fields}
                _stored_form({**record, "last_accessed_at": None}, f"revisions[{index}]", line_number)
        return ExportedMemory.model_validate(data)
    except ValidationError as exc:
        raise BadLineError(line_number, field_errors(exc)) from None
    except ValueError as exc:
        raise BadLineError(line_number, [FieldError("line", f"is not JSON: {exc}")]) from None


def parse_export(text: str) -> list[ExportedMemory]:
    """Every memory of an export, each line checked; BadLineError names the first bad line."""
    lines = text.splitlines()
    if not lines:
        raise BadLineError(1, [FieldError("header", "is missing: the file is empty")])
    parse_header(lines[0])
    memories: list[ExportedMemory] = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        memory = parse_line(line, number)
        if memories and memory.memory.id <= memories[-1].memory.id:
            before = memories[-1].memory.id
            raise BadLineError(number, [FieldError("memory.id", f"must be above {before}, the id before it")])
        memories.append(memory)
    return memories
