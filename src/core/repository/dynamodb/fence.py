"""The fence a keyed memory write is made behind (core.repository.LiveKey): a ConditionCheck on the API key's item in
the write's own transaction, so the write lands only while that key is stored, unrevoked and unexpired. Erasing a
namespace deletes its keys first; from then on no write of it can land, whatever a door's cache believes."""

from __future__ import annotations

from typing import Any, Final

from core.errors import AuthenticationError
from core.repository import KEY_NOT_LIVE, LiveKey
from core.repository.dynamodb.client import TransactionCancelledError
from core.repository.dynamodb.keys import api_key_key
from core.repository.dynamodb.stored import Items

# The key's expires_at is a contract timestamp: fixed-width, so string order is time order.
_LIVE: Final = "attribute_exists(pk) AND revoked = :false AND (attribute_not_exists(expires_at) OR expires_at > :now)"


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
