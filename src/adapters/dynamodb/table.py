"""The table's items as every kind of item (records.py, revisions.py, ...) reads and writes them: consistent reads,
the all-or-nothing transaction, batch writes, and the pages of a Query or Scan."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.changekeys import sent
from adapters.dynamodb.client import ConditionFailedError, TransactionCancelledError, call
from core.errors import StorageUnavailableError, WriteConflictError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Transactions touching a namespace's STATS item at the same moment cancel each other; each retries this often.
TRANSACTION_ATTEMPTS: Final = 4
TRANSACTION_BACKOFF_SECONDS: Final = 0.02
# BatchWriteItem takes at most 25 requests; unprocessed ones are sent again, this many times at most.
BATCH_WRITE_ITEMS: Final = 25
BATCH_WRITE_ATTEMPTS: Final = 8
BATCH_BACKOFF_SECONDS: Final = 0.05
# BatchGetItem takes at most 100 keys; keys it did not read are asked for again after a short, growing pause, this
# many calls in all.
BATCH_GET_ITEMS: Final = 100
BATCH_GET_ATTEMPTS: Final = 8
UNPROCESSED_BACKOFF_SECONDS: Final = 0.02


class Items:
    """The items of one table: consistent reads, a put that never overwrites, the transaction, batch writes, and every
    page of a Query or Scan."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The item under `key` by a strongly consistent read; None when there is none."""
        item: dict[str, Any] | None = call(
            self._client.get_item, TableName=self._table, Key=key, ConsistentRead=True
        ).get("Item")
        return item

    def get_many(self, keys: list[dict[str, Any]], consistent: bool = False) -> list[dict[str, Any] | None]:
        """The items at `keys` (None where there is none), eventually consistent unless `consistent`: one GetItem for
        one key, else BatchGetItems of BATCH_GET_ITEMS keys, each asked again for what it leaves unprocessed."""
        if len(keys) == 1:
            response = call(self._client.get_item, TableName=self._table, Key=keys[0], ConsistentRead=consistent)
            return [response.get("Item")]
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(keys), BATCH_GET_ITEMS):
            wanted: dict[str, Any] = {
                self._table: {"Keys": keys[start : start + BATCH_GET_ITEMS], "ConsistentRead": consistent}
            }
            for attempt in range(BATCH_GET_ATTEMPTS):
                response = call(self._client.batch_get_item, RequestItems=wanted)
                found.update({(item["pk"]["S"], item["sk"]["S"]): item for item in response["Responses"][self._table]})
                wanted = response.get("UnprocessedKeys") or {}
                if not wanted:
                    break
                time.sleep(random.uniform(0, UNPROCESSED_BACKOFF_SECONDS * 2**attempt))  # noqa: S311
            else:
                raise StorageUnavailableError("storage kept leaving reads unprocessed; retry shortly")
        return [found.get((key["pk"]["S"], key["sk"]["S"])) for key in keys]

    def put_new(self, item: dict[str, Any], what: str) -> None:
        """Store `item` only where nothing is stored yet; WriteConflictError naming `what` otherwise."""
        try:
            call(
                self._client.put_item, TableName=self._table, Item=item, ConditionExpression="attribute_not_exists(pk)"
            )
        except ConditionFailedError:
            raise WriteConflictError(f"{what} is already taken; retry") from None

    def transact(self, actions: list[dict[str, Any]]) -> None:
        """One all-or-nothing write, retried (with jittered backoff) only while it collides with another one; each
        attempt times its changes again (changekeys.py)."""
        for attempt in range(TRANSACTION_ATTEMPTS):
            try:
                call(self._client.transact_write_items, TransactItems=sent(actions))
                return
            except TransactionCancelledError as cancelled:
                if not cancelled.only_collided or attempt == TRANSACTION_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, TRANSACTION_BACKOFF_SECONDS * 2**attempt))  # noqa: S311

    def batch_write(self, requests: list[dict[str, Any]]) -> None:
        """Puts and deletes, BATCH_WRITE_ITEMS per call, each sent again while DynamoDB leaves it unprocessed."""
        for start in range(0, len(requests), BATCH_WRITE_ITEMS):
            pending: dict[str, Any] = {self._table: requests[start : start + BATCH_WRITE_ITEMS]}
            for attempt in range(BATCH_WRITE_ATTEMPTS):
                pending = call(self._client.batch_write_item, RequestItems=pending).get("UnprocessedItems") or {}
                if not pending:
                    break
                time.sleep(random.uniform(0, BATCH_BACKOFF_SECONDS * 2**attempt))  # noqa: S311
            else:
                raise StorageUnavailableError("storage kept refusing a batch of writes; retry shortly")

    def pages(
        self, request: Mapping[str, Any], operation: Callable[..., Any] | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """The items of every page of a Query of this table (or of `operation`, a Scan), page by page."""
        paged = {"TableName": self._table, **request}
        while True:
            response = call(operation or self._client.query, **paged)
            yield response["Items"]
            if "LastEvaluatedKey" not in response:
                return
            paged["ExclusiveStartKey"] = response["LastEvaluatedKey"]
