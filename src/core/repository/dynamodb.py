"""The DynamoDB adapter: the only module that talks to DynamoDB (through botocore, which boto3 is built on).

One table holds every namespace. Keys: `pk = "NS#<namespace>"`; in that partition a memory has
`sk = "MEM#<id:010d>"`, the id counter `sk = "COUNTER"`, the exact totals per status and type `sk = "STATS"`
(changed in the same transaction as every memory they count), and a create's idempotency record
`sk = "IDEM#<sha256 of the key>"` (with a TTL attribute, `expires_at`).

A memory item holds `content`, `tags` (one string, each tag framed by newlines, so `contains` finds a whole tag or a
substring of one), `folded` (the casefolded content, only when it differs), `memory_type`, `status`, `version`
and three sort values, `created_key`, `updated_key`, `accessed_key`: the fixed-width timestamp joined to the
zero-padded id, so DynamoDB's own order is total and ties fall by id. The timestamps and the id are read back from
those keys. Each timestamp sort has a GSI on `pk` and its sort value; the GSIs project what a listing returns but
not `accessed_key`, so an access stamp rewrites only the table item and the last-accessed index entry.

API keys share the table in one small partition, `pk = "KEYS"`, `sk = "KEY#<key_id>"`: listing them is a Query,
and no memory key (always `NS#...`) can collide with them. They carry no GSI attribute, so no index holds them.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionError, HTTPClientError

from core.access import ApiKey, Scope
from core.contract import RetrievalQuery
from core.errors import (
    MemoryNotFoundError,
    StorageUnavailableError,
    TableMissingError,
    VersionMismatchError,
    WriteConflictError,
)
from core.model import (
    ID_DIGITS,
    IDEMPOTENCY_WINDOW_SECONDS,
    MEMORY_TYPES,
    TIMESTAMP_FORMAT,
    IdempotentCreate,
    Memory,
    MemoryChanges,
    MemoryType,
    Status,
)
from core.repository import IdempotencyKeyTakenError, Matches, PriorCreate

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
TIMESTAMP_CHARS: Final = len(NEVER_ACCESSED)
MEMORY_PREFIX: Final = "MEM#"
IDEMPOTENCY_PREFIX: Final = "IDEM#"
COUNTER_SK: Final = "COUNTER"
STATS_SK: Final = "STATS"
_ABSENT: Final = "attribute_not_exists(pk)"
STAMP_CONCURRENCY: Final = 16
# Query's Limit must fit 32 bits; DynamoDB ends a page at 1 MB anyway, so a larger one would read no more per call.
QUERY_LIMIT_MAX: Final = 1000
# The most requests one process runs at once: `serve` runs each blocking call in a worker thread of anyio's default
# limiter (40 threads, shared by both doors); each may use the stamp pool besides. Lambda runs one at a time.
REQUEST_CONCURRENCY: Final = 40
# One pooled connection per thread that can call DynamoDB at once, so no call waits for, or discards, a connection.
POOL_CONNECTIONS: Final = REQUEST_CONCURRENCY + STAMP_CONCURRENCY

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


def make_client(
    endpoint_url: str | None, region: str, *, connect_timeout: float = 2, read_timeout: float = 5
) -> DynamoDBClient:
    """One low-level client per process, with bounded retries and timeouts well inside API Gateway's 30 s.

    Worst case: 3 attempts x (2 s connect + 5 s read) plus standard-mode backoff stays under 25 s.
    With an `endpoint_url` and no credentials configured anywhere, it signs with placeholders: local engines
    (DynamoDB Local, the embedded one) accept any, and botocore refuses to send a request unsigned.
    """
    config = Config(
        region_name=region,
        retries={"mode": "standard", "total_max_attempts": 3},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=POOL_CONNECTIONS,
    )
    # botocore's own session: boto3 would add only its resource layer and s3transfer, ~90 ms of cold import.
    session = botocore.session.get_session()
    placeholder = "local" if endpoint_url is not None and session.get_credentials() is None else None
    client = session.create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        config=config,
        aws_access_key_id=placeholder,
        aws_secret_access_key=placeholder,
    )
    return cast("DynamoDBClient", client)


def table_exists(client: DynamoDBClient, table_name: str) -> bool:
    try:
        _call(client.describe_table, TableName=table_name)
    except TableMissingError:
        return False
    return True


def ensure_table(client: DynamoDBClient, table_name: str, definition: Mapping[str, Any]) -> bool:
    """Create the table from the template's `Properties` when it does not exist; never alter an existing one.

    Returns True when the table did not exist before this call, so it is new and empty. Existence is read first:
    a create whose answer came later than the read timeout (a slow first call to a starting engine) is retried by
    botocore and refused as "in use" although that table is the one this call created.
    """
    if table_exists(client, table_name):
        return False
    wanted = ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode")
    kwargs = {key: definition[key] for key in wanted if key in definition}
    try:
        _call(client.create_table, TableName=table_name, **kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    return True


def _pk(namespace: str) -> dict[str, Any]:
    return {"S": f"NS#{namespace}"}


def _key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": _pk(namespace), "sk": {"S": f"{MEMORY_PREFIX}{memory_id:0{ID_DIGITS}d}"}}


def _sort_value(timestamp: str | None, memory_id: int) -> dict[str, Any]:
    return {"S": f"{timestamp or NEVER_ACCESSED}#{memory_id:0{ID_DIGITS}d}"}


def _timestamp(sort_value: str) -> str:
    return sort_value[:TIMESTAMP_CHARS]


def _tags_value(tags: Sequence[str]) -> str:
    # Framed by newlines (never in a tag), so `contains` finds a whole tag as "\n<tag>\n" and a substring of
    # one tag only, as long as the needle holds tag characters alone.
    return "\n" + "\n".join(tags) + "\n"


def _folded(content: str) -> str | None:
    """The casefolded content `q` searches, kept only when it differs from the content itself."""
    folded = content.casefold()
    return folded if folded != content else None


def _cell(status: str, memory_type: str) -> str:
    """The attribute of a namespace's STATS item counting the memories of one status and type."""
    return f"n_{status}_{memory_type}"


