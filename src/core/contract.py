"""The retrieval query and the envelope: one definition that both doors accept and return."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Generic, Literal, Self, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator

from core.clock import format_timestamp
from core.limits import DEFAULT_LIMIT, MAX_INTEGER_DIGITS, MAX_LIMIT, MAX_OFFSET, Q_MAX_CHARS
from core.model import InputModel, Memory, MemoryType, Status, normalize_tag

SortKey = Literal["id", "created_at", "updated_at", "last_accessed_at"]
SORT_KEYS: tuple[str, ...] = get_args(SortKey)
ItemT = TypeVar("ItemT")

# The filters' and paging's rules as JSON Schema (validated by RetrievalQuery's validators, in the contract's words).
Text = Annotated[str, WithJsonSchema({"type": "string", "maxLength": Q_MAX_CHARS})]
Limit = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 1})]
Offset = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 0, "maximum": MAX_OFFSET})]


_INTEGER = re.compile(r"-?[0-9]+")


def integer(value: object) -> int:
    """An integer as either door sends one: query strings as text, tool arguments as JSON numbers (a whole number
    written with a fraction, 3.0, is that integer, as JSON Schema's `integer` says). Anything else is refused here,
    in the contract's words."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text) and len(text) <= MAX_INTEGER_DIGITS:
            return int(text)
    raise ValueError("must be an integer")


def cap_limit(value: int) -> int:
    """A page size as served: 1 or more, capped at MAX_LIMIT."""
    if value < 1:
        raise ValueError("must be 1 or more")
    return min(value, MAX_LIMIT)


def check_offset(value: int) -> int:
    if value < 0:
        raise ValueError("must be 0 or more")
    if value > MAX_OFFSET:
        raise ValueError(f"must be at most {MAX_OFFSET} (2^63-1)")
    return value


# RFC 3339's date-time (section 5.6; `T` and `Z` in either case, as its note allows), the one spelling `as_of` and
# `since` take.
_DATE_TIME: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_DATE_TIME_RULE: Final = "must be a date and time with its offset (RFC 3339), e.g. 2026-12-04T10:00:00Z"
# The moments the contract's timestamps can spell (years 0001 to 9999, in UTC).
_EARLIEST: Final = datetime.min.replace(tzinfo=UTC)
_LATEST: Final = datetime.max.replace(tzinfo=UTC)


def _moment(value: object) -> object:
    """An RFC 3339 date-time (any number of fraction digits, read to the microsecond) in the contract's spelling, UTC.

    Every RFC 3339 date-time is taken, so a client generating from the published `format: date-time` is never
    refused: a leap second (`:60`) is read as the last microsecond of its minute, and a moment whose UTC lies outside
    the years 0001 to 9999 (year 0001 or 9999 with an offset) as the nearest one inside them."""
    if value is None or value == "":
        return None
    found = _DATE_TIME.fullmatch(value.strip()) if isinstance(value, str) else None
    moment = _utc(found) if found else None
    if moment is None:
        raise ValueError(_DATE_TIME_RULE + (f", not {value[:40]!r}" if isinstance(value, str) else ""))
    return format_timestamp(moment)


def _utc(found: re.Match[str]) -> datetime | None:
    """The UTC moment a date-time's fields name; None when they name no date, time or offset."""
    year, month, day, hour, minute, second, offset_hours, offset_minutes = (
        int(found[group] or 0) for group in (1, 2, 3, 4, 5, 6, 9, 10)
    )
    if offset_hours > 23 or offset_minutes > 59:
        return None
    try:
        local = datetime(year, month, day, hour, minute, 59 if second == 60 else second, tzinfo=UTC)
    except ValueError:
        return None
    fraction = 999_999 if second == 60 else int((found[7] or "0")[:6].ljust(6, "0"))
    offset = timedelta(hours=offset_hours, minutes=offset_minutes) * (-1 if found[8] == "-" else 1)
    try:
        return local + timedelta(microseconds=fraction) - offset
    except OverflowError:
        return _EARLIEST if offset > timedelta(0) else _LATEST


# Empty is the same as left out (as an empty `q` or `tag` is), so a client filling a form or a URL template need not
# drop the parameter; the schema says so, as it must for a client generating from it.
Moment = Annotated[
    str | None,
    BeforeValidator(_moment),
    WithJsonSchema({"type": "string", "anyOf": [{"format": "date-time"}, {"const": ""}]}),
]


# Paging as the contract's retrieval defines it (a history pages the same way).
PageLimit = Annotated[Limit, BeforeValidator(integer), AfterValidator(cap_limit)]
PageOffset = Annotated[Offset, BeforeValidator(integer), AfterValidator(check_offset)]


def _blank_is_absent(value: object) -> object:
    return None if value == "" else value


class RetrievalQuery(InputModel):
    """Filters, sort and paging as CONTRACT.md's retrieval section defines them, already normalised."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    status: Status | None = Field(
        default=None,
        description="Only memories with this lifecycle status: active (believed true), invalid (marked wrong, kept "
        "for the record) or deleted (soft-deleted; listed only when asked for). Left out: active and invalid ones.",
    )
    memory_type: MemoryType | None = Field(
        default=None,
        description="Only memories of this type: identity (who the user is), preference (likes, dislikes, how "
        "things should be done), event (happened or will happen at a time) or fact (anything else true).",
    )
    tag: Annotated[str | None, BeforeValidator(_blank_is_absent)] = Field(
        default=None,
        description="Only memories carrying exactly this tag, compared after trimming and lower-casing; travel "
        "does not match travel-plans. Empty means no tag filter.",
    )
    q: Annotated[Text | None, BeforeValidator(_blank_is_absent)] = Field(
        default=None,
        description=f"Case-insensitive substring looked for in the content and in each tag, 1 to {Q_MAX_CHARS} "
        "characters; % _ and \\ are ordinary characters. Lexical, not semantic: give a distinctive word, not a "
        "question. Empty means no text filter.",
    )
    sort: SortKey = Field(
        default="id",
        description="Order: id (oldest first), or newest first by created_at, updated_at or last_accessed_at "
        "(ties broken by id, newest first; never-read memories come last under last_accessed_at).",
    )
    limit: PageLimit = Field(
        default=DEFAULT_LIMIT,
        description=f"Page size, 1 or more; values over {MAX_LIMIT} are served as {MAX_LIMIT}. "
        "The envelope's limit says what was served.",
    )
    offset: PageOffset = Field(
        default=0,
        description="Matches to skip, 0 or more: for the next page pass offset + limit while has_more is true. "
        "Past the last match the page is empty.",
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

    @property
    def matches_nothing(self) -> bool:
        """Whether no memory can match, whatever is stored: a `tag` that no stored tag can equal, one that fails the
        tag rule (too long, characters outside the tag alphabet). The service answers such a query without asking
        the store, which could not even look it up: a tag's partition key holds the tag, and DynamoDB refuses keys
        over 2,048 bytes."""
        if self.tag is None:
            return False
        try:
            normalize_tag(self.tag)
        except ValueError:
            return True
        return False

    def matches(self, memory: Memory) -> bool:
        """The `tag` and `q` filters; `status` and `memory_type` are applied by the store."""
        return self.matches_text(memory.content, memory.tags)

    def matches_text(self, content: str, tags: list[str]) -> bool:
        """`matches` for a memory of this content and these tags (a store that reads them before the rest)."""
        if self.tag is not None and self.tag not in tags:
            return False
        if self.q is not None:
            needle = self.q.casefold()
            return needle in content.casefold() or any(needle in tag.casefold() for tag in tags)
        return True


RETRIEVAL_FIELDS: tuple[str, ...] = tuple(RetrievalQuery.model_fields)


class Envelope(BaseModel, Generic[ItemT]):
    """One page of a longer list, as both doors return it: the retrieval's and a history's envelope alike. A
    subclass names its items and says in its own words what `total` counts and what `has_more` promises."""

    model_config = ConfigDict(frozen=True)

    items: list[ItemT]
    total: int
    limit: int = Field(description="The page size served.")
    offset: int = Field(description="The offset served.")
    has_more: bool

    @classmethod
    def of(cls, items: list[ItemT], total: int, *, limit: int, offset: int, **fields: object) -> Self:
        """The page of `items` served at `offset` with `limit`, out of `total`; `fields`, a subclass's own."""
        return cls(items=items, total=total, limit=limit, offset=offset, has_more=offset + len(items) < total, **fields)


class Page(Envelope[Memory]):
    """The envelope every retrieval returns."""

    total: int = Field(description="Every match before paging.")
    has_more: bool = Field(description="Whether matches remain after this page: offset + len(items) < total.")
