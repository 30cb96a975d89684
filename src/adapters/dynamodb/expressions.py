"""The write requests the memory repository sends: update expressions built clause by clause, the transaction
actions that move totals and record idempotency keys, and the conditions the writes share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from adapters.dynamodb.codec import (
    IDEMPOTENCY_PREFIX,
    STATS_SK,
    folded_content,
    memory_partition,
    memory_sort_key,
    tag_partition,
    tags_value,
    to_copy,
    totals_attribute,
)
from core.clock import epoch_seconds, parse_timestamp
from core.limits import IDEMPOTENCY_WINDOW_SECONDS
from core.model import IdempotentCreate, Memory

ABSENT: Final = "attribute_not_exists(pk)"
VISIBLE: Final = "attribute_exists(pk) AND #status <> :deleted"


@dataclass
class Write:
    """An UpdateItem's SET and REMOVE clauses and their values, built up clause by clause."""

    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)

    def set(self, clause: str, **values: Any) -> None:
        self.sets.append(clause)
        self.values.update({f":{name}": value for name, value in values.items()})

    def content(self, content: str) -> None:
        self.set("content = :content", content={"S": content})
        if (folded := folded_content(content)) is None:
            self.removes.append("folded")
        else:
            self.set("folded = :folded", folded={"S": folded})

    def tags(self, tags: Sequence[str]) -> None:
        if tags:
            self.set("tags = :tags", tags={"S": tags_value(tags)})
        else:
            self.removes.append("tags")

    def request(self) -> dict[str, Any]:
        expression = "SET " + ", ".join(self.sets) + (" REMOVE " + ", ".join(self.removes) if self.removes else "")
        return {
            "UpdateExpression": expression,
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": self.values,
        }


def totals_update(table: str, partition: Mapping[str, Any], deltas: Mapping[str, int]) -> dict[str, Any]:
    """The transaction action moving the totals of a namespace's (or a tag's) partition by `deltas` (STATS
    attribute -> change)."""
    names = {f"#c{i}": attribute for i, attribute in enumerate(deltas)}
    values = {f":d{i}": {"N": str(delta)} for i, delta in enumerate(deltas.values())}
    return {
        "Update": {
            "TableName": table,
            "Key": {"pk": partition, "sk": {"S": STATS_SK}},
            "UpdateExpression": "ADD " + ", ".join(f"#c{i} :d{i}" for i in range(len(deltas))),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def tag_copy_actions(table: str, namespace: str, before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions taking a memory's tag copies and their counts from `before` (None: it has none yet)
    to `after`: a Put per tag it has, a Delete per tag it lost, and each tag's counts moved."""
    old = {} if before is None else dict.fromkeys(before.tags, totals_attribute(before.status, before.memory_type))
    new = dict.fromkeys(after.tags, totals_attribute(after.status, after.memory_type))
    actions: list[dict[str, Any]] = [
        {"Put": {"TableName": table, "Item": to_copy(namespace, tag, after)}} for tag in new
    ]
    lost = [tag for tag in old if tag not in new]
    actions += [
        {"Delete": {"TableName": table, "Key": {"pk": tag_partition(namespace, tag), "sk": memory_sort_key(after.id)}}}
        for tag in lost
    ]
    for tag in [*new, *lost]:
        deltas = {attribute: 0 for attribute in (old.get(tag), new.get(tag)) if attribute}
        if tag in old:
            deltas[old[tag]] -= 1
        if tag in new:
            deltas[new[tag]] += 1
        if moved := {attribute: delta for attribute, delta in deltas.items() if delta}:
            actions.append(totals_update(table, tag_partition(namespace, tag), moved))
    return actions


def idempotency_put(table: str, namespace: str, memory: Memory, idempotency: IdempotentCreate) -> dict[str, Any]:
    """The Put recording a create's idempotency key for IDEMPOTENCY_WINDOW_SECONDS, unless a live record has it."""
    now = epoch_seconds(parse_timestamp(memory.created_at))
    return {
        "TableName": table,
        "Item": {
            "pk": memory_partition(namespace),
            "sk": {"S": f"{IDEMPOTENCY_PREFIX}{idempotency.key_hash}"},
            "memory_id": {"N": str(memory.id)},
            "created_at": {"S": memory.created_at},
            "fingerprint": {"S": idempotency.fingerprint},
            # Also the table's TTL attribute: DynamoDB removes the record some time after it lapses.
            "expires_at": {"N": str(now + IDEMPOTENCY_WINDOW_SECONDS)},
        },
        # A lapsed record that TTL has not removed yet counts as absent.
        "ConditionExpression": f"{ABSENT} OR expires_at <= :now",
        "ExpressionAttributeValues": {":now": {"N": str(now)}},
    }
