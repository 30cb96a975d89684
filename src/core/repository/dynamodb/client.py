"""The DynamoDB client of the process, and its failures in the domain's terms (the one place botocore is called)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionError, HTTPClientError
from botocore.loaders import Loader, create_loader

from core.budget import refuse_late_attempts
from core.errors import StorageUnavailableError, TableMissingError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

STAMP_CONCURRENCY: Final = 16
# Reads one listing runs at once: the segments of a search, or a page beside the namespace's totals.
READ_CONCURRENCY: Final = 32
# The most requests one process runs at once: `serve` runs each blocking call in a worker thread of anyio's default
# limiter (40 threads, shared by both doors); each may use the stamp and read pools besides. Lambda runs one at a time.
REQUEST_CONCURRENCY: Final = 40
# One pooled connection per thread that can call DynamoDB at once, so no call waits for, or discards, a connection.
POOL_CONNECTIONS: Final = REQUEST_CONCURRENCY + STAMP_CONCURRENCY + READ_CONCURRENCY

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

# One pool of each per process (threads start on first use), shared by every repository: both run I/O-bound calls.
# Separate pools, so a listing's reads never wait behind stamps, and a read never submits into its own pool.
STAMPERS: Final = ThreadPoolExecutor(max_workers=STAMP_CONCURRENCY, thread_name_prefix="stamp")
READERS: Final = ThreadPoolExecutor(max_workers=READ_CONCURRENCY, thread_name_prefix="read")


def make_client(
    endpoint_url: str | None, region: str, *, connect_timeout: float = 2, read_timeout: float = 5
) -> DynamoDBClient:
    """One low-level client per process, with bounded retries and timeouts well inside API Gateway's 30 s.

    Worst case: 3 attempts x (2 s connect + 5 s read) plus standard-mode backoff stays under 25 s. Inside a request's
    storage budget (core.budget) no attempt is sent that could outlast it, however many calls came before.
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
    session.register_component("data_loader", _DynamoDBModels.for_path(session.get_config_variable("data_path")))
    placeholder = "local" if endpoint_url is not None and session.get_credentials() is None else None
    client = session.create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        config=config,
        aws_access_key_id=placeholder,
        aws_secret_access_key=placeholder,
    )
    client.meta.events.register(
        "before-send.dynamodb", refuse_late_attempts(connect_timeout + read_timeout, _too_slow_for_the_request)
    )
    return cast("DynamoDBClient", client)


def _too_slow_for_the_request() -> StorageUnavailableError:
    return StorageUnavailableError("storage is answering too slowly for this request; retry shortly")


class _DynamoDBModels(Loader):
    """botocore's model loader (same search path), told that DynamoDB is the one service this session loads: before
    loading a model it would otherwise list every service's model directory, some 400, twice per client (about
    25 ms of a cold start)."""

    @classmethod
    @functools.cache
    def for_path(cls, data_path: str | None) -> _DynamoDBModels:
        """One loader per search path in the process: it keeps the models it parsed, so a second client (the CLI's,
        a test's) does not parse them again (built in 10 ms instead of 60)."""
        # The search path botocore's own loader would have (AWS_DATA_PATH first, then its own models).
        default = create_loader(data_path)
        return cls(extra_search_paths=default.search_paths, include_default_search_paths=False)

    def list_available_services(self, type_name: str) -> list[str]:
        return ["dynamodb"]


class ConditionFailedError(Exception):
    """A ConditionExpression did not hold; `old_item` is the stored item when ALL_OLD was asked for."""

    def __init__(self, old_item: Mapping[str, Any] | None) -> None:
        self.old_item = old_item
        super().__init__("condition failed")


class TransactionCancelledError(Exception):
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


def call(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one DynamoDB call, turning its failures into the domain's terms by error code."""
    try:
        return operation(**kwargs)
    except ClientError as exc:
        code = exc.response["Error"]["Code"]
        if code == "ConditionalCheckFailedException":
            raise ConditionFailedError(exc.response.get("Item")) from None  # type: ignore[arg-type]
        if code == "TransactionCanceledException":
            reasons = exc.response.get("CancellationReasons", [])
            raise TransactionCancelledError([reason.get("Code", "None") for reason in reasons]) from None
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
    if "RequestItems" in request:
        return str(next(iter(request["RequestItems"]), "?"))
    actions: Sequence[Mapping[str, Mapping[str, Any]]] = request.get("TransactItems") or [{}]
    action: Mapping[str, Any] = next(iter(actions[0].values()), {})
    return str(action.get("TableName", "?"))


def storage_refused(cancelled: TransactionCancelledError) -> StorageUnavailableError:
    """The domain's error for a transaction that wrote nothing for a reason no retry of the caller's can fix now
    (it kept colliding past TRANSACTION_ATTEMPTS, or was cancelled without a condition to blame)."""
    return StorageUnavailableError(f"storage kept refusing the write ({', '.join(cancelled.codes)}); retry shortly")
