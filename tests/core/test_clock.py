"""Time, once (core.clock): the contract's timestamp spelling and epoch seconds are made from the one `datetime`,
and read back to the same moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.clock import epoch_seconds, format_timestamp, parse_timestamp


def test_a_moment_spelled_as_the_contract_does_reads_back_as_the_same_moment() -> None:
    moment = datetime(2026, 4, 6, 14, 12, 3, 45, tzinfo=timezone(timedelta(hours=2)))

    spelled = format_timestamp(moment)

    assert spelled == "2026-04-06T12:12:03.000045Z"
    assert parse_timestamp(spelled) == moment


@pytest.mark.parametrize("text", ["2026-04-06T12:12:03Z", "2026-04-06 12:12:03.000045Z", "2026-04-06T12:12:03.000045"])
def test_a_string_that_is_not_a_contract_timestamp_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="does not match format"):
        parse_timestamp(text)


def test_epoch_seconds_count_whole_seconds_since_1970_truncated() -> None:
    assert epoch_seconds(datetime(1970, 1, 1, 0, 1, 40, 999_999, tzinfo=UTC)) == 100
    assert epoch_seconds(parse_timestamp("2026-04-06T12:12:03.500000Z")) == 1775477523
