"""The use cases of the contract, over any MemoryRepository; both doors call these for every memory operation."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from contextlib import contextmanager
from datetime import timedelta

from pydantic import BaseModel, Field

from core import outcome, writes
from core.clock import Clock, format_timestamp, utc_now
from core.contract import Page, RetrievalQuery
from core.digest import Digest, Indexer
from core.errors import FieldError, InvalidInputError, MemoryNotFoundError, NamespaceFullError, VersionMismatchError
from core.history import DEFAULT_CHANGES_DAYS, ChangesPage, ChangesQuery, HistoryPage, HistoryQuery
from core.limits import IDEMPOTENCY_WINDOW_HOURS, MAX_MEMORY_ID, SUPERSEDE_MAX
from core.model import IdempotentCreate, InputModel, Memory, MemoryChanges, NewMemory
from core.repository import IdempotencyKeyTakenError, LiveKey, MemoryRepository, PriorCreate, fence_of
from core.schema import SupersededIds

ANY_VERSION = None


class SupersedeRequest(InputModel):
    """The body of a supersede: the memories the path's memory replaces."""

    ids: SupersededIds = Field(
        description=(
            f"Ids (1 to {SUPERSEDE_MAX}, distinct) of memories this memory replaces: in one atomic write each becomes "
            "invalid (version +1), its history naming this memory. A missing, deleted or repeated id, or this memory "
            "itself, refuses the whole write."
        )
    )


class Superseded(BaseModel):
    """What a supersede answers: the superseded records, in the order asked."""

    items: list[Memory]


