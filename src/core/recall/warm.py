"""Recall's warm index: the digests of the namespaces recalled lately, kept in this process's memory (core.warm) and
brought up to date by reading only what changed since. CONTRACT.md's recall is unchanged: this is how its candidates
are read.

An agent recalls several times in a conversation, and a Lambda environment lives for minutes: a cold recall reads every
digest of the namespace (about 70 read units per 1,000 memories), a warm one the changes since its copy (one Query of
an index, and the counter) and the digests that changed. The copy holds every digest whatever its status, and a recall
filters it as the store filters a cold read (`shown`), so it returns what a cold read returns
(tests/integration/test_warm_index.py interleaves every kind of write with warm and cold recalls and compares them).

A recall ranks the copy as it stands while it is brought up to date (`ranked`), and ranks again only when something
changed: a recall of a namespace no one wrote to since its copy was last brought up to date waits for the reads of
the changes (the change index's window listed again, right after a burst of writes) no longer than for its own ranking.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from itertools import compress, repeat
from operator import attrgetter, eq, ne
from typing import Final, TypeVar

from core.budget import carried
from core.recall.scoring import Columns
from core.repository.digests import Candidate, CandidateFilter, DigestReads
from core.warm import WarmCopies

T = TypeVar("T")

# 128 MiB of a function's 1,024 MB: about 62,000 digests of the bench's memories with the offline model (384
# dimensions), each with the count of its terms recall keeps (Candidate.term_counts).
WARM_INDEX_BYTES: Final = 128 * 1024 * 1024
# What a kept digest costs beyond its content's and vector's bytes: the Python objects holding them; and each distinct
# term's entry in its counts (the terms themselves are the stemmer's, shared: core.words). Measured with tracemalloc
# over 5,000 of the bench's digests as the DynamoDB adapter reads them (228 bytes of content, 35 terms, 30 distinct,
# 384 dimensions), their counts counted: 2.09 KB a digest, which `row_bytes` puts at 2.15 KB (over, never under).
_ROW_OVERHEAD: Final = 600
_COUNT_BYTES: Final = 31
_STATUS = attrgetter("status")
# How many namespaces' and filters' columns (core.recall.scoring.Columns: lists of references, 7 a digest, 56 bytes)
# are kept beside their copies, most recently ranked first; each holds the copy it was made of until it goes.
COLUMNS_KEPT: Final = 4
# Each copy is brought up to date in one of these threads while its recall ranks it as it stands (started on first use,
# shared by the process).
_REFRESHES: Final = ThreadPoolExecutor(max_workers=8, thread_name_prefix="refresh")


def shown(candidate: Candidate, filters: CandidateFilter) -> bool:
    """Whether a recall with `filters` matches the memory, as the store's own read filters it: a status (None: every
    status but deleted), a type, a whole tag."""
    matches, status = _status_rule(filters)
    return matches(candidate.status, status) and _typed_and_tagged(candidate, filters)


def _status_rule(filters: CandidateFilter) -> tuple[Callable[[str, str], bool], str]:
    """How a memory's status is held to the filters: equal to theirs, or (None) anything but deleted."""
    return (eq, filters.status) if filters.status is not None else (ne, "deleted")


def _typed_and_tagged(candidate: Candidate, filters: CandidateFilter) -> bool:
    if filters.memory_type is not None and candidate.memory_type != filters.memory_type:
        return False
    return filters.tag is None or filters.tag in candidate.tags


def row_bytes(candidate: Candidate) -> int:
    """A kept digest's estimated size."""
    vector = len(candidate.vector.codes) if candidate.vector is not None else 0
    counts = _COUNT_BYTES * len(candidate.term_counts)
    return _ROW_OVERHEAD + len(candidate.content.encode()) + counts + vector + sum(map(len, candidate.tags))


class WarmIndex:
    """The warm copies of one process's recalls."""

    def __init__(self, store: DigestReads, budget_bytes: int = WARM_INDEX_BYTES) -> None:
        def whole(namespace: str) -> tuple[list[Candidate], object]:
            snapshot = store.digest_snapshot(namespace)
            return snapshot.rows, snapshot.mark

        self._lock = threading.Lock()
        self._made: OrderedDict[tuple[str, str | None, str | None, str | None], tuple[list[Candidate], Columns]] = (
            OrderedDict()
        )
        self._copies = WarmCopies(
            whole,
            store.digest_changes,
            store.digest_rows,
            lambda candidate: candidate.memory_id,
            row_bytes,
            budget_bytes,
        )

    def candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        """Every digest of the namespace the filters match, in no particular order, as
        `DigestReads.recall_candidates` reads them."""
        return _filtered(self._copies.rows(namespace), filters)

    def ranked(self, namespace: str, filters: CandidateFilter, rank: Callable[[Columns], T]) -> T:
        """`rank` of the columns of `candidates(namespace, filters)`: given those of the copy as it stands while the
        copy is brought up to date in another thread, and given them again, brought up to date, only when something
        changed (the answer is always the ranking of the digests as stored now). The columns of the last few
        namespaces and filters ranked are kept with the copy they were made of (COLUMNS_KEPT)."""
        kept = self._copies.kept(namespace)
        if kept is None:
            return rank(self._columns(namespace, filters, self._copies.rows(namespace)))
        refreshed = _REFRESHES.submit(carried(self._copies.rows), namespace)
        try:
            ranking = rank(self._columns(namespace, filters, kept))
        except BaseException:
            wait([refreshed])  # no read of this recall outlives it
            raise
        fresh = refreshed.result()
        return ranking if fresh is kept else rank(self._columns(namespace, filters, fresh))

    def _columns(self, namespace: str, filters: CandidateFilter, rows: list[Candidate]) -> Columns:
        """The columns of the digests among `rows` (a copy's) the filters match: made once per copy and filters."""
        key = (namespace, filters.status, filters.memory_type, filters.tag)
        with self._lock:
            made = self._made.get(key)
            if made is not None and made[0] is rows:
                self._made.move_to_end(key)
                return made[1]
        columns = Columns(_filtered(rows, filters))
        with self._lock:
            self._made[key] = (rows, columns)
            self._made.move_to_end(key)
            while len(self._made) > COLUMNS_KEPT:
                self._made.popitem(last=False)
        return columns

    @property
    def kept_bytes(self) -> int:
        return self._copies.kept_bytes


def _filtered(rows: list[Candidate], filters: CandidateFilter) -> list[Candidate]:
    # The status over every kept digest in one pass (a recall's default filter: active), then type and tag
    matches, status = _status_rule(filters)
    kept = compress(rows, map(matches, map(_STATUS, rows), repeat(status)))
    if filters.memory_type is None and filters.tag is None:
        return list(kept)
    return [candidate for candidate in kept if _typed_and_tagged(candidate, filters)]
