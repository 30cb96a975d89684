"""DynamoDBKeyRepository: the KeyRepository port over the memories' table, and how a key is stored there.

API keys share the table in one small partition, `pk = "KEYS"`, `sk = "KEY#<key_id>"`: listing them is a Query,
and no memory key (always `NS#...`) can collide with them. They carry no GSI attribute, so no index holds them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import ConditionFailedError, call
from adapters.dynamodb.table import Items
from core.access import ApiKey, Scope

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

KEYS_PARTITION: Final = "KEYS"


def api_key_key(key_id: str) -> dict[str, Any]:
    return {"pk": {"S": KEYS_PARTITION}, "sk": {"S": f"KEY#{key_id}"}}


def _to_key_item(key: ApiKey) -> dict[str, Any]:
    item: dict[str, Any] = {
        **api_key_key(key.key_id),
        "key_id": {"S": key.key_id},
        "namespace": {"S": key.namespace},
        "scopes": {"L": [{"S": scope} for scope in key.scopes]},
        "created_at": {"S": key.created_at},
        "revoked": {"BOOL": key.revoked},
        "secret_hash": {"S": key.secret_hash},
    }
    if key.expires_at is not None:
        item["expires_at"] = {"S": key.expires_at}
    if key.name is not None:
        item["name"] = {"S": key.name}
    if key.last_used_at is not None:
        item["last_used_at"] = {"S": key.last_used_at}
    return item


def _from_key_item(item: Mapping[str, Any]) -> ApiKey:
    expires, name, used = item.get("expires_at"), item.get("name"), item.get("last_used_at")
    scopes: tuple[Scope, ...] = tuple(scope["S"] for scope in item["scopes"]["L"])
    return ApiKey(
        key_id=item["key_id"]["S"],
        namespace=item["namespace"]["S"],
        scopes=scopes,
        created_at=item["created_at"]["S"],
        expires_at=expires["S"] if expires else None,
        revoked=item["revoked"]["BOOL"],
        secret_hash=item["secret_hash"]["S"],
        name=name["S"] if name else None,
        last_used_at=used["S"] if used else None,
    )


class DynamoDBKeyRepository:
    """KeyRepository over the memories' table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)

    def add(self, key: ApiKey) -> None:
        self._items.put_new(_to_key_item(key), f"key id {key.key_id}")

    def get(self, key_id: str) -> ApiKey | None:
        item = self._items.get(api_key_key(key_id))
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
            response = call(self._client.query, **query)
            yield from (_from_key_item(item) for item in response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                return
            query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def note_use(self, key_id: str, at: str, stale_before: str) -> None:
        # The condition makes it one write an hour however many processes see the key stale at once, and keeps an
        # unknown (or erased) key from coming back as a phantom item.
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key=api_key_key(key_id),
                UpdateExpression="SET last_used_at = :at",
                ConditionExpression="attribute_exists(pk) AND "
                "(attribute_not_exists(last_used_at) OR last_used_at < :stale_before)",
                ExpressionAttributeValues={":at": {"S": at}, ":stale_before": {"S": stale_before}},
            )
        except ConditionFailedError:
            return

    def revoke(self, key_id: str) -> ApiKey | None:
        try:
            response = call(
                self._client.update_item,
                TableName=self._table,
                Key=api_key_key(key_id),
                UpdateExpression="SET revoked = :revoked",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":revoked": {"BOOL": True}},
                ReturnValues="ALL_NEW",
            )
        except ConditionFailedError:
            return None
        return _from_key_item(response["Attributes"])
