"""Creating the table from the template's definition, for local engines and tooling (never altering one)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from adapters.dynamodb.client import call
from core.errors import TableMissingError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Seconds an index being added may take to become active before the caller goes on (a local table: a moment).
INDEX_WAIT_ATTEMPTS = 120


def table_exists(client: DynamoDBClient, table_name: str) -> bool:
    try:
        call(client.describe_table, TableName=table_name)
    except TableMissingError:
        return False
    return True


def ensure_table(client: DynamoDBClient, table_name: str, definition: Mapping[str, Any]) -> bool:
    """Create the table from the template's `Properties` when it does not exist; an existing one only gains the
    indexes the definition has and it lacks (as a stack update would add them), nothing else changes.

    Returns True when the table did not exist before this call, so it is new and empty. Existence is read first:
    a create whose answer came later than the read timeout (a slow first call to a starting engine) is retried by
    botocore and refused as "in use" although that table is the one this call created.
    """
    if table_exists(client, table_name):
        add_missing_indexes(client, table_name, definition)
        return False
    wanted = ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode")
    kwargs = {key: definition[key] for key in wanted if key in definition}
    try:
        call(client.create_table, TableName=table_name, **kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    return True


def add_missing_indexes(client: DynamoDBClient, table_name: str, definition: Mapping[str, Any]) -> list[str]:
    """Create each global secondary index of `definition` the table lacks, one at a time (DynamoDB builds one per
    update), waiting until it is active; the names of those created."""
    table = call(client.describe_table, TableName=table_name)["Table"]
    existing = {index["IndexName"] for index in table.get("GlobalSecondaryIndexes", [])}
    created = []
    for index in definition.get("GlobalSecondaryIndexes", []):
        if index["IndexName"] in existing:
            continue
        keys = {key["AttributeName"] for key in index["KeySchema"]}
        attributes = [a for a in definition["AttributeDefinitions"] if a["AttributeName"] in keys]
        call(
            client.update_table,
            TableName=table_name,
            AttributeDefinitions=attributes,
            GlobalSecondaryIndexUpdates=[
                {"Create": {key: index[key] for key in ("IndexName", "KeySchema", "Projection")}}
            ],
        )
        for _ in range(INDEX_WAIT_ATTEMPTS):
            described = call(client.describe_table, TableName=table_name)["Table"]
            statuses = {i["IndexName"]: i["IndexStatus"] for i in described.get("GlobalSecondaryIndexes", [])}
            if statuses.get(index["IndexName"]) == "ACTIVE":
                break
            time.sleep(1)
        created.append(index["IndexName"])
    return created