class MemoryService:
    def __init__(
        self,
        repository: MemoryRepository,
        clock: Clock = utc_now,
        *,
        fenced: bool = False,
        indexer: Indexer | None = None,
    ) -> None:
        """`fenced` (what every deployed or served service is): each change lands, and each read answers and
        stamps, only while the caller's API key is still live in the store (core.repository.LiveKey), so a revoke or
        a namespace erase stops both at once, however long a door caches the key's verification. Unfenced, `key_id`
        only names the key in the history.

        `indexer` (what every deployed or served service has: core.recall.indexing) computes the digest recall ranks
        a memory by, before each write of its content or tags; without one (the purge function, which writes none,
        and tests of other things) a write still stores its digest, without a vector, which the backfill embeds: every
        memory has its digest from its first write."""
        self._repository = repository
        self._clock = clock
        self._fenced = fenced
        self._indexer = indexer or _Unembedded()

    def _now(self) -> str:
        """Now, as records store it: one reading of the clock per operation."""
        return format_timestamp(self._clock())

    def _fence(self, key_id: str | None, now: str) -> LiveKey | None:
        return fence_of(key_id, now, fenced=self._fenced)

    def _confirm(self, fence: LiveKey | None) -> None:
        """The read fence: called after the data is read, before anything is stamped or answered."""
        if fence is not None:
            self._repository.confirm_live(fence)

    @contextmanager
    def _news_behind(self, fence: LiveKey | None) -> Iterator[None]:
        """A missing memory, a version that no longer matches or a memory that cannot be superseded is news of the
        namespace too: told only behind the read fence, so a key that is not live learns nothing, not even which ids
        exist."""
        try:
            yield
        except (MemoryNotFoundError, VersionMismatchError, InvalidInputError):
            self._confirm(fence)
            raise

    def create(
        self,
        namespace: str,
        new: NewMemory,
        idempotency: IdempotentCreate | None = None,
        key_id: str | None = None,
        *,
        indexed: Callable[[Digest], None] | None = None,
    ) -> Memory:
        """Store a new memory; with `idempotency`, a retry of the same create within the window returns the
        record the first one returned and stores nothing, and the same key with another body is refused.

        `key_id` (here and in every change) names the API key the change is recorded against in the history.
        `indexed` is told the digest computed for the write (its vector, when the model gave one: what a write's
        related memories are found with, core.recall.related, without embedding the text again).
        NamespaceFullError once the namespace has drawn every id an API call can name."""
        now = self._now()
        fence = self._fence(key_id, now)
        memory_id = self._repository.next_id(namespace, fence)
        if memory_id > MAX_MEMORY_ID:
            raise NamespaceFullError
        memory = _created(memory_id, new, now)
        digest = self._indexer.digest(memory.content, memory.tags)
        if indexed is not None:
            indexed(digest)
        try:
            with outcome.advised(outcome.create(idempotency)), self._news_behind(fence):
                if new.supersedes:
                    writes.add_superseding(
                        self._repository, namespace, memory, new.supersedes, idempotency, key_id, fence, digest
                    )
                else:
                    writes.add(self._repository, namespace, memory, idempotency, key_id, fence, digest=digest)
        except IdempotencyKeyTakenError as taken:
            return _replayed(taken.prior, new, idempotency)
        return memory

    def get(self, namespace: str, memory_id: int, *, stamp: bool = True, key_id: str | None = None) -> Memory:
        """A visible memory, stamped as read unless `stamp` is False (a person auditing, not an agent using it).

        `key_id` (here and in every read) is the caller's API key: `fenced`, a read answers and stamps only while it is
        still live in the store (core.repository.LiveKey), checked after the data is read."""
        now = self._now()
        return self._repository.read(namespace, memory_id, now if stamp else None, self._fence(key_id, now))

    def update(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_version: int | Set[int] | None = ANY_VERSION,
        key_id: str | None = None,
        *,
        indexed: Callable[[Digest], None] | None = None,
    ) -> Memory:
        """Apply a PATCH conditionally on the version it was computed from, so no concurrent update is lost.

        With `expected_version` (one version, or a set of which any one matches, an empty set matching none), a
        record at any other version raises VersionMismatchError, even when the PATCH would change nothing.
        `indexed` is told each digest computed for it (one when its content or tags change, none otherwise).
        """
        expected = (
            None
            if expected_version is None
            else frozenset({expected_version} if isinstance(expected_version, int) else expected_version)
        )
        now = self._now()
        fence = self._fence(key_id, now)
        with self._news_behind(fence), outcome.advised(outcome.update(expected)):
            memory = writes.apply(
                self._repository,
                namespace,
                memory_id,
                changes,
                expected,
                now,
                key_id,
                fence,
                indexer=self._indexer if indexed is None else _Told(self._indexer, indexed),
            )
        if memory.updated_at != now:
            # Nothing changed, so no write (and no write fence) was made: what comes back is a read.
            self._confirm(fence)
        return memory

    def delete(self, namespace: str, memory_id: int, key_id: str | None = None) -> None:
        now = self._now()
        fence = self._fence(key_id, now)
        with self._news_behind(fence), outcome.advised(outcome.DELETE):
            writes.delete(self._repository, namespace, memory_id, now, key_id, fence)

    def restore(self, namespace: str, memory_id: int, key_id: str | None = None) -> Memory:
        now = self._now()
        fence = self._fence(key_id, now)
        with self._news_behind(fence), outcome.advised(outcome.RESTORE):
            return writes.restore(self._repository, namespace, memory_id, now, key_id, fence)

    def supersede(self, namespace: str, memory_id: int, ids: Sequence[int], key_id: str | None = None) -> Superseded:
        """Mark the memories `ids` superseded by the active memory `memory_id`, in one atomic write (core.writes)."""
        now = self._now()
        fence = self._fence(key_id, now)
        with self._news_behind(fence), outcome.advised(outcome.SUPERSEDE):
            return Superseded(items=writes.supersede(self._repository, namespace, memory_id, ids, now, key_id, fence))

    def history(self, namespace: str, memory_id: int, query: HistoryQuery, key_id: str | None = None) -> HistoryPage:
        """A memory's revisions, newest first, in the retrieval envelope; stamps nothing."""
        fence = self._fence(key_id, self._now())
        with self._news_behind(fence):
            revisions = self._repository.history(namespace, memory_id, query.limit, query.offset)
        self._confirm(fence)
        return HistoryPage.of(revisions.items, revisions.total, limit=query.limit, offset=query.offset)

    def changes(self, namespace: str, query: ChangesQuery, key_id: str | None = None) -> ChangesPage:
        """The namespace's revisions since `query.since` (default: DEFAULT_CHANGES_DAYS ago), newest first, in the
        retrieval envelope; stamps nothing."""
        moment = self._clock()
        since = query.since or format_timestamp(moment - timedelta(days=DEFAULT_CHANGES_DAYS))
        fence = self._fence(key_id, format_timestamp(moment))
        revisions = self._repository.changes(namespace, since, query.limit, query.offset)
        self._confirm(fence)
        return ChangesPage.of(revisions.items, revisions.total, limit=query.limit, offset=query.offset, since=since)

    def purge(self, namespace: str, memory_id: int, key_id: str | None = None) -> None:
        """Remove a deleted memory for good, at once (an active one must be deleted first). Fenced, the caller's key
        is confirmed live first: a purge cannot be undone, and its writes carry no fence of their own."""
        self._confirm(self._fence(key_id, self._now()))
        with outcome.advised(outcome.PURGE):
            writes.purge(self._repository, namespace, memory_id)

    def purge_expired(self, retention: timedelta) -> int:
        """Purge every memory deleted longer than `retention` ago; how many were purged."""
        return writes.purge_deleted(self._repository, format_timestamp(self._clock() - retention))

    def search(self, namespace: str, query: RetrievalQuery, *, stamp: bool = True, key_id: str | None = None) -> Page:
        """Filter, order and page as the contract says, then stamp exactly the returned rows with one timestamp
        (unless `stamp` is False: then nothing is stamped and the rows show their stored stamps)."""
        now = self._now()
        fence = self._fence(key_id, now)
        if query.matches_nothing:
            self._confirm(fence)
            return Page.of([], 0, limit=query.limit, offset=query.offset)
        matches = self._repository.find(namespace, query)
        page = matches.items
        if page and not stamp and not matches.stored_stamps:
            page = self._with_stored_stamps(namespace, page)
        self._confirm(fence)
        if page and stamp:
            self._repository.stamp(namespace, [memory.id for memory in page], now)
            page = [memory.model_copy(update={"last_accessed_at": now}) for memory in page]
        return Page.of(page, matches.total, limit=query.limit, offset=query.offset)

    def _with_stored_stamps(self, namespace: str, page: list[Memory]) -> list[Memory]:
        """The rows with their stored `last_accessed_at` (a listing that stamps needs none, so the store's listing
        does not read them), read without reading the records again; a row purged meanwhile keeps its None."""
        stamps = self._repository.stored_stamps(namespace, [memory.id for memory in page])
        return [
            memory.model_copy(update={"last_accessed_at": stamp.last_accessed_at if stamp else None})
            for memory in page
            for stamp in [stamps.get(memory.id)]
        ]


