"""Tag copies: for each of its tags, a copy of the memory item in the tag's partition (codec.py has the layout), so the
created_at and updated_at indexes order a tag's memories too; changed in the same transaction as the memory, with the
tag's totals (counters.py)."""

from __future__ import annotations

from typing import Any

from adapters.dynamodb.codec import tag_partition
from adapters.dynamodb.counters import Moves, move
from adapters.dynamodb.records import memory_sort_key, to_item
from core.model import Memory

Item = dict[str, Any]


def to_copy(namespace: str, tag: str, memory: Memory) -> Item:
    """The copy of `memory` in its tag `tag`'s partition: the stored item, in that partition."""
    return {**to_item(namespace, memory), "pk": tag_partition(namespace, tag)}


def copy_actions(
    table: str, namespace: str, memory_id: int, before: Memory | None, after: Memory | None, moves: Moves
) -> list[Item]:
    """The actions taking a memory's tag copies from `before` (None: it has none yet) to `after` (None: it is
    removed): a Put per tag it has, a Delete per tag it lost; each tag's totals moved in `moves`."""
    old = [] if before is None else before.tags
    new = [] if after is None else after.tags
    actions: list[Item] = []
    if after is not None:
        actions += [{"Put": {"TableName": table, "Item": to_copy(namespace, tag, after)}} for tag in new]
    lost = [tag for tag in old if tag not in new]
    actions += [
        {"Delete": {"TableName": table, "Key": {"pk": tag_partition(namespace, tag), "sk": memory_sort_key(memory_id)}}}
        for tag in lost
    ]
    for tag in dict.fromkeys([*new, *lost]):
        move(moves, tag_partition(namespace, tag), before if tag in old else None, after if tag in new else None)
    return actions
