"""The DynamoDB adapter: the only module that talks to boto3.

One table holds every namespace. Keys: `pk = "NS#<namespace>"`; a memory has `sk = "MEM#<id:010d>"`, the
namespace's id counter `sk = "COUNTER"`. Each timestamp sort has a GSI on `pk` whose sort attribute joins the
fixed-width timestamp and the zero-padded id, so DynamoDB's own order is total and ties fall by id.

API keys share the table in one small partition, `pk = "KEYS"`, `sk = "KEY#<key_id>"`: listing them is a Query,
and no memory key (always `NS#...`) can collide with them. They carry no GSI attribute, so no index holds them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

from core.access import ApiKey, Scope
from core.contract import SortKey
from core.errors import StorageUnavailableError, WriteConflictError
from core.model import ID_DIGITS, Memory, MemoryType, Status

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Index name and sort attribute per timestamp sort; `id` sorts on the table's own key.
INDEXES: Final[Mapping[str, tuple[str, str]]] = {
    "created_at": ("by_created_at", "created_key"),
    "updated_at": ("by_updated_at", "updated_key"),
    "last_accessed_at": ("by_last_accessed_at", "accessed_key"),
}
# Below every real timestamp, so never-accessed memories sort after accessed ones (descending) and stay indexed.
NEVER_ACCESSED: Final = "0000-00-00T00:00:00.000000Z"
STAMP_CONCURRENCY: Final = 16

# Codes that mean "briefly unavailable, retry later"; botocore has already retried them within its bound.
_UNAVAILABLE_CODES: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
        "TransactionInProgressException",
    }
)


def make_client(endpoint_url: str | None, region: str) -> DynamoDBClient:
    """One low-level client per process, with bounded retries and timeouts well inside API Gateway's 30 s.

    Worst case: 3 attempts x (2 s connect + 5 s read) plus standard-mode backoff stays under 25 s.
    """
    config = Config(
        region_name=region,
        retries={"mode": "standard", "total_max_attempts": 3},
        connect_timeout=2,
        read_timeout=5,
        max_pool_connections=STAMP_CONCURRENCY,
    )
    return boto3.client("dynamodb", endpoint_url=endpoint_url, config=config)


def table_exists(client: DynamoDBClient, table_name: str) -> bool:
    try:
        _call(client.describe_table, TableName=table_name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceNotFoundException":
            return False
        raise
    return True


def ensure_table(client: DynamoDBClient, table_name: str, definition: Mapping[str, Any]) -> bool:
    """Create the table from the template's `Properties` when it does not exist; never alter an existing one.

    Returns True when it created the table.
    """
    wanted = ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode")
    kwargs = {key: definition[key] for key in wanted if key in definition}
    try:
        client.create_table(TableName=table_name, **kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceInUseException":
            return False
        raise
    client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    return True


def _pk(namespace: str) -> dict[str, Any]:
    return {"S": f"NS#{namespace}"}


def _key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": _pk(namespace), "sk": {"S": f"MEM#{memory_id:0{ID_DIGITS}d}"}}


def _sort_value(timestamp: str | None, memory_id: int) -> dict[str, Any]:
    return {"S": f"{timestamp or NEVER_ACCESSED}#{memory_id:0{ID_DIGITS}d}"}


def _to_item(namespace: str, memory: Memory) -> dict[str, Any]:
    item: dict[str, Any] = {
        **_key(namespace, memory.id),
        "id": {"N": str(memory.id)},
        "content": {"S": memory.content},
        "tags": {"L": [{"S": tag} for tag in memory.tags]},
        "created_at": {"S": memory.created_at},
        "updated_at": {"S": memory.updated_at},
        "memory_type": {"S": memory.memory_type},
        "status": {"S": memory.status},
        "version": {"N": str(memory.version)},
        "created_key": _sort_value(memory.created_at, memory.id),
        "updated_key": _sort_value(memory.updated_at, memory.id),
        "accessed_key": _sort_value(memory.last_accessed_at, memory.id),
    }
    if memory.last_accessed_at is not None:
        item["last_accessed_at"] = {"S": memory.last_accessed_at}
    return item


def _from_item(item: Mapping[str, Any]) -> Memory:
    accessed = item.get("last_accessed_at")
    return Memory.model_construct(
        id=int(item["id"]["N"]),
        content=item["content"]["S"],
        tags=[tag["S"] for tag in item["tags"]["L"]],
        created_at=item["created_at"]["S"],
        updated_at=item["updated_at"]["S"],
        last_accessed_at=accessed["S"] if accessed else None,
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
    )


class _ConditionFailedError(Exception):
    """A ConditionExpression did not hold; `old_item` is the stored item when ALL_OLD was asked for."""

    def __init__(self, old_item: Mapping[str, Any] | None) -> None:
        self.old_item = old_item
        super().__init__("condition failed")


def _call(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one DynamoDB call, turning its failures into the domain's terms by error code."""
    try:
        return operation(**kwargs)
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
        if code == "ConditionalCheckFailedException":
            raise _ConditionFailedError(exc.response.get("Item")) from None  # type: ignore[arg-type]
        if code in _UNAVAILABLE_CODES:
            raise StorageUnavailableError(f"storage is busy ({code}); retry shortly") from exc
        raise
    except (ConnectionError, HTTPClientError) as exc:
        raise StorageUnavailableError("storage could not be reached; retry shortly") from exc


