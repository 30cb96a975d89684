"""A memory's life: the revision every change leaves, the history query and its envelope, and the retention of
deleted memories before they are purged."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.contract import Envelope, Moment, PageLimit, PageOffset, RetrievalQuery
from core.limits import DEFAULT_LIMIT
from core.model import InputModel, Memory, MemoryType, Status

Change = Literal["created", "updated", "deleted", "restored", "superseded"]

# How long a deleted memory stays restorable before it is purged, unless configured otherwise.
DEFAULT_RETENTION_DAYS: Final = 30
# How far back a namespace's changes are read when the caller does not say (a week: what a person looks back on).
DEFAULT_CHANGES_DAYS: Final = 7


class Revision(BaseModel):
    """A memory as it was right after one change: every field of the record but `last_accessed_at`, what the
    change was, when, and the id of the API key that made it (never the key)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    revision: int = Field(ge=1, description="The change's number in this memory's life: 1 is its creation.")
    change: Change = Field(description="created, updated, deleted, restored or superseded.")
    changed_at: str = Field(description="When the change was made.")
    key_id: str | None = Field(description="The id of the API key that made it; null for an unauthenticated server.")
    id: int = Field(ge=1)
    content: str
    tags: list[str]
    created_at: str
    updated_at: str
    memory_type: MemoryType
    status: Status
    version: int = Field(ge=1)
    superseded_by: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda value: value is None,
        description="Only on a change 'superseded': the id of the memory that superseded it.",
    )

    @classmethod
    def of(
        cls,
        memory: Memory,
        number: int,
        change: Change,
        changed_at: str,
        key_id: str | None,
        superseded_by: int | None = None,
    ) -> Revision:
        return cls.model_construct(
            revision=number,
            change=change,
            changed_at=changed_at,
            key_id=key_id,
            **memory.model_dump(exclude={"last_accessed_at"}),
            superseded_by=superseded_by,
        )

    def memory(self) -> Memory:
        """The record this revision holds, never accessed."""
        return Memory.model_construct(
            **self.model_dump(exclude={"revision", "change", "changed_at", "key_id", "superseded_by"}),
            last_accessed_at=None,
        )


class HistoryQuery(InputModel):
    """Paging over a memory's revisions, by the retrieval's rules for `limit` and `offset`."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    limit: PageLimit = Field(default=DEFAULT_LIMIT, description=RetrievalQuery.model_fields["limit"].description)
    offset: PageOffset = Field(default=0, description=RetrievalQuery.model_fields["offset"].description)


class HistoryPage(Envelope[Revision]):
    """The retrieval envelope over revisions, newest first."""

    total: int = Field(description="Every revision of the memory.")
    has_more: bool = Field(description="Whether revisions remain after this page: offset + len(items) < total.")


class ChangesQuery(InputModel):
    """A namespace's changes since a moment, paged by the retrieval's rules for `limit` and `offset`."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    since: Moment = Field(
        default=None,
        description=f"Changes made at or after this moment (RFC 3339); default {DEFAULT_CHANGES_DAYS} days before "
        "the request.",
    )
    limit: PageLimit = Field(default=DEFAULT_LIMIT, description=RetrievalQuery.model_fields["limit"].description)
    offset: PageOffset = Field(default=0, description=RetrievalQuery.model_fields["offset"].description)


class ChangesPage(Envelope[Revision]):
    """The retrieval envelope over a namespace's revisions, newest first, and the moment they are read from."""

    total: int = Field(description="Every change since `since` of the memories still stored.")
    has_more: bool = Field(description="Whether changes remain after this page: offset + len(items) < total.")
    since: str = Field(description="The moment served: changes at or after it are counted.")
