"""DynamoDBGrantRepository: OAuth clients and grants (core.grants) in the memories' table.

Each client and each grant is its own small partition, read by key only:
- `pk = "OAUTH#CLIENT#<client_id>"`, `sk = "CLIENT"`: the registration metadata (JSON).
- `pk = "OAUTH#GRANT#<grant_id>"`, `sk = "GRANT"`: the consent (namespace, scopes, consenting key, resource) and the
  SHA-256 of its code, current refresh token and current access token.
- same pk, `sk = "SPENT#<sha256>"`: a refresh token a rotation replaced, kept to recognise its reuse.
- `pk = "OAUTH#REGISTRATIONS#<sha256 of the caller>"` and `pk = "OAUTH#REGISTRATIONS"` (everyone's), each with
  `sk = "WINDOW#<start>"`: how many clients were registered in that fixed window (`registrations`).
- `pk = "OAUTH#SECRET"`, `sk = "SECRET"`: the authorization server's secret (`secret`, 32 bytes), kept for good.
Every other one carries the table's TTL attribute `expires_at` (epoch seconds), so DynamoDB deletes what ended; the
core treats an item past its time as gone before TTL gets to it. None carries a GSI attribute: no index holds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import ConditionFailedError, TransactionCancelledError, call
from adapters.dynamodb.codec import ABSENT
from adapters.dynamodb.fence import transact_fenced
from adapters.dynamodb.table import Items
from core.access import Scope
from core.errors import WriteConflictError
from core.repository import Client, Grant, LiveKey, RegistrationBound, RegistrationWindow

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

CLIENT_PREFIX: Final = "OAUTH#CLIENT#"
GRANT_PREFIX: Final = "OAUTH#GRANT#"
REGISTRATIONS: Final = "OAUTH#REGISTRATIONS"
_SECRET_KEY: Final = {"pk": {"S": "OAUTH#SECRET"}, "sk": {"S": "SECRET"}}


def _client_key(client_id: str) -> dict[str, Any]:
    return {"pk": {"S": f"{CLIENT_PREFIX}{client_id}"}, "sk": {"S": "CLIENT"}}


def _grant_key(grant_id: str, sk: str = "GRANT") -> dict[str, Any]:
    return {"pk": {"S": f"{GRANT_PREFIX}{grant_id}"}, "sk": {"S": sk}}


def _scopes(scopes: tuple[Scope, ...]) -> dict[str, Any]:
    return {"L": [{"S": scope} for scope in scopes]}


def _to_grant_item(grant: Grant) -> dict[str, Any]:
    item: dict[str, Any] = {
        **_grant_key(grant.grant_id),
        "client_id": {"S": grant.client_id},
        "namespace": {"S": grant.namespace},
        "scopes": _scopes(grant.scopes),
        "key_id": {"S": grant.key_id},
        "resource": {"S": grant.resource},
        "redirect_uri": {"S": grant.redirect_uri},
        "code_challenge": {"S": grant.code_challenge},
        "code_hash": {"S": grant.code_hash},
        "code_expires_at": {"N": str(grant.code_expires_at)},
        "code_used": {"BOOL": grant.code_used},
        "expires_at": {"N": str(grant.expires_at)},
        "access_scopes": _scopes(grant.access_scopes),
        "access_expires_at": {"N": str(grant.access_expires_at)},
        "revoked": {"BOOL": grant.revoked},
    }
    if grant.refresh_hash is not None:
        item["refresh_hash"] = {"S": grant.refresh_hash}
    if grant.access_hash is not None:
        item["access_hash"] = {"S": grant.access_hash}
    return item


def _from_grant_item(item: Mapping[str, Any]) -> Grant:
    def scopes(name: str) -> tuple[Scope, ...]:
        return tuple(scope["S"] for scope in item[name]["L"])

    def text(name: str) -> str | None:
        value = item.get(name)
        return value["S"] if value else None

    return Grant(
        grant_id=item["pk"]["S"].removeprefix(GRANT_PREFIX),
        client_id=item["client_id"]["S"],
        namespace=item["namespace"]["S"],
        scopes=scopes("scopes"),
        key_id=item["key_id"]["S"],
        resource=item["resource"]["S"],
        redirect_uri=item["redirect_uri"]["S"],
        code_challenge=item["code_challenge"]["S"],
        code_hash=item["code_hash"]["S"],
        code_expires_at=int(item["code_expires_at"]["N"]),
        code_used=item["code_used"]["BOOL"],
        refresh_hash=text("refresh_hash"),
        expires_at=int(item["expires_at"]["N"]),
        access_hash=text("access_hash"),
        access_scopes=scopes("access_scopes"),
        access_expires_at=int(item["access_expires_at"]["N"]),
        revoked=item["revoked"]["BOOL"],
    )


class DynamoDBGrantRepository:
    """GrantRepository over the memories' table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)

    def add_client(self, client: Client, window: RegistrationWindow) -> RegistrationBound | None:
        # Plain conditional updates, not one transaction: the total's item is every registration's, and concurrent
        # transactions on one item cancel each other, where updates simply queue.
        counters: list[tuple[str, int, RegistrationBound]] = [
            (f"{REGISTRATIONS}#{window.caller}", window.per_caller, "caller"),
            (REGISTRATIONS, window.total, "total"),
        ]
        for pk, bound, name in counters:
            if not self._count(pk, window, bound):
                return name
        item = {
            **_client_key(client.client_id),
            "metadata": {"S": client.metadata},
            "expires_at": {"N": str(client.expires_at)},
        }
        self._items.put_new(item, f"client id {client.client_id}")
        return None

    def _count(self, pk: str, window: RegistrationWindow, bound: int) -> bool:
        """Add one to the window's count under `pk` unless it holds `bound` already; whether it did."""
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key={"pk": {"S": pk}, "sk": {"S": f"WINDOW#{window.starts_at}"}},
                UpdateExpression="ADD registrations :one SET expires_at = :ends",
                ConditionExpression="attribute_not_exists(registrations) OR registrations < :bound",
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":ends": {"N": str(window.ends_at)},
                    ":bound": {"N": str(bound)},
                },
            )
        except ConditionFailedError:
            return False
        return True

    def get_client(self, client_id: str) -> Client | None:
        item = self._items.get(_client_key(client_id))
        if item is None:
            return None
        return Client(client_id, item["metadata"]["S"], int(item["expires_at"]["N"]))

    def add_grant(self, grant: Grant, live_key: LiveKey) -> None:
        put = {"TableName": self._table, "Item": _to_grant_item(grant), "ConditionExpression": ABSENT}
        try:
            transact_fenced(self._items, self._table, [{"Put": put}], live_key)
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0):
                raise WriteConflictError(f"grant id {grant.grant_id} is already taken; retry") from None
            raise

    def get_grant(self, grant_id: str) -> Grant | None:
        item = self._items.get(_grant_key(grant_id))
        return _from_grant_item(item) if item is not None else None

    def issue(self, issued: Grant, expected_hash: str, spent: bool, client_expires_at: int | None) -> bool:
        held = "refresh_hash" if spent else "code_hash"
        condition = f"revoked = :false AND {held} = :held" + ("" if spent else " AND code_used = :false")
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": _to_grant_item(issued),
                    "ConditionExpression": condition,
                    "ExpressionAttributeValues": {":false": {"BOOL": False}, ":held": {"S": expected_hash}},
                }
            },
        ]
        if client_expires_at is not None:
            # The client lives as long as its newest grant: every issue moves its end to that grant's.
            update = {
                "TableName": self._table,
                "Key": _client_key(issued.client_id),
                "UpdateExpression": "SET expires_at = :until",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": {":until": {"N": str(client_expires_at)}},
            }
            actions.append({"Update": update})
        if spent:
            spent_item = {
                **_grant_key(issued.grant_id, f"SPENT#{expected_hash}"),
                "expires_at": {"N": str(issued.expires_at)},
            }
            actions.append({"Put": {"TableName": self._table, "Item": spent_item}})
        try:
            self._items.transact(actions)
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0) or (client_expires_at is not None and cancelled.failed(1)):
                return False
            raise
        return True

    def is_spent(self, grant_id: str, refresh_hash: str) -> bool:
        return self._items.get(_grant_key(grant_id, f"SPENT#{refresh_hash}")) is not None

    def revoke(self, grant_id: str) -> None:
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key=_grant_key(grant_id),
                UpdateExpression="SET revoked = :true",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":true": {"BOOL": True}},
            )
        except ConditionFailedError:
            return

    def secret(self, candidate: bytes) -> bytes:
        stored = self._items.get(_SECRET_KEY)
        if stored is None:
            try:
                self._items.put_new({**_SECRET_KEY, "secret": {"B": candidate}}, "the secret")
                return candidate
            except WriteConflictError:  # another instance stored one first: theirs it is
                stored = self._items.get(_SECRET_KEY)
        if stored is None:
            raise WriteConflictError("the secret was being stored; retry")
        return bytes(stored["secret"]["B"])