def _to_item(namespace: str, memory: Memory) -> dict[str, Any]:
    item: dict[str, Any] = {
        **_key(namespace, memory.id),
        "content": {"S": memory.content},
        "memory_type": {"S": memory.memory_type},
        "status": {"S": memory.status},
        "version": {"N": str(memory.version)},
        "created_key": _sort_value(memory.created_at, memory.id),
        "updated_key": _sort_value(memory.updated_at, memory.id),
        "accessed_key": _sort_value(memory.last_accessed_at, memory.id),
    }
    if memory.tags:
        item["tags"] = {"S": _tags_value(memory.tags)}
    if (folded := _folded(memory.content)) is not None:
        item["folded"] = {"S": folded}
    return item


def _from_item(item: Mapping[str, Any]) -> Memory:
    """A stored memory, or a listed one (whose `last_accessed_at` may be left out: see LISTED_ATTRIBUTES)."""
    accessed = item.get("accessed_key", {}).get("S", NEVER_ACCESSED)
    tags = item.get("tags")
    return Memory.model_construct(
        id=int(item["sk"]["S"][len(MEMORY_PREFIX) :]),
        content=item["content"]["S"],
        tags=tags["S"][1:-1].split("\n") if tags else [],
        created_at=_timestamp(item["created_key"]["S"]),
        updated_at=_timestamp(item["updated_key"]["S"]),
        last_accessed_at=None if accessed.startswith(NEVER_ACCESSED) else _timestamp(accessed),
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
    )


def _epoch_seconds(timestamp: str) -> int:
    return int(datetime.strptime(timestamp, TIMESTAMP_FORMAT).replace(tzinfo=UTC).timestamp())


class _ConditionFailedError(Exception):
    """A ConditionExpression did not hold; `old_item` is the stored item when ALL_OLD was asked for."""

    def __init__(self, old_item: Mapping[str, Any] | None) -> None:
        self.old_item = old_item
        super().__init__("condition failed")


