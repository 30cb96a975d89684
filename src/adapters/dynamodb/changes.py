"""A namespace's changes, as a warm index reads them (core.recall.warm): which digests changed since a mark.

Every change of a memory writes a revision in its own transaction; a revision written by a change carries a
`change_key` (`<when sent>#<its sort key>`), and the sparse index `by_change` (KEYS_ONLY: its key and the table's)
holds those, by namespace partition and time: one more write unit per change (an index entry), none in the
transaction. What changes a digest without a revision leaves a marker with a `change_key` instead (`CHG#<id>#<what>`,
expiring after MARKER_SECONDS): the backfill giving a digest its vector, and the purge removing a memory (whose
revisions go with it). The id counter's `born` (set when the counter starts) is the namespace's epoch: an erase removes
the counter, and a namespace started again is another epoch, whose ids are drawn afresh.

Reading changes is exact under the index's own rule, as a cold read is under eventual consistency: a change is timed
when the call that lands it is sent (each attempt of a transaction is timed again: changekeys.py) and lands within that
call (the client's timeouts and retries), so a reading that starts WINDOW_SECONDS before the previous one's start
reads every change that previous reading could not see (tests/infra/test_template.py holds a call's worst case within
two fifths of the window: the rest is for the index's propagation and the clocks' skew); the keys read within the
window are remembered, so each change is applied once. Every reading lists the window's keys again: a burst of writes
is listed at each reading for as long as it stays in the window (a recall ranks its warm copy meanwhile:
core.recall.warm).
"""

from __future__ import annotations

import uuid
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from adapters.dynamodb.changekeys import Clock, logged, utc_now
from adapters.dynamodb.changekeys import stamp as _stamp
from adapters.dynamodb.codec import CHANGE_INDEX, CHANGE_PREFIX, COUNTER_SK, memory_partition
from adapters.dynamodb.rawitems import raw_items
from adapters.dynamodb.table import Items
from core.limits import ID_DIGITS
from core.repository.digests import DigestChanges

Item = dict[str, Any]

# How far before a reading's mark its next reading starts: more than a change may take from its timing to its landing
# in the index. A reading reads every change of the last minute (an index entry is about 150 bytes: 27 of them a read
# unit).
WINDOW_SECONDS: Final = 60
# How long a marker is kept (its TTL); a mark older than MARK_SECONDS is read again whole.
MARKER_SECONDS: Final = 2 * 24 * 3600
MARK_SECONDS: Final = 24 * 3600


def marker(namespace: str, memory_id: int, what: str, clock: Clock = utc_now) -> Item:
    """The marker of a change of a digest that writes no revision (`what`: "gone", "embedded")."""
    expires = int((clock() + timedelta(seconds=MARKER_SECONDS)).timestamp())
    item = {
        "pk": memory_partition(namespace),
        "sk": {"S": f"{CHANGE_PREFIX}{memory_id:0{ID_DIGITS}d}#{what}"},
        "expires_at": {"N": str(expires)},
    }
    return logged(item, clock)


def born() -> dict[str, str]:
    """A new counter's epoch."""
    return {"S": uuid.uuid4().hex}


@dataclass(frozen=True)
class Mark:
    """Where a reading of the changes starts: the namespace's epoch (None: no counter), when the last reading began,
    and the change keys it read within the window (applied already)."""

    epoch: str | None
    read_at: datetime
    seen: frozenset[str]


def counter(items: Items, namespace: str) -> Item | None:
    """The namespace's id counter (eventually consistent, as a recall's reads; None: no counter): its epoch, and the
    highest id drawn, which a whole read needs as well, so a request reads it once and hands it to `mark`."""
    found: Item | None = items.get_many([{"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}}])[0]
    return found


def highest_id(counter: Mapping[str, Any] | None) -> int:
    """The highest id a counter has drawn (0: none)."""
    return int((counter or {}).get("next_id", {}).get("N", "0"))


def epoch(items: Items, namespace: str) -> str | None:
    """The namespace's epoch, from its id counter."""
    return _epoch_of(counter(items, namespace))


def _epoch_of(counter: Mapping[str, Any] | None) -> str | None:
    return str(counter["born"]["S"]) if counter and "born" in counter else None


def mark(items: Items, namespace: str, counter: Mapping[str, Any] | None, clock: Clock = utc_now) -> Mark:
    """The mark of a snapshot about to be read: its epoch (from `counter`, the namespace's id counter as just read),
    and the changes already in the index within the window, which the snapshot read after them holds."""
    now = clock()
    return Mark(
        _epoch_of(counter), now, frozenset(_logged_after(items, namespace, now - timedelta(seconds=WINDOW_SECONDS)))
    )


def since(items: Items, namespace: str, previous: object, clock: Clock = utc_now) -> DigestChanges | None:
    """The memories whose digest changed since `previous` (a Mark), and the next mark; None when they cannot be told:
    another epoch, or a mark older than the markers are kept."""
    now = clock()
    if not isinstance(previous, Mark) or now - previous.read_at > timedelta(seconds=MARK_SECONDS):
        return None
    if previous.epoch is None or epoch(items, namespace) != previous.epoch:
        return None
    found = _logged_after(items, namespace, previous.read_at - timedelta(seconds=WINDOW_SECONDS))
    changed = frozenset(map(_memory_id, set(found).difference(previous.seen)))
    # The keys come in order: those still within the window at the next reading are the last ones
    recent = bisect_right(found, _stamp(now - timedelta(seconds=WINDOW_SECONDS)))
    return DigestChanges(changed, Mark(previous.epoch, now, frozenset(found[recent:])))


def _logged_after(items: Items, namespace: str, start: datetime) -> list[str]:
    """Each change key in the index after `start`, in order. A burst of writes puts thousands of keys in the window,
    listed again at each reading while they are in it: only the change key is asked for (it holds the sort key), it is
    read from the answer's JSON (rawitems.py), and only a key not seen before is parsed (`_memory_id`)."""
    request = {
        "IndexName": CHANGE_INDEX,
        "KeyConditionExpression": "pk = :pk AND change_key > :start",
        "ProjectionExpression": "change_key",
        "ExpressionAttributeValues": {":pk": memory_partition(namespace), ":start": {"S": _stamp(start)}},
    }
    with raw_items():
        return [entry["change_key"]["S"] for page in items.pages(request) for entry in page]


def _memory_id(key: str) -> int:
    """The memory a change key names, by the sort key it ends with: a revision's (`REV#<id>#<n>`) or a marker's
    (`CHG#<id>#<what>`)."""
    return int(key.split("#")[2])
