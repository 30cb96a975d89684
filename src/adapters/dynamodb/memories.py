"""DynamoDBMemoryRepository: the MemoryRepository port over one DynamoDB table (codec.py has the layout; commit.py the
write side, one module per kind of item below it)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING

from adapters.dynamodb import counters, records, revisions
from adapters.dynamodb.accessitems import stamped, stored_stamps
from adapters.dynamodb.client import incidental
from adapters.dynamodb.commit import Committer, load
from adapters.dynamodb.digests import Digests
from adapters.dynamodb.fence import confirm_live
from adapters.dynamodb.listing import Listing
from adapters.dynamodb.queries import LARGEST_DIMENSIONS
from adapters.dynamodb.searchcopies import WARM_SEARCH_BYTES
from adapters.dynamodb.stamps import Stamps
from adapters.dynamodb.table import Items
from core.contract import RetrievalQuery
from core.digest import Vector
from core.errors import MemoryNotFoundError
from core.model import Memory
from core.repository import Commit, LiveKey, Loaded, Matches, Revisions
from core.repository.digests import (
    Candidate,
    CandidateFilter,
    DigestChanges,
    DigestSnapshot,
    OwnDigest,
    StoredStamp,
    Unembedded,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class DynamoDBMemoryRepository:
    """MemoryRepository over one DynamoDB table."""

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        *,
        dimensions: int = LARGEST_DIMENSIONS,
        warm_search_bytes: int = WARM_SEARCH_BYTES,
    ) -> None:
        """`dimensions`: the ranking model's (the bytes of its vectors, which size recall's reads of the digests:
        queries.digest_segment_ids); by default the largest a deployment's model makes. `warm_search_bytes`: the
        budget of this process's warm copies for `q` searches (searchcopies.SearchCopies; 0: none)."""
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)
        self._listing = Listing(client, table_name, warm_search_bytes)
        self._stamps = Stamps(client, table_name, self._items)
        self._committer = Committer(client, table_name, self._items)
        self._digests = Digests(client, table_name, self._items, dimensions)

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        # An id drawn without an answer is at most an id lost (ids may have gaps); the create stored nothing.
        with incidental():
            return counters.next_id(self._items, self._client, self._table, namespace, live_key)

    def load(self, namespace: str, memory_id: int) -> Loaded | None:
        return load(self._items, namespace, memory_id)

    def load_all(self, namespace: str, memory_ids: Sequence[int]) -> list[Loaded | None]:
        unique = list(dict.fromkeys(memory_ids))  # BatchGetItem refuses a key asked for twice
        found = (
            dict(zip(unique, stamped(self._items, namespace, unique, consistent=True), strict=True)) if unique else {}
        )
        return [records.loaded(item) if (item := found[memory_id]) else None for memory_id in memory_ids]

    def commit(self, commit: Commit) -> None:
        self._committer.commit(commit)

    def remove(self, namespace: str, loaded: Loaded) -> bool:
        return self._committer.remove(namespace, loaded)

    def deleted_before(self, deleted_before: str) -> Iterator[tuple[str, int]]:
        return records.deleted_before(self._items, deleted_before)

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        """The stored memory (deleted ones included) by a strongly consistent read, without stamping it; not part
        of the port: tests and the bench look at stored memories with it."""
        loaded = load(self._items, namespace, memory_id)
        return loaded.memory if loaded else None

    def read(self, namespace: str, memory_id: int, accessed_at: str | None, live_key: LiveKey | None = None) -> Memory:
        confirm = None if live_key is None else partial(confirm_live, self._items, live_key)
        if accessed_at is not None:
            return self._stamps.read(namespace, memory_id, accessed_at, confirm)
        loaded = load(self._items, namespace, memory_id)
        if confirm is not None:
            confirm()
        if loaded is None or loaded.memory.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        return loaded.memory

    def confirm_live(self, live_key: LiveKey) -> None:
        confirm_live(self._items, live_key)

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        loaded = load(self._items, namespace, memory_id)
        if loaded is None or loaded.purging:
            raise MemoryNotFoundError(memory_id)
        return revisions.page(self._items, namespace, memory_id, loaded.revisions, limit, offset)

    def changes(self, namespace: str, since: str, limit: int, offset: int) -> Revisions:
        return revisions.logged_since(self._items, namespace, since, limit, offset)

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        return self._listing.find(namespace, query)

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        self._stamps.stamp(namespace, memory_ids, accessed_at)

    def stamp_with_prior(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> dict[int, StoredStamp]:
        return self._stamps.stamp_with_prior(namespace, memory_ids, accessed_at)

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        return self._digests.candidates(namespace, filters)

    def digest_snapshot(self, namespace: str) -> DigestSnapshot:
        return self._digests.snapshot(namespace)

    def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
        return self._digests.changes(namespace, mark)

    def digest_rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        return self._digests.rows(namespace, memory_ids)

    def digest_of(self, namespace: str, memory_id: int) -> OwnDigest | None:
        return self._digests.digest_of(namespace, memory_id)

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        return self._digests.records(namespace, memory_ids)

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        return stored_stamps(self._items, namespace, memory_ids)

    def unembedded(self, limit: int) -> list[Unembedded]:
        return self._digests.unembedded(limit)

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        return self._digests.embed(namespace, memory_id, version, vector, model)
