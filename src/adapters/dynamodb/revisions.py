"""Revision items (`sk = "REV#<id>#<n>"`, codec.py has the layout): each change's revision, written in the change's
transaction, a memory's history as a key range, and their removal with the memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adapters.dynamodb.changekeys import logged
from adapters.dynamodb.codec import CHANGE_INDEX, REVISION_PREFIX, memory_partition, tags_value
from adapters.dynamodb.table import Items
from core.history import Revision
from core.limits import ID_DIGITS, MAX_MEMORY_ID
from core.repository import Revisions

Item = dict[str, Any]


def revision_prefix(memory_id: int) -> str:
    return f"{REVISION_PREFIX}{memory_id:0{ID_DIGITS}d}#"


def revision_key(namespace: str, memory_id: int, number: int) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": {"S": f"{revision_prefix(memory_id)}{number:0{ID_DIGITS}d}"}}


def to_revision(namespace: str, revision: Revision) -> Item:
    item: Item = {
        **revision_key(namespace, revision.id, revision.revision),
        "change": {"S": revision.change},
        "changed_at": {"S": revision.changed_at},
        "content": {"S": revision.content},
        "memory_type": {"S": revision.memory_type},
        "status": {"S": revision.status},
        "version": {"N": str(revision.version)},
        "created_at": {"S": revision.created_at},
        "updated_at": {"S": revision.updated_at},
    }
    if revision.tags:
        item["tags"] = {"S": tags_value(revision.tags)}
    if revision.key_id is not None:
        item["key_id"] = {"S": revision.key_id}
    if revision.superseded_by is not None:
        item["superseded_by"] = {"N": str(revision.superseded_by)}
    return item


def from_revision(item: Mapping[str, Any]) -> Revision:
    memory_id, number = item["sk"]["S"][len(REVISION_PREFIX) :].split("#")
    tags = item.get("tags")
    return Revision.model_construct(
        revision=int(number),
        change=item["change"]["S"],
        changed_at=item["changed_at"]["S"],
        key_id=item["key_id"]["S"] if "key_id" in item else None,
        id=int(memory_id),
        content=item["content"]["S"],
        tags=tags["S"][1:-1].split("\n") if tags else [],
        created_at=item["created_at"]["S"],
        updated_at=item["updated_at"]["S"],
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
        superseded_by=int(item["superseded_by"]["N"]) if "superseded_by" in item else None,
    )


def put_action(table: str, namespace: str, revision: Revision) -> Item:
    # Unconditional: the record's own condition (its revision count) makes this number its alone. Logged: a warm index
    # reads the change from the change index (changes.py, changekeys.py).
    return {"Put": {"TableName": table, "Item": logged(to_revision(namespace, revision))}}


def page(items: Items, namespace: str, memory_id: int, total: int, limit: int, offset: int) -> Revisions:
    """A page of the `total` revisions of a memory, newest first: numbered 1..total, so a page is a range of keys."""
    newest = total - offset
    if newest < 1:
        return Revisions(items=[], total=total)
    oldest = max(1, newest - limit + 1)
    prefix = revision_prefix(memory_id)
    request = {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :oldest AND :newest",
        "ExpressionAttributeValues": {
            ":pk": memory_partition(namespace),
            ":oldest": {"S": f"{prefix}{oldest:0{ID_DIGITS}d}"},
            ":newest": {"S": f"{prefix}{newest:0{ID_DIGITS}d}"},
        },
        "ScanIndexForward": False,
        "ConsistentRead": True,
    }
    return Revisions(items=[from_revision(item) for found in items.pages(request) for item in found], total=total)


def logged_since(items: Items, namespace: str, since: str, limit: int, offset: int) -> Revisions:
    """A page of the namespace's revisions logged at or after `since`, newest first, from the change index: its keys
    since then (an entry is about 150 bytes; the index's markers are left out), then the page's revisions by key."""
    request = {
        "IndexName": CHANGE_INDEX,
        "KeyConditionExpression": "pk = :pk AND change_key >= :since",
        "ExpressionAttributeValues": {":pk": memory_partition(namespace), ":since": {"S": since}},
        "ScanIndexForward": False,
    }
    keys = [
        {"pk": entry["pk"], "sk": entry["sk"]}
        for found in items.pages(request)
        for entry in found
        if entry["sk"]["S"].startswith(REVISION_PREFIX)
    ]
    wanted = keys[offset : offset + limit]
    # Strongly consistent: the index lists a revision once it is written, so a page names no revision it cannot show
    # (one purged between the two reads is left out).
    stored = items.get_many(wanted, consistent=True) if wanted else []
    return Revisions(items=[from_revision(item) for item in stored if item is not None], total=len(keys))


def of_memories(items: Items, namespace: str, first: int, last: int) -> dict[int, list[Revision]]:
    """Every revision of the memories with ids `first` to `last`, oldest first, by memory (what an export writes)."""
    request = {
        "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
        "ExpressionAttributeValues": {
            ":pk": memory_partition(namespace),
            ":first": {"S": revision_prefix(first)},
            ":last": {"S": f"{revision_prefix(last)}{MAX_MEMORY_ID:0{ID_DIGITS}d}"},
        },
        "ConsistentRead": True,
    }
    found: dict[int, list[Revision]] = {}
    for page_items in items.pages(request):
        for item in page_items:
            revision = from_revision(item)
            found.setdefault(revision.id, []).append(revision)
    return found


def delete_all(items: Items, namespace: str, memory_id: int) -> None:
    """Remove every revision of a memory (the first step of its removal, before the record's transaction)."""
    request = {
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {":pk": memory_partition(namespace), ":prefix": {"S": revision_prefix(memory_id)}},
        "ProjectionExpression": "pk, sk",
        "ConsistentRead": True,
    }
    keys = [key for found in items.pages(request) for key in found]
    items.batch_write([{"DeleteRequest": {"Key": key}} for key in keys])
