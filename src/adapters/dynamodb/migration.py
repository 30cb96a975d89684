"""`agent-memory migrate`: bring a table's stored memories up to this version's layout.

Five jobs. Tag copies (codec.py) for every memory stored before they existed: each memory is copied in a
transaction conditioned on its version and status and on having no copies yet, so a concurrent PATCH or delete
(which copies a memory it writes) is never double counted. Once a pass over the table finds every memory of a
namespace copied, its STATS item says so and tag searches there read the tag's copies instead of the namespace.
And a deletion time for every memory deleted before deletes recorded one: the run's own time (the earliest this
version can vouch for, so the retention window is never cut short), which puts it in the purge's index. And, given an
indexer, recall's digest (digests.py) for every memory stored before digests existed, written as the copies are, its
terms only: the backfill (`agent-memory embed`, the hourly purge function, `serve`) embeds it. And a search copy
(codec.py) for every memory stored before they existed, written as the tag copies are; once a pass finds every memory
of a namespace with one, its STATS item says so and `q` searches there read the copies instead of the records. And
an access item (accessitems.py) for every memory stored before they existed, its stamp moved from the record in a
transaction conditioned on the stamp as read too (a concurrent stamp makes it read again); once a pass finds every
memory of a namespace with one, its STATS item says so and its stamps go to the access items alone.
Run it once after deploying this version, with no earlier writer left: it never repairs a copy one left stale after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.accessitems import to_access_item
from adapters.dynamodb.client import ConditionFailedError, TransactionCancelledError, call, storage_refused
from adapters.dynamodb.codec import (
    ACCESS_ITEMS,
    ACCESSED_KEY,
    DELETED,
    DIGEST_PREFIX,
    DIGESTED,
    MEMORY_PREFIX,
    NAMESPACE_PREFIX,
    SEARCH_COPIES,
    STATS_SK,
    TAG_COPIES,
    TAG_PARTITION,
    from_item,
    memory_partition,
    purge_shard,
)
from adapters.dynamodb.digests import to_digest, waiting
from adapters.dynamodb.expressions import tag_copy_actions
from adapters.dynamodb.searchcopies import to_search_copy
from core.clock import format_timestamp, utc_now
from core.digest import Indexer
from core.model import Memory

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A memory that keeps changing under its copy is read again this many times before the run gives up on it.
COPY_ATTEMPTS: Final = 5


@dataclass
class Migrated:
    namespaces: int = 0
    copied: int = 0
    skipped: int = 0  # changed by another writer meanwhile: their namespace stays unmarked; run again
    dated: int = 0  # deleted memories given a deletion time (their retention window starts now)
    digested: int = 0  # memories given their recall digest, waiting for the backfill to embed it
    undigested: int = 0  # changed by another writer meanwhile: still without a digest; run again
    searchable: int = 0  # memories given their search copy
    unsearchable: int = 0  # changed by another writer meanwhile: their namespace stays unmarked; run again
    accessed: int = 0  # memories given their access item (their stamp moved into it)
    unaccessed: int = 0  # changed or stamped by another writer meanwhile: their namespace stays unmarked; run again


def migrate(client: DynamoDBClient, table: str, now: str | None = None, *, indexer: Indexer | None = None) -> Migrated:
    """Copy every memory without tag copies, then mark each namespace whose memories all have them; give every
    deleted memory without a deletion time `now` (by default the current time) as one; with `indexer`, give every
    memory without a digest its digest, without a vector; give every memory without a search copy or an access item
    its copy and its item, then mark each namespace whose memories all have each."""
    now = now or format_timestamp(utc_now())
    result = Migrated()
    # Per namespace-wide mark, the namespaces where a memory kept changing under its copy: they stay unmarked.
    unfinished: dict[str, set[str]] = {TAG_COPIES: set(), SEARCH_COPIES: set(), ACCESS_ITEMS: set()}
    namespaces: set[str] = set()
    for item in _memories_and_stats(client, table):
        namespace = item["pk"]["S"][len(NAMESPACE_PREFIX) :]
        namespaces.add(namespace)
        if not item["sk"]["S"].startswith(MEMORY_PREFIX):
            continue
        if item.get("status") == DELETED and "deleted_at" not in item:
            result.dated += _date_deletion(client, table, namespace, item["sk"], now)
        if indexer is not None and DIGESTED not in item:
            if _digest(client, table, namespace, item["sk"], indexer):
                result.digested += 1
            else:
                result.undigested += 1
        for mark in _copy_marks(client, table, namespace, item, result):
            unfinished[mark].add(namespace)
    for namespace in sorted(namespaces):
        if marks := [mark for mark, left in unfinished.items() if namespace not in left]:
            call(
                client.update_item,
                TableName=table,
                Key={"pk": memory_partition(namespace), "sk": {"S": STATS_SK}},
                UpdateExpression="SET " + ", ".join(f"{mark} = :one" for mark in marks),
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
    result.namespaces = len(namespaces - unfinished[TAG_COPIES])
    return result


def _copy_marks(
    client: DynamoDBClient, table: str, namespace: str, item: dict[str, Any], result: Migrated
) -> list[str]:
    """Give the memory `item` its search copy, tag copies and access item where it lacks them, counted in `result`;
    the marks of those it could not write (it kept changing under them)."""
    left = []
    for mark, write, done, undone in (
        (SEARCH_COPIES, _search_copy, "searchable", "unsearchable"),
        (TAG_COPIES, _copy, "copied", "skipped"),
        (ACCESS_ITEMS, _access_item, "accessed", "unaccessed"),
    ):
        if mark in item:
            continue
        counted = done if write(client, table, namespace, item["sk"]) else undone
        setattr(result, counted, getattr(result, counted) + 1)
        if counted == undone:
            left.append(mark)
    return left


def _memories_and_stats(client: DynamoDBClient, table: str) -> Iterator[dict[str, Any]]:
    """The key (and copies mark) of every memory and namespace STATS item in the table, tag partitions left out."""
    request: dict[str, Any] = {
        "TableName": table,
        "ProjectionExpression": (
            f"pk, sk, {TAG_COPIES}, {SEARCH_COPIES}, {ACCESS_ITEMS}, {DIGESTED}, #status, deleted_at"
        ),
        "ExpressionAttributeNames": {"#status": "status"},
        "FilterExpression": (
            "begins_with(pk, :ns) AND NOT contains(pk, :tag) AND (begins_with(sk, :mem) OR sk = :stats)"
        ),
        "ExpressionAttributeValues": {
            ":ns": {"S": NAMESPACE_PREFIX},
            ":tag": {"S": TAG_PARTITION},
            ":mem": {"S": MEMORY_PREFIX},
            ":stats": {"S": STATS_SK},
        },
        "ConsistentRead": True,
    }
    while True:
        response = call(client.scan, **request)
        yield from response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _date_deletion(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any], now: str) -> bool:
    """Give a deleted memory without a deletion time `now` as one, unless it changed meanwhile (restored, dated)."""
    memory_id = int(sort_key["S"][len(MEMORY_PREFIX) :])
    try:
        call(
            client.update_item,
            TableName=table,
            Key={"pk": memory_partition(namespace), "sk": sort_key},
            UpdateExpression="SET deleted_at = :now, purge_shard = :shard",
            ConditionExpression="#status = :deleted AND attribute_not_exists(deleted_at)",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":now": {"S": now},
                ":shard": purge_shard(namespace, memory_id),
                ":deleted": DELETED,
            },
        )
    except ConditionFailedError:
        return False
    return True


def _copy(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any]) -> bool:
    """Write one memory's copies and count them; False when it kept changing under the attempts."""
    return _marked(
        client, table, namespace, sort_key, TAG_COPIES, lambda memory: tag_copy_actions(table, namespace, None, memory)
    )


