"""Time, once: the clock a service is given (`now` is its `datetime`, aware and in UTC), and the two spellings a
moment is stored or sent in, made from it only there: the contract's timestamp string and epoch seconds."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

Clock = Callable[[], datetime]

TIMESTAMP_FORMAT: Final = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_timestamp(moment: datetime) -> str:
    """The contract's only timestamp spelling: UTC, six fraction digits, `Z`; it sorts as a string."""
    utc = moment.astimezone(UTC)
    # strftime's %Y does not pad years below 1000 on every platform; the format must stay fixed-width.
    return f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S.%f}Z"


def parse_timestamp(timestamp: str) -> datetime:
    """The moment a contract timestamp names (ValueError when it is not one)."""
    return datetime.strptime(timestamp, TIMESTAMP_FORMAT).replace(tzinfo=UTC)


def epoch_seconds(moment: datetime) -> int:
    """Whole seconds since 1970 (what DynamoDB's TTL and OAuth's expiries count in), truncated."""
    return int(moment.timestamp())
