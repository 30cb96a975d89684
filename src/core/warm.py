"""Warm copies: what a process read of a namespace whole, kept in its memory and brought up to date by reading only
what changed since (the store's change log: core.repository.digests.DigestReads.digest_changes), bounded by bytes,
least recently used out first. Recall's digests (core.recall.warm) and the DynamoDB adapter's search copies keep theirs
here; each says what a row is, how to read the namespace whole, its changes, and some rows again.

A copy is exact: it holds every row whatever its status, brought up to date before each use, and the caller filters it
as the store would. What a caller computes from a copy it may compute from the copy as it stands (`kept`) while it is
brought up to date, and keep when nothing changed (`rows` then hands back the very list `kept` did); a copy found
changed at its last use (a namespace being written to) is not offered, as what is computed from it would likely be
computed again.

When the store cannot say what changed (the namespace was erased or started again, or the copy is older than the
changes kept), or the changes are more than REREAD_SHARE of the copy (a row read by key costs about a read unit, one
read in a whole read a fifteenth of one), the namespace is read whole again. A namespace with no rows is not kept, nor
one larger than the whole budget (read whole each time, as without a warm copy).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from core.repository.digests import DigestChanges

Row = TypeVar("Row")
REREAD_SHARE: Final = 1 / 16
REREAD_MIN: Final = 64


@dataclass
class _Copy(Generic[Row]):
    rows: dict[int, Row]
    mark: object
    size: int
    listed: list[Row]  # the rows, as every use of this copy is handed them
    settled: bool  # nothing had changed at its last use (or it was just read whole)


class WarmCopies(Generic[Row]):
    """One kind of row's warm copies in this process (thread-safe: a namespace's copy is brought up to date under its
    own lock, so two uses of one namespace read its changes once)."""

    def __init__(
        self,
        whole: Callable[[str], tuple[list[Row], object]],
        changes: Callable[[str, object], DigestChanges | None],
        some: Callable[[str, Sequence[int]], list[Row]],
        key: Callable[[Row], int],
        size: Callable[[Row], int],
        budget_bytes: int,
    ) -> None:
        """`whole`: every row of a namespace and the mark of its changes; `changes`: the ids changed since a mark;
        `some`: the rows of some ids still stored; `key` a row's id; `size` its estimated bytes."""
        self._whole, self._changes, self._some = whole, changes, some
        self._key, self._row_size = key, size
        self._budget = budget_bytes
        self._copies: OrderedDict[str, _Copy[Row]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._namespace_locks: dict[str, threading.Lock] = {}

    def rows(self, namespace: str) -> list[Row]:
        """Every row of the namespace as stored now, in no particular order (a list shared by the copy's uses: not to
        be changed). When nothing changed since the copy was last brought up to date, the very list `kept` gave."""
        with self._lock:
            lock = self._namespace_locks.setdefault(namespace, threading.Lock())
        with lock:
            return self._fresh(namespace)

    def kept(self, namespace: str) -> list[Row] | None:
        """The namespace's rows as its copy was last brought up to date, with no read (None: no copy kept, or it had
        changed at its last use)."""
        with self._lock:
            copy = self._copies.get(namespace)
        return None if copy is None or not copy.settled else copy.listed

    def _fresh(self, namespace: str) -> list[Row]:
        with self._lock:
            copy = self._copies.get(namespace)
        if copy is not None:
            changes = self._changes(namespace, copy.mark)
            if changes is not None and len(changes.memory_ids) <= max(REREAD_MIN, len(copy.rows) * REREAD_SHARE):
                if not changes.memory_ids:
                    return self._keep(namespace, _Copy(copy.rows, changes.mark, copy.size, copy.listed, True))
                fresh = self._some(namespace, sorted(changes.memory_ids))
                rows, size = dict(copy.rows), copy.size
                for memory_id in changes.memory_ids:
                    gone = rows.pop(memory_id, None)
                    size -= self._row_size(gone) if gone is not None else 0
                rows.update((self._key(row), row) for row in fresh)
                return self._keep(
                    namespace, _Copy(rows, changes.mark, size + self._sized(fresh), list(rows.values()), False)
                )
        found, mark = self._whole(namespace)
        rows = {self._key(row): row for row in found}
        settled = copy is None  # else it was found changed (the namespace started again, or too many changes)
        return self._keep(namespace, _Copy(rows, mark, self._sized(rows.values()), list(rows.values()), settled))

    def _sized(self, rows: Iterable[Row]) -> int:
        return sum(self._row_size(row) for row in rows)

    def _keep(self, namespace: str, copy: _Copy[Row]) -> list[Row]:
        """Keep `copy` as the namespace's (most recently used), dropping the least recently used beyond the budget,
        unless it is empty or larger than the whole budget; its rows."""
        with self._lock:
            prior = self._copies.pop(namespace, None)
            self._size -= prior.size if prior is not None else 0
            if copy.rows and copy.size <= self._budget:
                self._copies[namespace] = copy
                self._size += copy.size
                while self._size > self._budget:
                    _, dropped = self._copies.popitem(last=False)
                    self._size -= dropped.size
            return copy.listed

    @property
    def kept_bytes(self) -> int:
        with self._lock:
            return self._size