def _search_copy(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any]) -> bool:
    """Write one memory's search copy; False when it kept changing under the attempts."""

    def put(memory: Memory) -> list[dict[str, Any]]:
        return [{"Put": {"TableName": table, "Item": to_search_copy(namespace, memory)}}]

    return _marked(client, table, namespace, sort_key, SEARCH_COPIES, put)


def _access_item(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any]) -> bool:
    """Move one memory's stamp into its access item; False when it kept changing (or being stamped) under the
    attempts."""

    def put(memory: Memory) -> list[dict[str, Any]]:
        return [{"Put": {"TableName": table, "Item": to_access_item(namespace, memory)}}]

    return _marked(client, table, namespace, sort_key, ACCESS_ITEMS, put, moves_stamp=True)


def _digest(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any], indexer: Indexer) -> bool:
    """Write one memory's digest (terms only); False when it kept changing under the attempts."""

    def put(memory: Memory) -> list[dict[str, Any]]:
        digest = indexer.digest(memory.content, memory.tags)
        return [{"Put": {"TableName": table, "Item": to_digest(namespace, memory, digest)}}]

    return _marked(client, table, namespace, sort_key, DIGESTED, put)


def _marked(
    client: DynamoDBClient,
    table: str,
    namespace: str,
    sort_key: dict[str, Any],
    mark: str,
    actions: Callable[[Memory], list[dict[str, Any]]],
    *,
    moves_stamp: bool = False,
) -> bool:
    """Set `mark` on one memory in one transaction with `actions(memory)`, conditioned on the memory as read (same
    version and status, no `mark` yet, no purge begun), so a concurrent PATCH, delete or purge (which write what
    `mark` stands for themselves) is never done twice; False when it kept changing under the attempts. With
    `moves_stamp`, the record's own stamp goes (`actions` wrote it elsewhere), held to it as read too."""
    key = {"pk": memory_partition(namespace), "sk": sort_key}
    for _ in range(COPY_ATTEMPTS):
        item = call(client.get_item, TableName=table, Key=key, ConsistentRead=True).get("Item")
        if item is None or mark in item or "purging" in item:
            return True  # gone, being purged, or written by a PATCH or delete meanwhile: nothing to do
        memory = from_item(item)
        condition = (
            f"version = :version AND #status = :status AND attribute_not_exists({mark}) "
            "AND attribute_not_exists(purging)"
        )
        values = {":mark": {"BOOL": True}, ":version": {"N": str(memory.version)}, ":status": {"S": memory.status}}
        expression = f"SET {mark} = :mark"
        if moves_stamp:
            expression += f" REMOVE {ACCESSED_KEY}"
            if ACCESSED_KEY in item:
                condition += f" AND {ACCESSED_KEY} = :stamp"
                values[":stamp"] = item[ACCESSED_KEY]
            else:
                condition += f" AND attribute_not_exists({ACCESSED_KEY})"
        update = {
            "TableName": table,
            "Key": key,
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": values,
        }
        try:
            call(client.transact_write_items, TransactItems=[{"Update": update}, *actions(memory)])
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0) or cancelled.only_collided:
                continue  # changed meanwhile: read it again
            raise storage_refused(cancelled) from None
        return True
    return False


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
