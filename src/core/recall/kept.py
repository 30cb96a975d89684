"""The records of recall's pages, kept in this process while its warm index (core.recall.warm) keeps the digest each
was read for: an agent asking again within a conversation gets pages it has seen, and their records are not read again.

A memory's record changes only with its digest (each write of a memory writes its digest in the same transaction), and
a warm copy replaces a digest it holds whenever the change log names its memory (an erased namespace's whole copy goes).
So a record kept with the very digest object it was read for, and of that digest's version, is the stored one as long
as that object is the one the warm copy hands out; a cold read's digests are new objects every time, and find nothing.
The stamps are never kept: recall reads them, or learns them from its own stamps (core.recall.reach).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

from core.model import Memory
from core.repository.digests import Candidate, DigestReads

# The records kept, most recently used first out last: about 10 MB at the largest content, a few MB as memories are.
KEPT_RECORDS: Final = 4096


class KeptRecords:
    """The records recall reads for its pages, by their digests (thread-safe)."""

    def __init__(self, store: DigestReads, size: int = KEPT_RECORDS) -> None:
        self._store = store
        self._size = size
        self._kept: OrderedDict[tuple[str, int], tuple[weakref.ref[Candidate], Memory]] = OrderedDict()
        self._lock = threading.Lock()

    def records(self, namespace: str, candidates: Sequence[Candidate]) -> list[Memory]:
        """The records of `candidates` still stored, whatever their status, in no particular order: the kept ones,
        and the rest read without their stamps (DigestReads.records_without_stamps), which `last_accessed_at` is not."""
        found: dict[int, Memory] = {}
        missing: list[Candidate] = []
        with self._lock:
            for candidate in candidates:
                key = (namespace, candidate.memory_id)
                kept = self._kept.get(key)
                if kept is not None and kept[0]() is candidate:
                    self._kept.move_to_end(key)
                    found[candidate.memory_id] = kept[1]
                else:
                    missing.append(candidate)
        if missing:
            read = self._store.records_without_stamps(namespace, [candidate.memory_id for candidate in missing])
            self._keep(namespace, missing, read)
            found.update((memory.id, memory) for memory in read)
        return list(found.values())

    def _keep(self, namespace: str, candidates: Sequence[Candidate], records: Sequence[Memory]) -> None:
        if not self._size:
            return  # a cold process's digests are new objects every time: nothing to keep them for
        by_id = {candidate.memory_id: candidate for candidate in candidates}
        with self._lock:
            for memory in records:
                candidate = by_id[memory.id]
                # An eventually consistent read may lag the digest: only the version it stands for is kept.
                if memory.version == candidate.version:
                    self._kept[namespace, memory.id] = (weakref.ref(candidate), memory)
                    self._kept.move_to_end((namespace, memory.id))
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