class _TransactionCancelledError(Exception):
    """A TransactWriteItems wrote nothing; `codes` holds each action's reason, in the order of the actions."""

    def __init__(self, codes: Sequence[str]) -> None:
        self.codes = tuple(codes)
        super().__init__(f"transaction cancelled: {', '.join(self.codes)}")

    def failed(self, action: int) -> bool:
        return self._code(action) == "ConditionalCheckFailed"

    def collided(self, action: int) -> bool:
        return self._code(action) == "TransactionConflict"

    @property
    def only_collided(self) -> bool:
        """Cancelled only because another transaction held one of its items: worth retrying as it is."""
        return "TransactionConflict" in self.codes and set(self.codes) <= {"None", "TransactionConflict"}

    def _code(self, action: int) -> str:
        return self.codes[action] if action < len(self.codes) else "None"


def _call(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one DynamoDB call, turning its failures into the domain's terms by error code."""
    try:
        return operation(**kwargs)
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
        if code == "ConditionalCheckFailedException":
            raise _ConditionFailedError(exc.response.get("Item")) from None  # type: ignore[arg-type]
        if code == "TransactionCanceledException":
            reasons = exc.response.get("CancellationReasons", [])
            raise _TransactionCancelledError([reason.get("Code", "None") for reason in reasons]) from None
        if code in _UNAVAILABLE_CODES:
            raise StorageUnavailableError(f"storage is busy ({code}); retry shortly") from exc
        if code == "ResourceNotFoundException":  # this adapter names no other resource than its table
            raise TableMissingError(_table_of(kwargs)) from exc
        raise
    except (ConnectionError, HTTPClientError) as exc:
        raise StorageUnavailableError("storage could not be reached; retry shortly") from exc


def _table_of(request: Mapping[str, Any]) -> str:
    if "TableName" in request:
        return str(request["TableName"])
    actions: Sequence[Mapping[str, Mapping[str, Any]]] = request.get("TransactItems") or [{}]
    action: Mapping[str, Any] = next(iter(actions[0].values()), {})
    return str(action.get("TableName", "?"))


# One pool per process (threads start on first use), shared by every repository: stamps are I/O-bound calls.
_STAMPERS: Final = ThreadPoolExecutor(max_workers=STAMP_CONCURRENCY, thread_name_prefix="stamp")

_VISIBLE = "attribute_exists(pk) AND #status <> :deleted"
_DELETED: Final = {"S": "deleted"}
# A listing returns every row stamped, so it never reads `last_accessed_at`: the indexes leave it out and a stamp
# rewrites only the table item and the last_accessed_at index entry (template.yaml projects exactly these).
LISTED_ATTRIBUTES: Final = (
    "pk",
    "sk",
    "content",
    "tags",
    "memory_type",
    "status",
    "version",
    "created_key",
    "updated_key",
)
_TAG_CHARACTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.:")
# Transactions touching a namespace's STATS item at the same moment cancel each other; each retries this often.
TRANSACTION_ATTEMPTS: Final = 4
TRANSACTION_BACKOFF_SECONDS: Final = 0.02
# A PATCH that reads first re-reads and re-applies when a concurrent writer got in between; this bounds it.
UPDATE_ATTEMPTS: Final = 3


class DynamoDBMemoryRepository:
    """MemoryRepository over one DynamoDB table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def next_id(self, namespace: str) -> int:
        response = _call(
            self._client.update_item,
            TableName=self._table,
            Key={"pk": _pk(namespace), "sk": {"S": COUNTER_SK}},
            UpdateExpression="ADD next_id :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["next_id"]["N"])

    def add(self, namespace: str, memory: Memory, idempotency: IdempotentCreate | None = None) -> None:
        actions: list[dict[str, Any]] = [
            {"Put": {"TableName": self._table, "Item": _to_item(namespace, memory), "ConditionExpression": _ABSENT}},
            self._count(namespace, {_cell(memory.status, memory.memory_type): 1}),
        ]
        if idempotency is not None:
            actions.append({"Put": self._idempotency_put(namespace, memory, idempotency)})
        try:
            self._transact(actions)
        except _TransactionCancelledError as cancelled:
            if idempotency is not None and cancelled.failed(2):
                prior = self._prior_create(namespace, idempotency.key_hash)
                if prior is not None:
                    raise IdempotencyKeyTakenError(prior) from None
            if idempotency is not None and cancelled.collided(2):
                raise WriteConflictError(
                    f"a create with this {idempotency.field} is still in flight; retry it shortly"
                ) from None
            if cancelled.failed(0) or cancelled.failed(2):
                raise WriteConflictError(f"id {memory.id} collided with another write; retry the create") from None
            raise _busy(cancelled) from None

    def _idempotency_put(self, namespace: str, memory: Memory, idempotency: IdempotentCreate) -> dict[str, Any]:
        now = _epoch_seconds(memory.created_at)
        return {
            "TableName": self._table,
            "Item": {
                "pk": _pk(namespace),
                "sk": {"S": f"{IDEMPOTENCY_PREFIX}{idempotency.key_hash}"},
                "memory_id": {"N": str(memory.id)},
                "created_at": {"S": memory.created_at},
                "fingerprint": {"S": idempotency.fingerprint},
                # Also the table's TTL attribute: DynamoDB removes the record some time after it lapses.
                "expires_at": {"N": str(now + IDEMPOTENCY_WINDOW_SECONDS)},
            },
            # A lapsed record that TTL has not removed yet counts as absent.
            "ConditionExpression": f"{_ABSENT} OR expires_at <= :now",
            "ExpressionAttributeValues": {":now": {"N": str(now)}},
        }

    def _prior_create(self, namespace: str, key_hash: str) -> PriorCreate | None:
        response = _call(
            self._client.get_item,
            TableName=self._table,
            Key={"pk": _pk(namespace), "sk": {"S": f"{IDEMPOTENCY_PREFIX}{key_hash}"}},
            ConsistentRead=True,
        )
        item = response.get("Item")
        if not item:
            return None
        return PriorCreate(
            memory_id=int(item["memory_id"]["N"]),
            created_at=item["created_at"]["S"],
            fingerprint=item["fingerprint"]["S"],
        )

    def _count(self, namespace: str, deltas: Mapping[str, int]) -> dict[str, Any]:
        """The transaction action moving a namespace's totals by `deltas` (STATS attribute -> change)."""
        names = {f"#c{i}": cell for i, cell in enumerate(deltas)}
        values = {f":d{i}": {"N": str(delta)} for i, delta in enumerate(deltas.values())}
        return {
            "Update": {
                "TableName": self._table,
                "Key": {"pk": _pk(namespace), "sk": {"S": STATS_SK}},
                "UpdateExpression": "ADD " + ", ".join(f"#c{i} :d{i}" for i in range(len(deltas))),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": values,
            }
        }

    def _transact(self, actions: list[dict[str, Any]]) -> None:
        """One all-or-nothing write, retried (with jittered backoff) only while it collides with another one."""
        for attempt in range(TRANSACTION_ATTEMPTS):
            try:
                _call(self._client.transact_write_items, TransactItems=actions)
                return
            except _TransactionCancelledError as cancelled:
                if not cancelled.only_collided or attempt == TRANSACTION_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, TRANSACTION_BACKOFF_SECONDS * 2**attempt))  # noqa: S311

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        """The stored memory (deleted ones included) by a strongly consistent read, without stamping it; not part
        of the port: the PATCH and delete read with it, and tests and the bench look at stored memories with it."""
        response = _call(
            self._client.get_item, TableName=self._table, Key=_key(namespace, memory_id), ConsistentRead=True
        )
        item = response.get("Item")
        return _from_item(item) if item else None

    def read(self, namespace: str, memory_id: int, accessed_at: str) -> Memory:
        try:
            response = self._stamp_call(namespace, memory_id, accessed_at, visible_only=True, ReturnValues="ALL_NEW")
        except _ConditionFailedError as failed:
            # Missing, deleted, or already stamped later by a concurrent reader: the old item tells which.
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                raise MemoryNotFoundError(memory_id) from None
            return _from_item(old)
        return _from_item(response["Attributes"])

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
    ) -> Memory:
        given = changes.model_fields_set
        if (
            given
            and not {"status", "memory_type"} & given
            and (expected_versions is None or len(expected_versions) == 1)
        ):
            # Content and tags only, against at most one version: one conditional write, no read, no totals.
            expected = None if expected_versions is None else next(iter(expected_versions))
            return self._edit(namespace, memory_id, changes, expected, now)
        # It may move the memory between totals, or admits several versions: read it, then write conditionally.
        for _ in range(UPDATE_ATTEMPTS):
            current = self.get(namespace, memory_id)
            if current is None or current.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            if expected_versions is not None and current.version not in expected_versions:
                raise VersionMismatchError(memory_id, current.version)
            updated = changes.apply_to(current, now)
            if updated is current:
                return current
            stored = self._replace(namespace, updated, current)
            if stored is not None:
                return stored
        raise WriteConflictError(f"memory {memory_id} kept changing under this update; retry it")

    def _replace(self, namespace: str, memory: Memory, current: Memory) -> Memory | None:
        """Write `memory`'s editable fields, `updated_at` and `version` if the stored memory is still at
        `current.version` and not deleted, moving it between totals when its status or type changed; the stored
        result, or None when that condition failed."""
        write = _Write()
        write.content(memory.content)
        write.tags(memory.tags)
        write.set("memory_type = :type", type={"S": memory.memory_type})
        write.set("#status = :status", status={"S": memory.status})
        write.set("updated_key = :updated_key", updated_key=_sort_value(memory.updated_at, memory.id))
        write.set("version = :version", version={"N": str(memory.version)})
        write.values.update({":expected": {"N": str(current.version)}, ":deleted": _DELETED})
        update = {
            "TableName": self._table,
            "Key": _key(namespace, memory.id),
            "ConditionExpression": "version = :expected AND #status <> :deleted",
            **write.request(),
        }
        before, after = _cell(current.status, current.memory_type), _cell(memory.status, memory.memory_type)
        if before == after:
            try:
                response = _call(self._client.update_item, **update, ReturnValues="ALL_NEW")
            except _ConditionFailedError:
                return None
            return _from_item(response["Attributes"])
        try:
            self._transact([{"Update": update}, self._count(namespace, {before: -1, after: 1})])
        except _TransactionCancelledError as cancelled:
            if cancelled.failed(0):
                return None
            raise _busy(cancelled) from None
        # A transaction returns nothing: the record is what was written, with the stamp `current` was read with.
        return memory.model_copy(update={"last_accessed_at": current.last_accessed_at})

    def _edit(
        self, namespace: str, memory_id: int, changes: MemoryChanges, expected_version: int | None, updated_at: str
    ) -> Memory:
        """A PATCH of `content` and/or `tags` only, in one round trip: a new version when a field changes, the
        stored memory unchanged when none does."""
        write = _Write()
        # Only a change of some given field makes a new version; otherwise the condition fails and the stored
        # memory comes back unchanged, in the same round trip.
        differs = []
        if changes.content is not None:
            write.content(changes.content)
            differs.append("content <> :content")
        if changes.tags is not None:
            write.tags(changes.tags)
            differs += ["attribute_not_exists(tags)", "tags <> :tags"] if changes.tags else ["attribute_exists(tags)"]
        write.set("updated_key = :updated_key", updated_key=_sort_value(updated_at, memory_id))
        write.set("version = version + :one", one={"N": "1"})
        write.values[":deleted"] = _DELETED
        # DynamoDB refuses redundant parentheses, so a lone term goes bare.
        changed = differs[0] if len(differs) == 1 else f"({' OR '.join(differs)})"
        condition = f"{_VISIBLE} AND {changed}"
        if expected_version is not None:
            condition += " AND version = :expected"
            write.values[":expected"] = {"N": str(expected_version)}
        try:
            response = _call(
                self._client.update_item,
                TableName=self._table,
                Key=_key(namespace, memory_id),
                ConditionExpression=condition,
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **write.request(),
            )
        except _ConditionFailedError as failed:
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                raise MemoryNotFoundError(memory_id) from None
            current = _from_item(old)
            if expected_version is not None and current.version != expected_version:
                raise VersionMismatchError(memory_id, current.version) from None
            return current
        return _from_item(response["Attributes"])

    def delete(self, namespace: str, memory_id: int) -> None:
        # The totals move from the memory's status to `deleted`, so the delete reads which status that is first,
        # and writes only if the memory is still at that version and status.
        for _ in range(TRANSACTION_ATTEMPTS):
            current = self.get(namespace, memory_id)
            if current is None or current.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            delete = {
                "TableName": self._table,
                "Key": _key(namespace, memory_id),
                "UpdateExpression": "SET #status = :deleted",
                "ConditionExpression": "version = :version AND #status = :status",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {
                    ":deleted": _DELETED,
                    ":version": {"N": str(current.version)},
                    ":status": {"S": current.status},
                },
            }
            moved = {_cell(current.status, current.memory_type): -1, _cell("deleted", current.memory_type): 1}
            try:
                self._transact([{"Update": delete}, self._count(namespace, moved)])
            except _TransactionCancelledError as cancelled:
                if cancelled.failed(0):
                    continue  # changed since the read: read it again
                raise _busy(cancelled) from None
            return
        raise WriteConflictError(f"memory {memory_id} kept changing under this delete; retry it")

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        request = self._listing(namespace, query)
        wanted = query.offset + query.limit
        if query.q is None and query.tag is None:
            # The exact total comes from the namespace's counts. A first page reads it while the page is read; a
            # later one reads it first, so a page past the end reads no row and no page reads past the end.
            if query.offset == 0:
                total = _STAMPERS.submit(self._total, namespace, query.status, query.memory_type)
                rows = self._first_matches(request, wanted)
                count = total.result()
            else:
                count = self._total(namespace, query.status, query.memory_type)
                if query.offset >= count:
                    return Matches(items=[], total=count)
                rows = self._first_matches(request, min(wanted, count))
        else:
            rows, count = self._all_matches(request, wanted)
        return Matches(items=[_from_item(row) for row in rows[query.offset : wanted]], total=count)

    def _listing(self, namespace: str, query: RetrievalQuery) -> dict[str, Any]:
        """The Query for `query`'s order, with every filter evaluated by DynamoDB, exactly as query.matches does."""
        values: dict[str, Any] = {":pk": _pk(namespace)}
        if query.status is None:
            filters = ["#status <> :deleted"]
            values[":deleted"] = _DELETED
        else:
            filters = ["#status = :status"]
            values[":status"] = {"S": query.status}
        if query.memory_type is not None:
            filters.append("memory_type = :type")
            values[":type"] = {"S": query.memory_type}
        if query.tag is not None:
            filters.append("contains(tags, :tag)")
            values[":tag"] = {"S": _tags_value([query.tag])}
        if query.q is not None:
            needle = query.q.casefold()
            found_in = ["contains(folded, :q)", "(attribute_not_exists(folded) AND contains(content, :q))"]
            if set(needle) <= _TAG_CHARACTERS:  # any other character can be in no tag, and cannot span two
                found_in.append("contains(tags, :q)")
            filters.append(f"({' OR '.join(found_in)})")
            values[":q"] = {"S": needle}
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": " AND ".join(filters),
            "ProjectionExpression": ", ".join(f"#{name}" if name == "status" else name for name in LISTED_ATTRIBUTES),
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": values,
        }
        if query.sort == "id":
            request["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :memory)"
            values[":memory"] = {"S": MEMORY_PREFIX}
        else:
            request["IndexName"] = INDEXES[query.sort][0]
            request["KeyConditionExpression"] = "pk = :pk"
            request["ScanIndexForward"] = False
        return request

    def _first_matches(self, request: dict[str, Any], wanted: int) -> list[dict[str, Any]]:
        """The first `wanted` matches, reading hardly more items than that many matches need."""
        rows: list[dict[str, Any]] = []
        while len(rows) < wanted:
            # Limit counts items read before the filter; a little slack for filtered-out rows (deleted ones, say)
            # saves a second round trip, each of which costs at least half a read unit.
            missing = wanted - len(rows)
            limit = min(missing + missing // 4 + 2, QUERY_LIMIT_MAX)
            response = _call(self._client.query, **request, Limit=limit)
            rows.extend(response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return rows[:wanted]

    def _all_matches(self, request: dict[str, Any], wanted: int) -> tuple[list[dict[str, Any]], int]:
        """The first `wanted` matches and the number of all of them: whole pages until the window is full, then
        counts only (DynamoDB filters and counts; nothing beyond the window is sent back or parsed)."""
        rows: list[dict[str, Any]] = []
        total = 0
        while True:
            response = _call(self._client.query, **request)
            total += response["Count"]
            rows.extend(response.get("Items", [])[: max(0, wanted - len(rows))])
            if "LastEvaluatedKey" not in response:
                return rows, total
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
            if len(rows) >= wanted and "Select" not in request:
                del request["ProjectionExpression"]
                request["Select"] = "COUNT"

    def _total(self, namespace: str, status: Status | None, memory_type: MemoryType | None) -> int:
        response = _call(
            self._client.get_item,
            TableName=self._table,
            Key={"pk": _pk(namespace), "sk": {"S": STATS_SK}},
            # As consistent as the index pages it is read with (GSI reads are eventually consistent).
            ConsistentRead=False,
        )
        counts = response.get("Item", {})
        statuses = [status] if status else ["active", "invalid"]
        types = [memory_type] if memory_type else MEMORY_TYPES
        return sum(int(counts[cell]["N"]) for s in statuses for t in types if (cell := _cell(s, t)) in counts)

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        # list() waits for every stamp and re-raises the first failure.
        list(_STAMPERS.map(lambda mid: self._stamp_one(namespace, mid, accessed_at), memory_ids))

    def _stamp_one(self, namespace: str, memory_id: int, accessed_at: str) -> None:
        # A failed condition means already stamped later by another reader (or never stored): nothing to do.
        with contextlib.suppress(_ConditionFailedError):
            self._stamp_call(namespace, memory_id, accessed_at, visible_only=False)

    def _stamp_call(self, namespace: str, memory_id: int, accessed_at: str, *, visible_only: bool, **extra: Any) -> Any:
        # The sort value starts with the timestamp and ends with this memory's id, so it compares as the stamp.
        condition = "attribute_exists(pk) AND accessed_key < :stamp"
        names: dict[str, str] = {}
        values: dict[str, Any] = {":stamp": _sort_value(accessed_at, memory_id)}
        if visible_only:
            condition += " AND #status <> :deleted"
            names["#status"] = "status"
            values[":deleted"] = _DELETED
        return _call(
            self._client.update_item,
            TableName=self._table,
            Key=_key(namespace, memory_id),
            UpdateExpression="SET accessed_key = :stamp",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            **({"ExpressionAttributeNames": names} if names else {}),
            **extra,
        )


@dataclass
class _Write:
    """An UpdateItem's SET and REMOVE clauses and their values, built up clause by clause."""

    sets: list[str] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)

    def set(self, clause: str, **values: Any) -> None:
        self.sets.append(clause)
        self.values.update({f":{name}": value for name, value in values.items()})

    def content(self, content: str) -> None:
        self.set("content = :content", content={"S": content})
        if (folded := _folded(content)) is None:
            self.removes.append("folded")
        else:
            self.set("folded = :folded", folded={"S": folded})

    def tags(self, tags: Sequence[str]) -> None:
        if tags:
            self.set("tags = :tags", tags={"S": _tags_value(tags)})
        else:
            self.removes.append("tags")

    def request(self) -> dict[str, Any]:
        expression = "SET " + ", ".join(self.sets) + (" REMOVE " + ", ".join(self.removes) if self.removes else "")
        return {
            "UpdateExpression": expression,
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": self.values,
        }


def _busy(cancelled: _TransactionCancelledError) -> StorageUnavailableError:
    return StorageUnavailableError(f"storage kept refusing the write ({', '.join(cancelled.codes)}); retry shortly")


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
