"""Whole-namespace operations for the command line: export every memory (with its history), import into an empty
namespace, erase everything a namespace has (erasure.py). Not on any request path."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb import changes, records, revisions
from adapters.dynamodb.accessitems import AccessItems, joined, to_access_item
from adapters.dynamodb.client import call
from adapters.dynamodb.codec import (
    ABSENT,
    ACCESS_PREFIX,
    CHANGE_PREFIX,
    COUNTER_SK,
    DIGEST_PREFIX,
    IDEMPOTENCY_PREFIX,
    MEMORY_PREFIX,
    REVISION_PREFIX,
    SEARCH_PREFIX,
    STATS_SK,
    item_id,
    memory_partition,
    tag_partition,
)
from adapters.dynamodb.counters import totals_attribute
from adapters.dynamodb.digests import to_digest
from adapters.dynamodb.erasure import Erasure
from adapters.dynamodb.revisions import to_revision
from adapters.dynamodb.searchcopies import to_search_copy
from adapters.dynamodb.table import BATCH_WRITE_ITEMS, Items
from adapters.dynamodb.tagcopies import to_copy
from core.digest import Digest, Indexer
from core.errors import DomainError
from core.portable import ExportedMemory
from core.repository import Loaded
from core.repository.commit import Deletion

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]
Progress = Callable[[Counter[str]], None]

# Batches of puts an import has in flight at once.
IMPORT_WRITERS: Final = 4
IMPORT_SK: Final = "IMPORT"
# What each item of a namespace is, by its sort key (in the namespace partition) or its partition (a tag's).
_KINDS: Final = (
    (MEMORY_PREFIX, "memories"),
    (REVISION_PREFIX, "revisions"),
    (DIGEST_PREFIX, "recall digests"),
    (SEARCH_PREFIX, "search copies"),
    (ACCESS_PREFIX, "access items"),
    (IDEMPOTENCY_PREFIX, "idempotency records"),
    (COUNTER_SK, "id counters"),
    (CHANGE_PREFIX, "change markers"),
    (STATS_SK, "totals"),
    (IMPORT_SK, "import markers"),
)


class ImportRefusedError(DomainError):
    """The namespace cannot take this import (it holds data, or another import is under way in it)."""


class Namespaces:
    """Export, import and erasure of whole namespaces of one table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)

    # --- export ----------------------------------------------------------------------------------------------

    def export(self, namespace: str, *, include_deleted: bool, history: bool) -> Iterator[ExportedMemory]:
        """Every memory of the namespace in id order (deleted ones only when asked), with its history when asked."""
        request = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :memory)",
            "ExpressionAttributeValues": {":pk": memory_partition(namespace), ":memory": {"S": MEMORY_PREFIX}},
            "ConsistentRead": True,
        }
        for page in self._items.pages(request):
            stored = self._stamped(namespace, page)
            kept = [s for s in stored if include_deleted or s.memory.status != "deleted"]
            first, last = (kept[0].memory.id, kept[-1].memory.id) if kept else (0, 0)
            found = revisions.of_memories(self._items, namespace, first, last) if history and kept else {}
            for entry in kept:
                deletion = entry.deletion
                yield ExportedMemory.of(
                    entry.memory,
                    deletion.prior_status if deletion else None,
                    deletion.deleted_at if deletion else None,
                    found.get(entry.memory.id, []) if history else None,
                )

    def _stamped(self, namespace: str, page: list[Item]) -> list[Loaded]:
        """A page of memory items with their access items' stamps."""
        if not page:
            return []
        request = AccessItems.range_request(namespace, item_id(page[0]), item_id(page[-1]))
        accesses = {
            item_id(item): item for found in self._items.pages({**request, "ConsistentRead": True}) for item in found
        }
        return [records.loaded(joined(item, accesses.get(item_id(item)))) for item in page]

    # --- import ----------------------------------------------------------------------------------------------

    def begin_import(self, namespace: str, digest: str) -> bool:
        """Claim the namespace for the import of the file whose SHA-256 is `digest`: True when an earlier run of
        this same import stopped half-way (it goes on where it stopped), False when the namespace is empty.
        ImportRefusedError when it holds anything else."""
        marker = {"pk": memory_partition(namespace), "sk": {"S": IMPORT_SK}}
        found = call(self._client.get_item, TableName=self._table, Key=marker, ConsistentRead=True).get("Item")
        if found is not None:
            if found["digest"]["S"] != digest:
                raise ImportRefusedError(
                    f"namespace {namespace!r} is taking another import, which stopped half-way; run that import "
                    "again to finish it, or erase the namespace"
                )
            return True
        request = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": memory_partition(namespace)},
            "ProjectionExpression": "pk",
            "Limit": 1,
        }
        if next(self._items.pages(request)):
            raise ImportRefusedError(f"namespace {namespace!r} is not empty; import goes into an empty namespace only")
        call(
            self._client.put_item,
            TableName=self._table,
            Item={**marker, "digest": {"S": digest}},
            ConditionExpression=ABSENT,
        )
        return False

    def load(
        self, namespace: str, memories: list[ExportedMemory], progress: Progress, indexer: Indexer | None = None
    ) -> None:
        """Write every memory with its revisions, search and tag copies, access item, and its recall digest computed
        by `indexer` (None: without a vector; an export carries no vectors: the backfill embeds the digests),
        IMPORT_WRITERS batches at a time.
        Each write is a plain put of what the file says, so a run that stopped half-way is finished by writing it all
        again, but for the access items already there: a read since may have stamped one, and the file's stamp would
        set it back (only an import creates access items in a namespace it claims, and a stamp only moves forward, so
        one found stored needs nothing from the file). The counts are set once, from the whole file, by
        `finish_import`."""
        partition = memory_partition(namespace)
        stamped = self._access_items(namespace, memories)
        items = [
            item
            for memory in memories
            for item in _items(namespace, memory, indexer)
            if not (item["pk"] == partition and item["sk"]["S"] in stamped)
        ]
        batches = [items[start : start + BATCH_WRITE_ITEMS] for start in range(0, len(items), BATCH_WRITE_ITEMS)]
        written = Counter[str]()

        def write(batch: list[Item]) -> None:
            self._items.batch_write([{"PutRequest": {"Item": item}} for item in batch])

        with ThreadPoolExecutor(max_workers=IMPORT_WRITERS, thread_name_prefix="import") as pool:
            for batch, _ in zip(batches, pool.map(write, batches), strict=True):
                written.update(
                    _kind(item) if item["pk"] == memory_partition(namespace) else "tag copies" for item in batch
                )
                progress(written)

    def _access_items(self, namespace: str, memories: list[ExportedMemory]) -> set[str]:
        """The sort keys of the access items of `memories` already stored (by a run of this import that stopped)."""
        if not memories:
            return set()
        request = AccessItems.range_request(namespace, memories[0].memory.id, memories[-1].memory.id)
        return {item["sk"]["S"] for page in self._items.pages({**request, "ConsistentRead": True}) for item in page}

    def finish_import(self, namespace: str, memories: list[ExportedMemory]) -> None:
        """Set the namespace's and each tag's counts from the memories imported, the id counter to the highest
        id, and release the namespace."""
        partition = memory_partition(namespace)
        counts: dict[str, Counter[str]] = {"": Counter()}
        for exported in memories:
            memory = exported.memory
            counted = totals_attribute(memory.status, memory.memory_type)
            for tag in ["", *memory.tags]:
                counts.setdefault(tag, Counter())[counted] += 1
        for tag, tally in counts.items():
            call(
                self._client.put_item,
                TableName=self._table,
                Item={
                    "pk": tag_partition(namespace, tag) if tag else partition,
                    "sk": {"S": STATS_SK},
                    **{attribute: {"N": str(n)} for attribute, n in tally.items()},
                },
            )
        highest = max((exported.memory.id for exported in memories), default=0)
        if highest:
            call(
                self._client.put_item,
                TableName=self._table,
                Item={"pk": partition, "sk": {"S": COUNTER_SK}, "next_id": {"N": str(highest)}, "born": changes.born()},
            )
        call(self._client.delete_item, TableName=self._table, Key={"pk": partition, "sk": {"S": IMPORT_SK}})

    # --- erase -----------------------------------------------------------------------------------------------

    def erase(self, namespace: str, progress: Progress) -> Counter[str]:
        """Remove every item of the namespace, keys first, and verify none is left (erasure.py); counts per kind."""
        return Erasure(self._client, self._table, _kind).erase(namespace, progress)


def _kind(item: Item) -> str:
    sort_key = item["sk"]["S"]
    return next((kind for prefix, kind in _KINDS if sort_key.startswith(prefix)), "other items")


def _items(namespace: str, exported: ExportedMemory, indexer: Indexer | None) -> list[Item]:
    """What one memory of an import stores: its item (with what a restore and the purge need when it is deleted),
    its revisions, its search and tag copies, its access item (with its stamp) and its digest."""
    memory = exported.memory
    deletion = None
    if memory.status == "deleted" and exported.prior_status and exported.deleted_at:
        deletion = Deletion(exported.prior_status, exported.deleted_at)
    item = records.to_record(namespace, memory, len(exported.revisions or []), deletion, None)
    digest = indexer.digest(memory.content, memory.tags) if indexer else Digest()
    history = [to_revision(namespace, revision) for revision in exported.revisions or []]
    copies = [
        to_search_copy(namespace, memory),
        to_access_item(namespace, memory),
        *(to_copy(namespace, tag, memory) for tag in memory.tags),
    ]
    return [item, *history, to_digest(namespace, memory, digest), *copies]
