"""The retrieval query and the envelope: one definition that both doors accept and return."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from core.errors import FieldError, InvalidInputError
from core.model import InputModel, Memory, MemoryType, Status

SortKey = Literal["id", "created_at", "updated_at", "last_accessed_at"]
SORT_KEYS: tuple[str, ...] = get_args(SortKey)
RETRIEVAL_FIELDS = ("status", "memory_type", "tag", "q", "sort", "limit", "offset")

DEFAULT_LIMIT = 10
MAX_LIMIT = 100
Q_MAX_CHARS = 256
# The largest offset (a signed 64-bit integer): clients in typed languages can always represent it.
MAX_OFFSET = 2**63 - 1


_INTEGER = re.compile(r"-?[0-9]+")


def _integer(value: object) -> object:
    # Query strings arrive as text and tool arguments as numbers; both mean the same integer.
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    if isinstance(value, str):
        text = value.strip()
        # Beyond 4300 digits int() refuses to parse; such a number is no use as a limit or offset anyway.
        if not _INTEGER.fullmatch(text) or len(text) > 4000:
            raise ValueError("must be an integer")
        return int(text)
    return value


def _blank_is_absent(value: object) -> object:
    return None if value == "" else value


class RetrievalQuery(InputModel):
    """Filters, sort and paging as CONTRACT.md's retrieval section defines them, already normalised."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    status: Status | None = Field(
        default=None, description="Exact lifecycle filter. Without it, deleted memories are left out."
    )
    memory_type: MemoryType | None = Field(default=None, description="Exact type filter.")
    tag: Annotated[str | None, BeforeValidator(_blank_is_absent)] = Field(
        default=None, description="Matches one whole stored tag exactly (trimmed and lower-cased first)."
    )
    q: Annotated[str | None, BeforeValidator(_blank_is_absent)] = Field(
        default=None,
        description=f"Case-insensitive substring of the content or of a tag; 1 to {Q_MAX_CHARS} characters.",
    )
    sort: SortKey = Field(
        default="id",
        description="`id` ascending, or a timestamp descending with ties broken by id descending.",
    )
    limit: Annotated[int, BeforeValidator(_integer)] = Field(
        default=DEFAULT_LIMIT, description=f"Page size, 1 or more; values over {MAX_LIMIT} are served as {MAX_LIMIT}."
    )
    offset: Annotated[int, BeforeValidator(_integer)] = Field(
        default=0, description=f"Matches to skip, 0 to {MAX_OFFSET}; past the last match the page is empty."
    )

    @field_validator("tag")
    @classmethod
    def _normalise_tag(cls, value: str | None) -> str | None:
        return (value.strip().lower() or None) if value is not None else None

    @field_validator("q")
    @classmethod
    def _bound_q(cls, value: str | None) -> str | None:
        if value is not None and len(value) > Q_MAX_CHARS:
            raise ValueError(f"must be 1 to {Q_MAX_CHARS} characters")
        return value

    @field_validator("limit")
    @classmethod
    def _cap_limit(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be 1 or more")
        return min(value, MAX_LIMIT)

    @field_validator("offset")
    @classmethod
    def _check_offset(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must be 0 or more")
        if value > MAX_OFFSET:
            raise ValueError(f"must be at most {MAX_OFFSET} (2^63-1)")
        return value

    @classmethod
    def from_params(cls, params: Mapping[str, list[str]]) -> RetrievalQuery:
        """Parse query-string parameters; a retrieval field given twice is ambiguous and refused."""
        repeated = [name for name in RETRIEVAL_FIELDS if len(params.get(name, [])) > 1]
        if repeated:
            raise InvalidInputError([FieldError(name, "must be given at most once") for name in repeated])
        return cls.parse({name: values[0] for name, values in params.items() if name in RETRIEVAL_FIELDS})

    def matches(self, memory: Memory) -> bool:
        """The `tag` and `q` filters; `status` and `memory_type` are applied by the store."""
        if self.tag is not None and self.tag not in memory.tags:
            return False
        if self.q is not None:
            needle = self.q.casefold()
            return needle in memory.content.casefold() or any(needle in tag.casefold() for tag in memory.tags)
        return True


class Page(BaseModel):
    """The envelope every retrieval returns."""

    model_config = ConfigDict(frozen=True)

    items: list[Memory]
    total: int = Field(description="Every match before paging.")
    limit: int = Field(description="The page size served.")
    offset: int = Field(description="The offset served.")
    has_more: bool = Field(description="Whether matches remain after this page: offset + len(items) < total.")
