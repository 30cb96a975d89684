"""Recall's digests in the table (codec.py has the layout): the transaction actions that keep each digest beside its
memory, recall's reads of them, and the backfill's reads and conditional writes.

Recall reads the whole namespace's digests, as a `q` search reads its records, split by id into segments read at once
(listing.py), so a digest must cost less than a record: a record holds its content twice (as written and casefolded)
and three sort keys; a digest holds its content deflated (about 70 % of its bytes), its creation time only once it
differs from its update time, and its vector (a byte a dimension). It is the record but its stamp, so a recall answers
its page from digests alone; it carries no terms: recall counts them from the content (core.words), as cheap to store
and far cheaper than a record read per answer. Measured on the bench's memories, a recall over 1,000 of them reads
fewer units than a `q` search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb import changes
from adapters.dynamodb.accessitems import stamped
from adapters.dynamodb.client import READERS, ConditionFailedError, call
from adapters.dynamodb.codec import (
    DIGEST_PREFIX,
    NAMESPACE_PREFIX,
    PURGE_SHARDS,
    UNEMBEDDED_INDEX,
    deflated,
    inflated,
    memory_partition,
    purge_shard,
    tags_value,
)
from adapters.dynamodb.queries import LARGEST_DIMENSIONS, digest_segment_ids, kind_conditions, segments
from adapters.dynamodb.rawitems import raw_items, watch
from adapters.dynamodb.records import from_item
from adapters.dynamodb.table import Items
from core.budget import carried
from core.digest import Digest, Vector
from core.limits import ID_DIGITS
from core.model import Memory
from core.repository.digests import (
    Candidate,
    CandidateFilter,
    DigestChanges,
    DigestSnapshot,
    OwnDigest,
    Unembedded,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]

# What recall reads of a digest (filters are evaluated by DynamoDB on the rest), and what a warm index keeps (the
# filters' too). The read units are the whole item's either way.
CANDIDATE_ATTRIBUTES: Final = (
    "sk, #text, tags, created_at, updated_at, memory_type, #status, version, vec, vec_scale, vec_model"
)
ATTRIBUTE_NAMES: Final = {"#status": "status", "#text": "text"}


def to_digest(namespace: str, memory: Memory, digest: Digest) -> Item:
    item: Item = {
        **digest_key(namespace, memory.id),
        "text": {"B": deflated(memory.content)},
        "memory_type": {"S": memory.memory_type},
        "status": {"S": memory.status},
        "updated_at": {"S": memory.updated_at},
        "version": {"N": str(memory.version)},
    }
    if memory.created_at != memory.updated_at:
        item["created_at"] = {"S": memory.created_at}
    if memory.tags:
        item["tags"] = {"S": tags_value(memory.tags)}
    if digest.vector is None or digest.model is None:
        item["embed_shard"] = purge_shard(namespace, memory.id)
    else:
        item |= _vector(digest.vector, digest.model)
    return item


def _vector(vector: Vector, model: str) -> Item:
    return {"vec": {"B": vector.codes}, "vec_scale": {"N": repr(vector.scale)}, "vec_model": {"S": model}}


def to_candidate(item: Mapping[str, Any]) -> Candidate:
    vector = Vector(item["vec"]["B"], float(item["vec_scale"]["N"])) if "vec" in item else None
    tags = item.get("tags")
    updated_at = item["updated_at"]["S"]
    return Candidate(
        memory_id=int(item["sk"]["S"][len(DIGEST_PREFIX) :]),
        content=inflated(item["text"]["B"]),
        tags=tuple(tags["S"][1:-1].split("\n")) if tags else (),
        created_at=item["created_at"]["S"] if "created_at" in item else updated_at,
        updated_at=updated_at,
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
        vector=vector,
        model=item["vec_model"]["S"] if vector is not None else None,
    )


def digest_sort_key(memory_id: int) -> dict[str, Any]:
    return {"S": f"{DIGEST_PREFIX}{memory_id:0{ID_DIGITS}d}"}


def digest_key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": digest_sort_key(memory_id)}


def change_action(table: str, namespace: str, after: Memory, digest: Digest | None) -> Item:
    """What a change of a memory into `after` does to its digest, as an action of the change's transaction: `digest`
    replaces it; None carries the memory's status, type, `updated_at` and version into the stored one (and its
    creation time, which the digest holds only once it differs from the update time)."""
    if digest is not None:
        return {"Put": {"TableName": table, "Item": to_digest(namespace, after, digest)}}
    follow = {
        "TableName": table,
        "Key": digest_key(namespace, after.id),
        "UpdateExpression": (
            "SET #status = :status, memory_type = :type, updated_at = :updated, version = :version,"
            " created_at = if_not_exists(created_at, :created)"
        ),
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {
            ":status": {"S": after.status},
            ":type": {"S": after.memory_type},
            ":updated": {"S": after.updated_at},
            ":version": {"N": str(after.version)},
            ":created": {"S": after.created_at},
        },
    }
    return {"Update": follow}


def removal_action(table: str, namespace: str, memory_id: int) -> Item:
    return {"Delete": {"TableName": table, "Key": digest_key(namespace, memory_id)}}


class Digests:
    """The digests of one table, as recall and the backfill read and write them."""

    def __init__(
        self, client: DynamoDBClient, table_name: str, items: Items, dimensions: int = LARGEST_DIMENSIONS
    ) -> None:
        """`dimensions`: the ranking model's, which the segments recall reads are sized for."""
        self._client = client
        self._table = table_name
        self._items = items
        self._segment_ids = digest_segment_ids(dimensions)
        watch(client)

    def candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        counter = changes.counter(self._items, namespace)
        return [to_candidate(item) for item in self._read(self._filtered(namespace, filters), counter)]

    def snapshot(self, namespace: str) -> DigestSnapshot:
        """Every digest of the namespace, after the mark of the changes it holds (changes.py)."""
        counter = changes.counter(self._items, namespace)
        mark = changes.mark(self._items, namespace, counter)
        request = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "ProjectionExpression": CANDIDATE_ATTRIBUTES,
            "ExpressionAttributeNames": ATTRIBUTE_NAMES,
            "ExpressionAttributeValues": {":pk": memory_partition(namespace)},
        }
        return DigestSnapshot([to_candidate(item) for item in self._read(request, counter)], mark)

    def changes(self, namespace: str, mark: object) -> DigestChanges | None:
        return changes.since(self._items, namespace, mark)

    def rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        """The digests by id, strongly consistent (a read unit each, up to 4 KB)."""
        keys = [digest_key(namespace, memory_id) for memory_id in dict.fromkeys(memory_ids)]
        return [to_candidate(item) for item in self._items.get_many(keys, consistent=True) if item] if keys else []

    def _read(self, request: Item, counter: Mapping[str, Any] | None) -> list[Item]:
        """The digests `request` (a Query of the namespace's digest range) reads, its segments read at once, up to
        the highest id of `counter` (the namespace's id counter, as the caller read it)."""
        # Eventually consistent: the last segment is open-ended, so a stale counter misses no memory.
        bounds = segments(changes.highest_id(counter), self._segment_ids)
        found = READERS.map(carried(lambda bound: self._segment(request, *bound)), bounds)
        return [item for part in found for item in part]

    def _filtered(self, namespace: str, filters: CandidateFilter) -> Item:
        """The Query of the namespace's digests with the filters' conditions, as the retrieval's (queries.py)."""
        conditions, values = kind_conditions(filters.status, filters.memory_type, filters.tag)
        values[":pk"] = memory_partition(namespace)
        return {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "FilterExpression": " AND ".join(conditions),
            "ProjectionExpression": CANDIDATE_ATTRIBUTES,
            "ExpressionAttributeNames": ATTRIBUTE_NAMES,
            "ExpressionAttributeValues": values,
        }

    def _segment(self, request: Item, first: int, last: int) -> list[Item]:
        values = {
            **request["ExpressionAttributeValues"],
            ":first": digest_sort_key(first),
            ":last": digest_sort_key(last),
        }
        paged = {**request, "ExpressionAttributeValues": values}
        with raw_items():  # read whole in this thread: recall's largest cost is parsing thousands of digests
            return [item for page in self._items.pages(paged) for item in page]

    def digest_of(self, namespace: str, memory_id: int) -> OwnDigest | None:
        """One consistent GetItem of the memory's digest (about 1 KB or less: one read unit)."""
        item = self._items.get(digest_key(namespace, memory_id))
        if item is None:
            return None
        vector = Vector(item["vec"]["B"], float(item["vec_scale"]["N"])) if "vec" in item else None
        return OwnDigest(item["status"]["S"], vector, item["vec_model"]["S"] if vector is not None else None)

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        """The records (with their stamps) of those of `memory_ids` still stored, eventually consistent."""
        ids = list(dict.fromkeys(memory_ids))
        return [from_item(item) for item in stamped(self._items, namespace, ids) if item] if ids else []

    def unembedded(self, limit: int) -> list[Unembedded]:
        found: list[Unembedded] = []
        for shard in range(PURGE_SHARDS):
            request = {
                "IndexName": UNEMBEDDED_INDEX,
                "KeyConditionExpression": "embed_shard = :shard",
                "ExpressionAttributeValues": {":shard": {"S": f"{shard:02d}"}},
                "Limit": limit - len(found),
            }
            for page in self._items.pages(request):
                found += [waiting(item) for item in page[: limit - len(found)]]
                if len(found) >= limit:
                    return found
        return found

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key=digest_key(namespace, memory_id),
                UpdateExpression="SET vec = :vec, vec_scale = :vec_scale, vec_model = :vec_model REMOVE embed_shard",
                ConditionExpression="version = :version AND attribute_exists(embed_shard)",
                ExpressionAttributeValues={
                    **{f":{name}": value for name, value in _vector(vector, model).items()},
                    ":version": {"N": str(version)},
                },
            )
        except ConditionFailedError:
            return False
        # After its vector: a warm index reading the marker reads the digest as embedded.
        call(self._client.put_item, TableName=self._table, Item=changes.marker(namespace, memory_id, "embedded"))
        return True


