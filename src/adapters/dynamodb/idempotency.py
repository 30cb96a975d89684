"""Idempotency records (`sk = "IDEM#<sha256 of the key>"`, codec.py has the layout): a create's key, recorded in its
transaction for IDEMPOTENCY_WINDOW_SECONDS (a TTL attribute), read back to answer a retry, removed with the memory."""

from __future__ import annotations

from typing import Any

from adapters.dynamodb.codec import ABSENT, IDEMPOTENCY_PREFIX, memory_partition
from adapters.dynamodb.table import Items
from core.clock import epoch_seconds, parse_timestamp
from core.limits import IDEMPOTENCY_WINDOW_SECONDS
from core.model import IdempotentCreate, Memory
from core.repository import PriorCreate

Item = dict[str, Any]


def idempotency_key(namespace: str, key_hash: str) -> Item:
    return {"pk": memory_partition(namespace), "sk": {"S": f"{IDEMPOTENCY_PREFIX}{key_hash}"}}


def put_action(table: str, namespace: str, memory: Memory, idempotency: IdempotentCreate) -> Item:
    """The Put recording a create's idempotency key for IDEMPOTENCY_WINDOW_SECONDS, unless a live record has it."""
    now = epoch_seconds(parse_timestamp(memory.created_at))
    item = {
        **idempotency_key(namespace, idempotency.key_hash),
        "memory_id": {"N": str(memory.id)},
        "created_at": {"S": memory.created_at},
        "fingerprint": {"S": idempotency.fingerprint},
        # Also the table's TTL attribute: DynamoDB removes the record some time after it lapses.
        "expires_at": {"N": str(now + IDEMPOTENCY_WINDOW_SECONDS)},
    }
    return {
        "Put": {
            "TableName": table,
            "Item": item,
            # A lapsed record that TTL has not removed yet counts as absent.
            "ConditionExpression": f"{ABSENT} OR expires_at <= :now",
            "ExpressionAttributeValues": {":now": {"N": str(now)}},
        }
    }


def prior_create(items: Items, namespace: str, key_hash: str) -> PriorCreate | None:
    """The create recorded under the key, by a strongly consistent read; None when there is none."""
    item = items.get(idempotency_key(namespace, key_hash))
    if not item:
        return None
    return PriorCreate(
        memory_id=int(item["memory_id"]["N"]), created_at=item["created_at"]["S"], fingerprint=item["fingerprint"]["S"]
    )


def removal_action(table: str, namespace: str, key_hash: str, memory_id: int) -> Item:
    """The Delete of a removed memory's record, unless it already records another memory's create."""
    return {
        "Delete": {
            "TableName": table,
            "Key": idempotency_key(namespace, key_hash),
            "ConditionExpression": "attribute_not_exists(pk) OR memory_id = :id",
            "ExpressionAttributeValues": {":id": {"N": str(memory_id)}},
        }
    }
