"""The backfill of recall's vector index (adapters/s3vectors.py): the stream consumer (adapters/vectorsync.py) sees
only changes made after the index was turned on, so the digests a table held before stay out of it until this puts
them. Recall asks the index for a namespace only once the backfill has marked it (adapters/dynamodb/indexed.py), so a
namespace not yet passed is read whole, as without the index.

A namespace is read page by page (PAGE digests, one PutVectors call, strongly consistent) in id order: memory stays
bounded by a page, and the last id put is the cursor a run prints and a later run resumes from. Every key put holds
what the digest held when read (a put replaces its key: re-running puts the same keys), and a digest without a vector
of the ranking model has its key deleted. Nothing of a memory is written; the one write to the table is the mark.

A write landing while the backfill runs reaches the index by the stream, but a page read before it and put after the
consumer applied it would bring its older state back. So the backfill reads the namespace's changes since it started
(adapters/dynamodb/changes.py, as a warm copy does), puts again (or deletes) what they name, read again by key, and
repeats until a reading finds no change since the one before: then every key it put is the digest as it stands, and
the stream carries every later change. Only then is the namespace marked, and only while its epoch is the one the
backfill started in (an erase since leaves it unmarked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from adapters.dynamodb.indexed import IndexedNamespaces
from adapters.s3vectors import BATCH, IndexedVector, S3VectorIndex, vector_key
from core.repository.digests import Candidate

# One PutVectors call's worth of digests a page.
PAGE: Final = BATCH
# Readings of the changes before a namespace still changing is left unmarked, for a later run.
SETTLE_READINGS: Final = 20
_CURSOR_PARTS: Final = 4
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class CursorError(ValueError):
    """A cursor that is not one a backfill printed."""


@dataclass(frozen=True)
class Cursor:
    """Where a backfill is: the namespace, the last memory id put, and the epoch and start of the namespace's pass
    (its changes are read from that start when it resumes). Its text: `<namespace>#<id>#<epoch>#<start, µs>`."""

    namespace: str
    after: int
    epoch: str
    started: datetime

    def text(self) -> str:
        return f"{self.namespace}#{self.after}#{self.epoch}#{(self.started - _EPOCH) // timedelta(microseconds=1)}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        parts = text.split("#")
        if len(parts) != _CURSOR_PARTS or not all(parts) or not parts[1].isdigit() or not parts[3].isdigit():
            raise CursorError(f"{text!r} is not a cursor a backfill printed (<namespace>#<id>#<epoch>#<start>)")
        return cls(parts[0], int(parts[1]), parts[2], _EPOCH + timedelta(microseconds=int(parts[3])))


@dataclass
class Filled:
    """What a run did: namespaces marked, vectors put, keys deleted; the namespaces left unmarked (erased meanwhile,
    or still changing after SETTLE_READINGS readings), and those skipped (marked for this index already)."""

    marked: int = 0
    put: int = 0
    deleted: int = 0
    unmarked: list[str] = field(default_factory=list)
    skipped: int = 0


class VectorBackfill:
    """Puts a table's digests in a vector index, namespace by namespace, and marks each namespace done."""

    def __init__(
        self,
        table: IndexedNamespaces,
        index: S3VectorIndex,
        label: str,
        on_page: Callable[[Cursor], None] = lambda _: None,
        page: int = PAGE,
    ) -> None:
        """`label`: the index's (adapters.s3vectors.index_label), written on each namespace done. `on_page`: told the
        cursor after each page put (a run cut short resumes from the last one told). `page`: digests a page."""
        self._table = table
        self._page = page
        self._index = index
        self._label = label
        self._on_page = on_page

    def run(
        self, namespaces: Iterable[str] | None = None, *, resume: Cursor | None = None, again: bool = False
    ) -> Filled:
        """Backfill `namespaces` (None: every namespace of the table), first the one `resume` names from its cursor.
        A namespace marked for this index already is skipped unless `again`."""
        filled = Filled()
        if resume is not None:
            self._namespace(resume.namespace, filled, resume)
        for namespace in self._table.namespaces() if namespaces is None else namespaces:
            if resume is not None and namespace == resume.namespace:
                continue
            if not again and self._table.indexed_in(namespace) == self._label:
                filled.skipped += 1
                continue
            self._namespace(namespace, filled, None)
        return filled

    def _namespace(self, namespace: str, filled: Filled, resume: Cursor | None) -> None:
        mark = self._table.changes_mark(namespace)
        if resume is not None:
            if mark.epoch != resume.epoch:
                filled.unmarked.append(namespace)  # erased (and perhaps started again) since the pass began
                return
            # Read the changes from the pass's own start: a page put before the run stopped may be older than them.
            mark = self._table.resumed_mark(resume.epoch, resume.started)
        if mark.epoch is None:
            filled.unmarked.append(namespace)  # no counter: erased, or never written
            return
        cursor = Cursor(namespace, resume.after if resume else 0, mark.epoch, mark.read_at)
        while page := self._table.digest_page(namespace, cursor.after, self._page):
            self._apply(namespace, page, [], filled)
            cursor = Cursor(namespace, page[-1].memory_id, cursor.epoch, cursor.started)
            self._on_page(cursor)
        if self._settle(namespace, mark, filled) and self._table.mark(namespace, mark.epoch, self._label):
            filled.marked += 1
        else:
            filled.unmarked.append(namespace)

    def _settle(self, namespace: str, mark: object, filled: Filled) -> bool:
        """Put again what changed since `mark` until a reading finds no change; False when the namespace's epoch
        changed or it kept changing."""
        for _ in range(SETTLE_READINGS):
            found = self._table.changes_since(namespace, mark)
            if found is None:
                return False
            if not found.memory_ids:
                return True
            ids = sorted(found.memory_ids)
            rows = self._table.digest_rows(namespace, ids)
            held = {row.memory_id for row in rows}
            self._apply(namespace, rows, [memory_id for memory_id in ids if memory_id not in held], filled)
            mark = found.mark
        return False

    def _apply(self, namespace: str, rows: Sequence[Candidate], gone: Sequence[int], filled: Filled) -> None:
        """Put the rows the index keeps; delete the keys of the others and of `gone` (purged, erased)."""
        puts = [IndexedVector(namespace, row) for row in rows if self._index.keeps(row)]
        deletes = [vector_key(namespace, row.memory_id) for row in rows if not self._index.keeps(row)]
        deletes += [vector_key(namespace, memory_id) for memory_id in gone]
        if puts:
            self._index.put(puts)
        if deletes:
            self._index.delete(deletes)
        filled.put += len(puts)
        filled.deleted += len(deletes)
