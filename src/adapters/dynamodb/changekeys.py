"""Change keys (changes.py): `<when sent>#<the item's sort key>`, the sort key of the change index.

A change is timed when the call that writes it is sent: a transaction is timed again at each of its attempts
(table.Items.transact), so a change lands in the index within one call of its timing (the client's timeouts and
retries: tests/infra/test_template.py bounds it), whatever the attempts before it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Item = dict[str, Any]
Clock = Callable[[], datetime]


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> datetime:
    return datetime.now(UTC)


def logged(item: Item, clock: Clock = utc_now) -> Item:
    """`item` (a revision, or a marker) with its change key: now, then its own sort key."""
    return {**item, "change_key": {"S": f"{stamp(clock())}#{item['sk']['S']}"}}


def sent(actions: list[Item]) -> list[Item]:
    """A transaction's actions as an attempt sends them: each Put of an item with a change key timed now."""
    return [
        {"Put": {**action["Put"], "Item": logged(action["Put"]["Item"])}}
        if "Put" in action and "change_key" in action["Put"]["Item"]
        else action
        for action in actions
    ]
