"""What a recall asks: a question in natural language, the retrieval's exact filters, paging, and the moment every
time-based signal is computed at (CONTRACT.md, Recall)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema, field_validator

from core.clock import format_timestamp
from core.contract import PageOffset, RetrievalQuery, cap_limit, integer
from core.limits import DEFAULT_LIMIT, RECALL_MAX_LIMIT, RECALL_QUERY_MAX_CHARS
from core.model import MemoryType, Status
from core.schema import RECALL_QUERY_SCHEMA

_FILTERS = RetrievalQuery.model_fields


def _cap_recall_limit(value: int) -> int:
    return min(cap_limit(value), RECALL_MAX_LIMIT)


# RFC 3339's date-time (section 5.6; `T` and `Z` in either case, as its note allows), the one spelling `as_of` takes.
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


RecallLimit = Annotated[
    int, WithJsonSchema({"type": "integer", "minimum": 1}), BeforeValidator(integer), AfterValidator(_cap_recall_limit)
]
# Empty is the same as left out (as an empty `q` or `tag` is), so a client filling a form or a URL template need not
# drop the parameter; the schema says so, as it must for a client generating from it.
Moment = Annotated[
    str | None,
    BeforeValidator(_moment),
    WithJsonSchema({"type": "string", "anyOf": [{"format": "date-time"}, {"const": ""}]}),
]


class RecallQuery(RetrievalQuery.__base__):  # type: ignore[name-defined,misc]  # InputModel, as RetrievalQuery's
    """A recall, normalised: `query` trimmed, filters as the retrieval's, `limit` capped, `as_of` in the contract's
    spelling (None: the moment the request arrived, which the service fills in)."""

    model_config = RetrievalQuery.model_config

    query: Annotated[str, WithJsonSchema(RECALL_QUERY_SCHEMA)] = Field(
        description="What you want to know, in natural language (a question or a few words): the memories that best "
        f"answer it come first. Trimmed; 1 to {RECALL_QUERY_MAX_CHARS} characters.",
    )
    status: Status = Field(
        default="active",
        description="Only memories with this lifecycle status. Default active: an invalid memory is wrong or "
        "outdated, so recall returns it only when asked with status=invalid, and a deleted one only with "
        "status=deleted.",
    )
    memory_type: MemoryType | None = Field(default=None, description=_FILTERS["memory_type"].description)
    tag: Annotated[str | None, BeforeValidator(lambda value: None if value == "" else value)] = Field(
        default=None, description=_FILTERS["tag"].description
    )
    limit: RecallLimit = Field(
        default=DEFAULT_LIMIT,
        description=f"How many ranked memories to return, 1 or more; values over {RECALL_MAX_LIMIT} are served as "
        f"{RECALL_MAX_LIMIT}. The envelope's limit says what was served.",
    )
    offset: PageOffset = Field(default=0, description=_FILTERS["offset"].description)
    as_of: Moment = Field(
        default=None,
        description="The moment recency and use are computed at (default: now); give the as_of of an earlier answer "
        "to rank at that moment again (a read that stamped since changed the use of what it returned).",
    )

    @field_validator("query", mode="before")
    @classmethod
    def _trimmed(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not 1 <= len(text) <= RECALL_QUERY_MAX_CHARS:
            raise ValueError(f"must be 1 to {RECALL_QUERY_MAX_CHARS} characters after trimming")
        return text

    _normalise_tag = field_validator("tag")(RetrievalQuery._normalise_tag.__func__)  # type: ignore[attr-defined]  # a classmethod's function, reused
    matches_nothing = RetrievalQuery.matches_nothing
