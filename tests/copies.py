"""What a DynamoDB table must hold for a namespace's tag and search copies (see codec.py): checked by scanning it."""

from __future__ import annotations

from typing import Any

from adapters.dynamodb import LISTED_ATTRIBUTES
from adapters.dynamodb.codec import SEARCH_PREFIX, STATS_SK, tag_partition
from adapters.dynamodb.counters import totals_attribute
from adapters.dynamodb.records import from_item
from adapters.dynamodb.searchcopies import from_search_copy
from tests.conftest import Engine

COMPARED = [name for name in (*LISTED_ATTRIBUTES, "folded") if name != "pk"]


def scan(engine: Engine, table: str) -> list[dict[str, Any]]:
    """Every item of the engine's `table`, read consistently."""
    assert engine.client is not None
    items: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        response = engine.client.scan(**request)
        items += response["Items"]
        if "LastEvaluatedKey" not in response:
            return items
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def assert_copies_mirror(engine: Engine, table: str, namespace: str) -> None:
    """Every memory of `namespace` has exactly one copy per tag, equal to it in every listed attribute and without
    its access stamp, and each tag's counts are its copies' statuses and types."""
    items = scan(engine, table)
    home, tags_prefix = f"NS#{namespace}", f"NS#{namespace}#TAG#"
    memories = {i["sk"]["S"]: i for i in items if i["pk"]["S"] == home and i["sk"]["S"].startswith("MEM#")}
    in_tags = [i for i in items if i["pk"]["S"].startswith(tags_prefix)]
    copies = {(i["pk"]["S"], i["sk"]["S"]): i for i in in_tags if i["sk"]["S"] != STATS_SK}
    stats = {i["pk"]["S"][len(tags_prefix) :]: i for i in in_tags if i["sk"]["S"] == STATS_SK}
    expected: dict[tuple[str, str], dict[str, Any]] = {}
    counts: dict[str, dict[str, int]] = {}
    for sort_key, item in memories.items():
        memory = from_item(item)
        for tag in memory.tags:
            expected[(tag_partition(namespace, tag)["S"], sort_key)] = item
            tally = counts.setdefault(tag, {})
            attribute = totals_attribute(memory.status, memory.memory_type)
            tally[attribute] = tally.get(attribute, 0) + 1
    assert copies.keys() == expected.keys()
    for key, copy in copies.items():
        assert {name: copy.get(name) for name in COMPARED} == {name: expected[key].get(name) for name in COMPARED}
        assert "accessed_key" not in copy
    for tag in stats.keys() | counts.keys():
        stored = {name: int(value["N"]) for name, value in stats.get(tag, {}).items() if name.startswith("n_")}
        assert {name: n for name, n in stored.items() if n} == counts.get(tag, {}), tag


def assert_search_copies_mirror(engine: Engine, table: str, namespace: str) -> None:
    """Every memory of `namespace` has exactly one search copy, holding it as a listing
    returns it (no access stamp); no copy outlives its memory."""
    items = scan(engine, table)
    home = f"NS#{namespace}"
    memories = {
        int(i["sk"]["S"][len("MEM#") :]): i for i in items if i["pk"]["S"] == home and i["sk"]["S"].startswith("MEM#")
    }
    copies = {
        int(i["sk"]["S"][len(SEARCH_PREFIX) :]): i
        for i in items
        if i["pk"]["S"] == home and i["sk"]["S"].startswith(SEARCH_PREFIX)
    }
    assert copies.keys() == memories.keys()
    for memory_id, item in memories.items():
        stored = from_item(item).model_copy(update={"last_accessed_at": None})
        assert from_search_copy(copies[memory_id]) == stored