# One pool per process (threads start on first use), shared by every repository: stamps are I/O-bound calls.
_STAMPERS: Final = ThreadPoolExecutor(max_workers=STAMP_CONCURRENCY, thread_name_prefix="stamp")

_VISIBLE = "attribute_exists(pk) AND #status <> :deleted"


class DynamoDBMemoryRepository:
    """MemoryRepository over one DynamoDB table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def next_id(self, namespace: str) -> int:
        response = _call(
            self._client.update_item,
            TableName=self._table,
            Key={"pk": _pk(namespace), "sk": {"S": "COUNTER"}},
            UpdateExpression="ADD next_id :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["next_id"]["N"])

    def add(self, namespace: str, memory: Memory) -> None:
        try:
            _call(
                self._client.put_item,
                TableName=self._table,
                Item=_to_item(namespace, memory),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except _ConditionFailedError:
            raise WriteConflictError(f"id {memory.id} is already taken; retry the create") from None

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        response = _call(
            self._client.get_item, TableName=self._table, Key=_key(namespace, memory_id), ConsistentRead=True
        )
        item = response.get("Item")
        return _from_item(item) if item else None

    def get_and_stamp(self, namespace: str, memory_id: int, accessed_at: str) -> Memory | None:
        try:
            response = self._stamp_call(namespace, memory_id, accessed_at, visible_only=True, ReturnValues="ALL_NEW")
        except _ConditionFailedError as failed:
            # Missing, deleted, or already stamped later by a concurrent reader: the old item tells which.
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                return None
            return _from_item(old)
        return _from_item(response["Attributes"])

    def update(self, namespace: str, memory: Memory, expected_version: int) -> Memory | None:
        try:
            response = _call(
                self._client.update_item,
                TableName=self._table,
                Key=_key(namespace, memory.id),
                UpdateExpression=(
                    "SET content = :content, tags = :tags, memory_type = :type, #status = :status, "
                    "updated_at = :updated, updated_key = :updated_key, version = :version"
                ),
                ConditionExpression="version = :expected AND #status <> :deleted",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={
                    ":content": {"S": memory.content},
                    ":tags": {"L": [{"S": tag} for tag in memory.tags]},
                    ":type": {"S": memory.memory_type},
                    ":status": {"S": memory.status},
                    ":updated": {"S": memory.updated_at},
                    ":updated_key": _sort_value(memory.updated_at, memory.id),
                    ":version": {"N": str(memory.version)},
                    ":expected": {"N": str(expected_version)},
                    ":deleted": {"S": "deleted"},
                },
                ReturnValues="ALL_NEW",
            )
        except _ConditionFailedError:
            return None
        return _from_item(response["Attributes"])

    def soft_delete(self, namespace: str, memory_id: int) -> bool:
        try:
            _call(
                self._client.update_item,
                TableName=self._table,
                Key=_key(namespace, memory_id),
                UpdateExpression="SET #status = :deleted",
                ConditionExpression=_VISIBLE,
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":deleted": {"S": "deleted"}},
            )
        except _ConditionFailedError:
            return False
        return True

    def scan(
        self, namespace: str, sort: SortKey, status: Status | None, memory_type: MemoryType | None
    ) -> Iterator[Memory]:
        values: dict[str, Any] = {":pk": _pk(namespace), ":status": {"S": status or "deleted"}}
        filters = ["#status = :status" if status else "#status <> :status"]
        if memory_type:
            filters.append("memory_type = :type")
            values[":type"] = {"S": memory_type}
        query: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": " AND ".join(filters),
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": values,
        }
        if sort == "id":
            query["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :mem)"
            values[":mem"] = {"S": "MEM#"}
        else:
            query["IndexName"] = INDEXES[sort][0]
            query["KeyConditionExpression"] = "pk = :pk"
            query["ScanIndexForward"] = False
        while True:
            response = _call(self._client.query, **query)
            yield from (_from_item(item) for item in response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return
            query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        # list() waits for every stamp and re-raises the first failure.
        list(_STAMPERS.map(lambda mid: self._stamp_one(namespace, mid, accessed_at), memory_ids))

    def _stamp_one(self, namespace: str, memory_id: int, accessed_at: str) -> None:
        # A failed condition means already stamped later by another reader (or never stored): nothing to do.
        with contextlib.suppress(_ConditionFailedError):
            self._stamp_call(namespace, memory_id, accessed_at, visible_only=False)

    def _stamp_call(self, namespace: str, memory_id: int, accessed_at: str, *, visible_only: bool, **extra: Any) -> Any:
        condition = "attribute_exists(pk) AND (attribute_not_exists(last_accessed_at) OR last_accessed_at < :at)"
        names: dict[str, str] = {}
        values: dict[str, Any] = {":at": {"S": accessed_at}, ":ak": _sort_value(accessed_at, memory_id)}
        if visible_only:
            condition += " AND #status <> :deleted"
            names["#status"] = "status"
            values[":deleted"] = {"S": "deleted"}
        return _call(
            self._client.update_item,
            TableName=self._table,
            Key=_key(namespace, memory_id),
            UpdateExpression="SET last_accessed_at = :at, accessed_key = :ak",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            **({"ExpressionAttributeNames": names} if names else {}),
            **extra,
        )


KEYS_PARTITION: Final = "KEYS"


def _api_key_key(key_id: str) -> dict[str, Any]:
    return {"pk": {"S": KEYS_PARTITION}, "sk": {"S": f"KEY#{key_id}"}}


def _to_key_item(key: ApiKey) -> dict[str, Any]:
    item: dict[str, Any] = {
        **_api_key_key(key.key_id),
        "key_id": {"S": key.key_id},
        "namespace": {"S": key.namespace},
        "scopes": {"L": [{"S": scope} for scope in key.scopes]},
        "created_at": {"S": key.created_at},
        "revoked": {"BOOL": key.revoked},
        "secret_hash": {"S": key.secret_hash},
    }
    if key.expires_at is not None:
        item["expires_at"] = {"S": key.expires_at}
    return item


def _from_key_item(item: Mapping[str, Any]) -> ApiKey:
    expires = item.get("expires_at")
    scopes: tuple[Scope, ...] = tuple(scope["S"] for scope in item["scopes"]["L"])
    return ApiKey(
        key_id=item["key_id"]["S"],
        namespace=item["namespace"]["S"],
        scopes=scopes,
        created_at=item["created_at"]["S"],
        expires_at=expires["S"] if expires else None,
        revoked=item["revoked"]["BOOL"],
        secret_hash=item["secret_hash"]["S"],
    )


class DynamoDBKeyRepository:
    """KeyRepository over the memories' table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def add(self, key: ApiKey) -> None:
        try:
            _call(
                self._client.put_item,
                TableName=self._table,
                Item=_to_key_item(key),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except _ConditionFailedError:
            raise WriteConflictError(f"key id {key.key_id} is already taken; retry") from None

    def get(self, key_id: str) -> ApiKey | None:
        response = _call(self._client.get_item, TableName=self._table, Key=_api_key_key(key_id), ConsistentRead=True)
        item = response.get("Item")
        return _from_key_item(item) if item else None

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :key)",
            "ExpressionAttributeValues": {":pk": {"S": KEYS_PARTITION}, ":key": {"S": "KEY#"}},
            "ConsistentRead": True,
        }
        if namespace is not None:
            query["FilterExpression"] = "#namespace = :namespace"
            query["ExpressionAttributeNames"] = {"#namespace": "namespace"}
            query["ExpressionAttributeValues"][":namespace"] = {"S": namespace}
        while True:
            response = _call(self._client.query, **query)
            yield from (_from_key_item(item) for item in response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return
            query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def revoke(self, key_id: str) -> ApiKey | None:
        try:
            response = _call(
                self._client.update_item,
                TableName=self._table,
                Key=_api_key_key(key_id),
                UpdateExpression="SET revoked = :revoked",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":revoked": {"BOOL": True}},
                ReturnValues="ALL_NEW",
            )
        except _ConditionFailedError:
            return None
        return _from_key_item(response["Attributes"])
