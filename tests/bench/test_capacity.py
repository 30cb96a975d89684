"""The capacity model `make bench` reports: item sizes by DynamoDB's rules, unit rounding and index writes."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from adapters.dynamodb import make_client
from bench.capacity import (
    Recorder,
    TableShape,
    index_write_units,
    item_size,
    largest_entries,
    read_units,
    requested_at_submit,
    shadow_read_params,
    write_units,
)
from local.template import table_definition
from tests.conftest import REGION, Engine


@pytest.mark.parametrize(
    ("item", "size"),
    [
        ({"pk": {"S": "NS#a"}}, 2 + 4),
        ({"s": {"S": "é"}}, 1 + 2),
        ({"n": {"N": "123"}}, 1 + 2 + 1),
        ({"n": {"N": "1000"}}, 1 + 1 + 1),
        ({"n": {"N": "-0.0050"}}, 1 + 1 + 1),
        ({"b": {"BOOL": True}, "z": {"NULL": True}}, 2 + 2),
        ({"tags": {"L": [{"S": "ab"}, {"S": "c"}]}}, 4 + 3 + (2 + 1) + (1 + 1)),
        ({"l": {"L": []}}, 1 + 3),
        ({"m": {"M": {"k": {"S": "v"}}}}, 1 + 3 + (1 + 1 + 1)),
        ({"ss": {"SS": ["a", "bc"]}}, 2 + 3),
    ],
)
def test_item_size_follows_dynamodb_rules(item: dict[str, object], size: int) -> None:
    assert item_size(item) == size


def test_units_round_up_per_4kb_read_and_1kb_write_with_a_minimum_of_one() -> None:
    assert [read_units(size, consistent=True) for size in (0, 4096, 4097)] == [1, 1, 2]
    assert [read_units(size, consistent=False) for size in (0, 4097, 12289)] == [0.5, 1, 2]
    assert [write_units(size) for size in (0, 1024, 1025)] == [1, 1, 2]


SHAPE = TableShape.from_definition(
    {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "all",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "k", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": "keys",
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "j", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    }
)
BASE = {"pk": {"S": "p"}, "sk": {"S": "s"}}


def test_index_writes_follow_key_and_projection_changes() -> None:
    old = {**BASE, "k": {"S": "1"}, "j": {"S": "1"}, "x": {"S": "a"}}
    assert index_write_units(SHAPE, None, None) == 0
    assert index_write_units(SHAPE, None, old) == 2  # a put into each index
    assert index_write_units(SHAPE, old, None) == 2  # a delete from each
    assert index_write_units(SHAPE, old, old) == 0
    assert index_write_units(SHAPE, old, {**old, "x": {"S": "b"}}) == 1  # only ALL projects x
    assert index_write_units(SHAPE, old, {**old, "k": {"S": "2"}}) == 2  # key moved: delete + put
    assert index_write_units(SHAPE, {**BASE, "x": {"S": "a"}}, {**BASE, "x": {"S": "b"}}) == 0  # sparse: absent


def test_shadow_read_keeps_the_key_condition_and_drops_the_filter() -> None:
    params = {
        "TableName": "t",
        "IndexName": "all",
        "KeyConditionExpression": "pk = :pk",
        "FilterExpression": "#status <> :deleted",
        "ProjectionExpression": "id",
        "Select": "SPECIFIC_ATTRIBUTES",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":pk": {"S": "p"}, ":deleted": {"S": "deleted"}},
        "Limit": 5,
    }
    assert shadow_read_params(params) == {
        "TableName": "t",
        "IndexName": "all",
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "p"}},
        "Limit": 5,
    }


def test_calls_submitted_together_count_as_one_round_trip_however_late_their_threads_send_them(
    moto_engine: Engine,
) -> None:
    client = moto_engine.client
    table = moto_engine.new_table()
    recorder = Recorder(client, TableShape.from_definition(table_definition()))
    pool = ThreadPoolExecutor(max_workers=2)
    requested_at_submit(pool)
    key = {"pk": {"S": "NS#a"}, "sk": {"S": "MEM#1"}}

    submitted = threading.Event()

    def late_get(delay: float) -> None:
        # Both were submitted before either calls (on a loaded machine the first could otherwise return before the
        # second is even submitted, which would rightly count as a second round trip).
        submitted.wait(timeout=10)
        time.sleep(delay)  # a thread that reaches botocore only after the other call returned
        client.get_item(TableName=table, Key=key)

    with recorder.recording() as together:
        gets = pool.map(late_get, [0.0, 0.3])
        submitted.set()
        list(gets)
    with recorder.recording() as chained:
        client.get_item(TableName=table, Key=key)
        pool.submit(late_get, 0.0).result()

    assert together.sequential() == 1
    assert chained.sequential() == 2


# The table as deployed (template.yaml), and a memory's revision as a change writes it: with its change key, which puts
# it in the sparse KEYS_ONLY index `by_change` (adapters/dynamodb/changes.py), and a long content the entry leaves out.
DEPLOYED = TableShape.from_definition(table_definition())
PARTITION = {"S": "NS#a"}


def revision(n: int, logged: bool = True) -> dict[str, object]:
    item: dict[str, object] = {"pk": PARTITION, "sk": {"S": f"REV#{n:012d}#1"}, "content": {"S": "x" * 3000}}
    return {**item, "change_key": {"S": f"2026-12-06T10:00:{n:02d}.000000Z#REV#{n:012d}#1"}} if logged else item


def shadow() -> object:
    """An uncounted client of the mocked engine, which the recorder reads units with."""
    return make_client(None, REGION)


def change_entry(n: int) -> dict[str, object]:
    """Revision n's entry in `by_change`: the table's key and the index's, nothing else."""
    item = revision(n)
    return {name: item[name] for name in ("pk", "sk", "change_key")}


