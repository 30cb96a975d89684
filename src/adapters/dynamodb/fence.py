"""The fence a keyed memory write or read is made behind (core.repository.LiveKey). A write's is a ConditionCheck on the
API key's item in the write's own transaction, so the write lands only while that key is stored, unrevoked and
unexpired. A read's is a strongly consistent GetItem of that item after the data was read, judged by the same
condition. Erasing a namespace deletes its keys first; from then on no write of it can land and no read of it is
answered, whatever a door's cache believes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from adapters.dynamodb.client import TransactionCancelledError
from adapters.dynamodb.keys import api_key_key
from adapters.dynamodb.table import Items
from core.errors import AuthenticationError
from core.repository import KEY_NOT_LIVE, READ_KEY_NOT_LIVE, LiveKey

# The key's expires_at is a contract timestamp: fixed-width, so string order is time order. `_is_live` is the same
# condition judged on the item a read got: change both together.
_LIVE: Final = "attribute_exists(pk) AND revoked = :false AND (attribute_not_exists(expires_at) OR expires_at > :now)"


def _is_live(item: Mapping[str, Any] | None, now: str) -> bool:
    """`_LIVE` on the key's item as read (None: not stored)."""
    if not item or item.get("revoked") != {"BOOL": False}:
        return False
    expires_at = item.get("expires_at")
    return expires_at is None or str(expires_at["S"]) > now


def confirm_live(items: Items, live_key: LiveKey) -> None:
    """The read fence: AuthenticationError (READ_KEY_NOT_LIVE) unless `live_key` is live, by one strongly consistent
    GetItem of the key's item (a key item is far below 4 KB: one read unit)."""
    if not _is_live(items.get(api_key_key(live_key.key_id)), live_key.now):
        raise AuthenticationError(READ_KEY_NOT_LIVE)


def fence_check(table: str, live_key: LiveKey) -> dict[str, Any]:
    """The transaction action that holds only while `live_key` is live."""
    return {
        "ConditionCheck": {
            "TableName": table,
            "Key": api_key_key(live_key.key_id),
            "ConditionExpression": _LIVE,
            "ExpressionAttributeValues": {":false": {"BOOL": False}, ":now": {"S": live_key.now}},
        }
    }


def transact_fenced(items: Items, table: str, actions: list[dict[str, Any]], live_key: LiveKey | None) -> None:
    """`items.transact(actions)`, behind `live_key`'s fence when there is one: AuthenticationError (nothing written)
    when the key is not live; any other cancellation is raised as it is, its reasons in the order of `actions`."""
    if live_key is None:
        items.transact(actions)
        return
    try:
        items.transact([*actions, fence_check(table, live_key)])
    except TransactionCancelledError as cancelled:
        if cancelled.failed(len(actions)):
            raise AuthenticationError(KEY_NOT_LIVE) from None
        raise
