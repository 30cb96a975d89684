"""Counter items: a namespace's id counter (`sk = "COUNTER"`) and the exact totals per status and type of a
namespace's and each tag's memories (`sk = "STATS"`, codec.py has the layout), moved in the same transaction as the
memories they count."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, get_args

from adapters.dynamodb import changes
from adapters.dynamodb.client import ConditionFailedError, TransactionCancelledError, call, storage_refused
from adapters.dynamodb.codec import ABSENT, COUNTER_SK, INDEXED_IN, STATS_SK, memory_partition, tag_partition
from adapters.dynamodb.fence import transact_fenced
from adapters.dynamodb.table import TRANSACTION_ATTEMPTS, Items
from core.errors import WriteConflictError
from core.model import MEMORY_TYPES, Memory, Status
from core.repository import LiveKey

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]
# A partition's moved totals: the partition's key value (a namespace's or a tag's) -> STATS attribute -> change.
Moves = dict[str, dict[str, int]]


def totals_attribute(status: str, memory_type: str) -> str:
    """The attribute of a STATS item counting the memories of one status and type."""
    return f"n_{status}_{memory_type}"


# Every counter a STATS item can hold.
TOTALS_ATTRIBUTES: Final = tuple(
    totals_attribute(status, memory_type) for status in get_args(Status) for memory_type in MEMORY_TYPES
)


def move(moves: Moves, partition: Mapping[str, Any], before: Memory | None, after: Memory | None) -> None:
    """Add to `moves` the partition's totals moving from `before` (None: not counted there yet) to `after` (None: no
    longer counted there)."""
    deltas = moves.setdefault(partition["S"], {})
    for memory, delta in ((before, -1), (after, 1)):
        if memory is not None:
            attribute = totals_attribute(memory.status, memory.memory_type)
            deltas[attribute] = deltas.get(attribute, 0) + delta


def totals_actions(table: str, moves: Moves) -> list[Item]:
    """One Update per partition whose totals move (a transaction touches each item once, so the moves of every
    change of a commit come here together)."""
    actions: list[Item] = []
    for partition, deltas in moves.items():
        if moved := {attribute: delta for attribute, delta in deltas.items() if delta}:
            actions.append(totals_update(table, {"S": partition}, moved))
    return actions


def totals_update(table: str, partition: Mapping[str, Any], deltas: Mapping[str, int]) -> Item:
    """The transaction action moving a partition's totals by `deltas` (STATS attribute -> change)."""
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


def drop_unused_tag_totals(client: DynamoDBClient, table: str, namespace: str, tags: Iterable[str]) -> None:
    """Delete the totals of each of `tags` that no longer count any memory, so a tag no memory has leaves nothing
    behind. The condition keeps totals a concurrent create has just counted again. (A transaction cannot both move an
    item's counts and delete it, hence a write of its own after the purge's.)"""
    names = {f"#n{i}": attribute for i, attribute in enumerate(TOTALS_ATTRIBUTES)}
    unused = " AND ".join(f"(attribute_not_exists({name}) OR {name} = :zero)" for name in names)
    for tag in tags:
        try:
            call(
                client.delete_item,
                TableName=table,
                Key={"pk": tag_partition(namespace, tag), "sk": {"S": STATS_SK}},
                ConditionExpression=unused,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={":zero": {"N": "0"}},
            )
        except ConditionFailedError:
            continue  # the tag still counts a memory


def next_id(items: Items, client: DynamoDBClient, table: str, namespace: str, live_key: LiveKey | None) -> int:
    """A fresh id from the namespace's counter. Drawing from an existing counter never creates one (a plain ADD would:
    after an erase, a cached key's create would bring the erased namespace's counter back); only a fenced put starts a
    counter."""
    counter = {"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}}
    for _ in range(TRANSACTION_ATTEMPTS):
        try:
            response = call(
                client.update_item,
                TableName=table,
                Key=counter,
                UpdateExpression="ADD next_id :one",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":one": {"N": "1"}},
                ReturnValues="UPDATED_NEW",
            )
            return int(response["Attributes"]["next_id"]["N"])
        except ConditionFailedError:
            pass  # no counter: a new namespace, or an erased one
        started = {**counter, "next_id": {"N": "1"}, "born": changes.born()}
        first = {"TableName": table, "Item": started, "ConditionExpression": ABSENT}
        try:
            transact_fenced(items, table, [{"Put": first}], live_key)
            return 1
        except TransactionCancelledError as cancelled:
            if not cancelled.failed(0):
                raise storage_refused(cancelled) from None
            # Another create started the counter meanwhile: draw from it.
    raise WriteConflictError(f"the id counter of namespace {namespace} kept changing; retry the create")


def namespace_sizes(client: DynamoDBClient, table: str, index: str) -> Callable[[str], int]:
    """How many memories the vector index labelled `index` holds of a namespace, as recall's choice of path needs it
    (core.repository.vectors.VectorSearch.holds): its id counter, one eventually consistent GetItem (half a read
    unit). An upper bound: every id ever drawn counts, purged memories' too, which is all a threshold needs. 0 until
    the backfill has put the namespace's every digest in that index and said so on the counter (codec.INDEXED_IN,
    indexed.py): before, the index may lack memories written before it was on, and recall reads the namespace."""

    def size(namespace: str) -> int:
        key = {"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}}
        projection = {"ProjectionExpression": "next_id, #indexed", "ExpressionAttributeNames": {"#indexed": INDEXED_IN}}
        found = call(client.get_item, TableName=table, Key=key, **projection).get("Item", {})
        if found.get(INDEXED_IN, {}).get("S") != index:
            return 0
        return int(found.get("next_id", {}).get("N", "0"))

    return size
