"""Creating the table from the template's definition, for local engines and tooling (never altering one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from adapters.dynamodb.client import call
from core.errors import TableMissingError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def table_exists(client: DynamoDBClient, table_name: str) -> bool:
    try:
        call(client.describe_table, TableName=table_name)
    except TableMissingError:
        return False
    return True


def ensure_table(client: DynamoDBClient, table_name: str, definition: Mapping[str, Any]) -> bool:
    """Create the table from the template's `Properties`, with every index, when it does not exist; an existing
    one is left as it is.

    Returns True when the table did not exist before this call, so it is new and empty. Existence is read first:
    a create whose answer came later than the read timeout (a slow first call to a starting engine) is retried by
    botocore and refused as "in use" although that table is the one this call created.
    """
    if table_exists(client, table_name):
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
