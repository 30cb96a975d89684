"""What a recall asks, parsed once for both doors: `as_of` is any RFC 3339 date-time and nothing else, and the
published schema of `query` admits exactly the questions the core accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jsonschema_rs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.clock import format_timestamp
from core.errors import InvalidInputError
from core.limits import RECALL_QUERY_MAX_CHARS
from core.recall.query import RecallQuery


def as_of(value: object) -> str | None:
    moment: str | None = RecallQuery.parse({"query": "what does the user eat", "as_of": value}).as_of
    return moment


@pytest.mark.parametrize(
    ("value", "moment"),
    [
        ("2026-12-04T10:00:00Z", "2026-12-04T10:00:00.000000Z"),
        ("2026-12-04T10:00:00.5+01:30", "2026-12-04T08:30:00.500000Z"),
        ("2026-12-04T10:00:00.123456789-00:00", "2026-12-04T10:00:00.123456Z"),
        # RFC 3339 5.6: `T` and `Z` may be lower case.
        ("2026-12-04t10:00:00z", "2026-12-04T10:00:00.000000Z"),
        # A leap second: the last microsecond of its minute.
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
        # Date-times whose UTC lies outside the years 0001 to 9999: the nearest moment inside them.
        ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00.000000Z"),
        ("9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.999999Z"),
        ("0001-01-01T00:30:00-00:45", "0001-01-01T01:15:00.000000Z"),
        ("", None),
    ],
)
def test_as_of_takes_every_rfc_3339_date_time_in_the_contracts_spelling(value: str, moment: str | None) -> None:
    assert as_of(value) == moment


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-04",
        "2026-12-04T10:00Z",
        "2026-12-04 10:00:00Z",
        "2026-12-04T10:00:00",
        "20261204T100000Z",
        "2026-12-04T10:00:00+0100",
        "2026-12-04T10:00:00+24:00",
        "2026-02-30T10:00:00Z",
        "2026-12-04T10:00:61Z",
        "2024-01-01T12:99:00Z",
        "yesterday",
        1765000000,
    ],
)
def test_as_of_refuses_anything_else_in_the_contracts_words(value: object) -> None:
    with pytest.raises(InvalidInputError) as refused:
        as_of(value)

    assert str(refused.value).startswith("as_of: must be a date and time with its offset (RFC 3339)")


@given(st.datetimes(), st.integers(-(24 * 60 - 1), 24 * 60 - 1))
def test_as_of_is_the_utc_moment_a_date_time_names(local: datetime, offset_minutes: int) -> None:
    sign, minutes = ("-" if offset_minutes < 0 else "+"), abs(offset_minutes)
    value = f"{local.isoformat(timespec='microseconds')}{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    try:
        moment = local - timedelta(minutes=offset_minutes)
    except OverflowError:
        return  # outside the calendar in UTC: the nearest moment inside it (above)
    assert as_of(value) == format_timestamp(moment.replace(tzinfo=UTC))


QUERY_SCHEMA = jsonschema_rs.validator_for(RecallQuery.model_json_schema()["properties"]["query"])


def accepted(question: str) -> bool:
    try:
        RecallQuery.parse({"query": question})
    except InvalidInputError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x1c\u00a0\u2003\u3000ax\x00é"), max_size=12))
@example("")
@example("   ")
@example("\u3000\n")
@example(" a ")
@example("a" * RECALL_QUERY_MAX_CHARS)
@example(" " + "a" * RECALL_QUERY_MAX_CHARS + "\n")
@example("a" * (RECALL_QUERY_MAX_CHARS + 1))
@example("a" + " " * (RECALL_QUERY_MAX_CHARS - 1) + "b")
def test_the_published_query_schema_admits_exactly_what_the_core_accepts(question: str) -> None:
    assert QUERY_SCHEMA.is_valid(question) == accepted(question)