def waiting(item: Mapping[str, Any]) -> Unembedded:
    return Unembedded(item["pk"]["S"][len(NAMESPACE_PREFIX) :], int(item["sk"]["S"][len(DIGEST_PREFIX) :]))


def unembed_other_models(client: DynamoDBClient, table: str, model: str) -> int:
    """Put every digest whose vector another model made back among those waiting for the backfill (its vector stays
    until the backfill replaces it), so `agent-memory embed --all` re-embeds a table after a change of model; how
    many. Reads every item of the table: the command line's, never a request's."""
    request: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "begins_with(sk, :digest) AND vec_model <> :model AND attribute_not_exists(embed_shard)",
        "ExpressionAttributeValues": {":digest": {"S": DIGEST_PREFIX}, ":model": {"S": model}},
        "ProjectionExpression": "pk, sk, vec_model",
        "ConsistentRead": True,
    }
    marked = 0
    while True:
        response = call(client.scan, **request)
        marked += sum(_unembed(client, table, item) for item in response.get("Items", []))
        if "LastEvaluatedKey" not in response:
            return marked
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _unembed(client: DynamoDBClient, table: str, item: dict[str, Any]) -> bool:
    memory = waiting(item)
    try:
        call(
            client.update_item,
            TableName=table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression="SET embed_shard = :shard",
            ConditionExpression="vec_model = :model AND attribute_not_exists(embed_shard)",
            ExpressionAttributeValues={
                ":shard": purge_shard(memory.namespace, memory.memory_id),
                ":model": item["vec_model"],
            },
        )
    except ConditionFailedError:
        return False  # changed meanwhile: its new digest waits already, or is of the current model
    return True