class _Unembedded:
    """The Indexer of a service given none: every digest's vector is left to the backfill."""

    def digest(self, content: str, tags: Sequence[str]) -> Digest:
        return Digest()


class _Told:
    """An Indexer that tells `told` each digest it computes."""

    def __init__(self, indexer: Indexer, told: Callable[[Digest], None]) -> None:
        self._indexer = indexer
        self._told = told

    def digest(self, content: str, tags: Sequence[str]) -> Digest:
        digest = self._indexer.digest(content, tags)
        self._told(digest)
        return digest


def _replayed(prior: PriorCreate, new: NewMemory, idempotency: IdempotentCreate | None) -> Memory:
    """The record the first create returned, when this is its retry; the id drawn for the retry stays unused (ids
    may have gaps, never repeats)."""
    if idempotency is None or prior.fingerprint != idempotency.fingerprint:
        field = idempotency.field if idempotency else "idempotency_key"
        message = (
            f"was already used within {IDEMPOTENCY_WINDOW_HOURS} hours for a create with a different body; "
            "use a new key"
        )
        raise InvalidInputError([FieldError(field, message)])
    return _created(prior.memory_id, new, prior.created_at)


def _created(memory_id: int, new: NewMemory, now: str) -> Memory:
    return Memory(
        id=memory_id,
        content=new.content,
        tags=new.tags,
        created_at=now,
        updated_at=now,
        last_accessed_at=None,
        memory_type=new.memory_type,
        status=new.status,
        version=1,
    )
