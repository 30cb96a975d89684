"""Memory items (`sk = "MEM#<id>"`, codec.py has the layout): the record as stored, as a write loads it, the action that
writes a change of it, and the steps of its removal (marked `purging`, then deleted; found by the purge's sparse index).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import ConditionFailedError, call
from adapters.dynamodb.codec import (
    ABSENT,
    ACCESSED_KEY,
    DELETED_INDEX,
    MEMORY_PREFIX,
    NAMESPACE_PREFIX,
    NEVER_ACCESSED,
    PURGE_SHARDS,
    item_id,
    memory_partition,
    purge_shard,
    sort_value,
    tags_value,
    timestamp_of,
)
from adapters.dynamodb.table import Items
from core.limits import ID_DIGITS
from core.model import Memory
from core.repository.commit import Change, Deletion, Loaded

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]

# What a change's Put holds on: the record is still as loaded (version, status, revision count) and no purge began.
_UNCHANGED: Final = (
    "version = :was_version AND #status = :was_status AND revisions = :was_revisions AND attribute_not_exists(purging)"
)


@dataclass(frozen=True)
class Token:
    """What a write loaded (Loaded.token): the values its commit's condition compares, and the hash of the idempotency
    key the memory was created with (kept on the record, so a purge removes that record too)."""

    version: int
    status: str
    revisions: int
    idempotency: str | None


def memory_sort_key(memory_id: int) -> dict[str, Any]:
    return {"S": f"{MEMORY_PREFIX}{memory_id:0{ID_DIGITS}d}"}


def memory_key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": memory_sort_key(memory_id)}


def folded_content(content: str) -> str | None:
    """The casefolded content `q` searches, kept only when it differs from the content itself."""
    folded = content.casefold()
    return folded if folded != content else None


def to_item(namespace: str, memory: Memory) -> Item:
    """The memory item of `memory`, its stamp left to its access item (accessitems.to_access_item)."""
    item: Item = {
        **memory_key(namespace, memory.id),
        "content": {"S": memory.content},
        "memory_type": {"S": memory.memory_type},
        "status": {"S": memory.status},
        "version": {"N": str(memory.version)},
        "created_key": sort_value(memory.created_at, memory.id),
        "updated_key": sort_value(memory.updated_at, memory.id),
    }
    if memory.tags:
        item["tags"] = {"S": tags_value(memory.tags)}
    if (folded := folded_content(memory.content)) is not None:
        item["folded"] = {"S": folded}
    return item


def to_record(
    namespace: str, memory: Memory, revisions: int, deletion: Deletion | None, idempotency: str | None
) -> Item:
    """The whole memory item: the record, its revision count, its deletion (with the purge index's shard) and the hash
    of the idempotency key it was created with."""
    item = {**to_item(namespace, memory), "revisions": {"N": str(revisions)}}
    if idempotency is not None:
        item["idempotency"] = {"S": idempotency}
    if deletion is not None:
        item |= {
            "prior_status": {"S": deletion.prior_status},
            "deleted_at": {"S": deletion.deleted_at},
            "purge_shard": purge_shard(namespace, memory.id),
        }
    return item


def from_item(item: Mapping[str, Any]) -> Memory:
    """A stored memory, with the stamp its access item holds when joined to it (None without it)."""
    accessed = item.get(ACCESSED_KEY, {}).get("S", NEVER_ACCESSED)
    tags = item.get("tags")
    return Memory.model_construct(
        id=item_id(item),
        content=item["content"]["S"],
        tags=tags["S"][1:-1].split("\n") if tags else [],
        created_at=timestamp_of(item["created_key"]["S"]),
        updated_at=timestamp_of(item["updated_key"]["S"]),
        last_accessed_at=None if accessed.startswith(NEVER_ACCESSED) else timestamp_of(accessed),
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
    )


def loaded(item: Mapping[str, Any]) -> Loaded:
    """A memory item (with its stamp joined: accessitems.stamped) as a write loads it."""
    memory = from_item(item)
    deletion = None
    if "prior_status" in item and "deleted_at" in item:
        deletion = Deletion(prior_status=item["prior_status"]["S"], deleted_at=item["deleted_at"]["S"])
    revisions = int(item["revisions"]["N"])
    idempotency = item["idempotency"]["S"] if "idempotency" in item else None
    token = Token(memory.version, memory.status, revisions, idempotency)
    return Loaded(memory, revisions, deletion, purging="purging" in item, token=token)


def token_of(loaded: Loaded) -> Token:
    token = loaded.token
    if not isinstance(token, Token):
        raise TypeError("a memory loaded by another store")
    return token


def _unchanged(token: Token) -> dict[str, Any]:
    return {
        "ConditionExpression": _UNCHANGED,
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {
            ":was_version": {"N": str(token.version)},
            ":was_status": {"S": token.status},
            ":was_revisions": {"N": str(token.revisions)},
        },
    }


def change_action(table: str, namespace: str, change: Change) -> Item:
    """The Put of a change's record: a new one only where none is; a changed one only while still as loaded."""
    if change.before is None:
        idempotency = change.idempotency.key_hash if change.idempotency else None
        item = to_record(namespace, change.after, change.revision.revision, None, idempotency)
        return {"Put": {"TableName": table, "Item": item, "ConditionExpression": ABSENT}}
    token = token_of(change.before)
    item = to_record(namespace, change.after, change.revision.revision, change.deletion, token.idempotency)
    return {"Put": {"TableName": table, "Item": item, **_unchanged(token)}}


def check_action(table: str, namespace: str, loaded: Loaded) -> Item:
    """The ConditionCheck that a memory a commit reads but does not change is still as loaded."""
    key = memory_key(namespace, loaded.memory.id)
    return {"ConditionCheck": {"TableName": table, "Key": key, **_unchanged(token_of(loaded))}}


def mark_purging(client: DynamoDBClient, table: str, namespace: str, loaded: Loaded) -> bool:
    """Mark the memory's removal begun (which hides its history and refuses a restore), while it is still as loaded."""
    condition = _unchanged(token_of(loaded))
    condition["ExpressionAttributeValues"][":purging"] = {"BOOL": True}
    try:
        call(
            client.update_item,
            TableName=table,
            Key=memory_key(namespace, loaded.memory.id),
            UpdateExpression="SET purging = :purging",
            **condition,
        )
    except ConditionFailedError:
        return False
    return True


def removal_action(table: str, namespace: str, memory_id: int) -> Item:
    """The Delete of a record whose removal has begun (never of one another purge finished and nothing re-created)."""
    key = memory_key(namespace, memory_id)
    return {"Delete": {"TableName": table, "Key": key, "ConditionExpression": "attribute_exists(purging)"}}


def deleted_before(items: Items, deleted_before: str) -> Iterator[tuple[str, int]]:
    """The namespace and id of each memory deleted before `deleted_before`, from the sparse index of deleted memories
    (never a scan of the table)."""
    for shard in range(PURGE_SHARDS):
        request = {
            "IndexName": DELETED_INDEX,
            "KeyConditionExpression": "purge_shard = :shard AND deleted_at < :before",
            "ExpressionAttributeValues": {":shard": {"S": f"{shard:02d}"}, ":before": {"S": deleted_before}},
        }
        for page in items.pages(request):
            for key in page:
                yield key["pk"]["S"][len(NAMESPACE_PREFIX) :], item_id(key)