def test_a_change_writes_one_index_entry_of_a_write_unit_into_the_change_index_and_nothing_else_does() -> None:
    assert index_write_units(DEPLOYED, None, revision(1)) == 1  # a revision written by a change: its entry
    assert index_write_units(DEPLOYED, None, revision(1, logged=False)) == 0  # an imported one carries no change key
    marker = {"pk": PARTITION, "sk": {"S": "CHG#000000000001#gone"}, "change_key": {"S": "2026-12-06T10:00:00Z#CHG"}}
    assert index_write_units(DEPLOYED, None, marker) == 1
    assert index_write_units(DEPLOYED, revision(1), None) == 1  # a purge deletes it
    assert largest_entries(DEPLOYED, [revision(1), revision(12)]) == {"by_change": item_size(change_entry(12))}


def test_a_transaction_writing_a_logged_revision_costs_its_doubled_units_and_one_index_write(
    moto_engine: Engine,
) -> None:
    client = moto_engine.client
    table = moto_engine.new_table()
    recorder = Recorder(client, DEPLOYED)

    with recorder.recording(shadow()) as recorded:
        client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": revision(1)}}])

    assert recorded.wcu == 2 * write_units(item_size(revision(1))) + 1


def test_a_query_of_the_change_index_costs_its_keys_only_entries_and_pages_by_their_size(moto_engine: Engine) -> None:
    client = moto_engine.client
    table = moto_engine.new_table()
    for n in range(5):
        client.put_item(TableName=table, Item=revision(n))
    # Two of the table's largest items fill a 1 MB page here, as hundreds of the index's entries do.
    recorder = Recorder(client, DEPLOYED, page_items=2, indexes={"by_change": 500})

    with recorder.recording(shadow()) as recorded:
        response = client.query(
            TableName=table,
            IndexName="by_change",
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": PARTITION},
        )

    assert len(response["Items"]) == 5
    assert "LastEvaluatedKey" not in response
    entries = sum(item_size(change_entry(n)) for n in range(5))
    assert recorded.rcu == read_units(entries, consistent=False) == 0.5  # the 3 KB contents are not in the entries
    assert recorded.read_by_kind() == {"by_change": {"rcu": 0.5, "items": 5}}
