"""The DynamoDB client of the process, and its failures in the domain's terms (the one place botocore is called)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionError, HTTPClientError, ReadTimeoutError
from botocore.loaders import Loader, create_loader

from core.budget import refuse_late_attempts
from core.errors import StorageUnavailableError, TableMissingError, WriteOutcomeUnknownError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from core.health import StorageHealth

STAMP_CONCURRENCY: Final = 16
# Reads one listing runs at once: the segments of a search, or a page beside the namespace's totals.
READ_CONCURRENCY: Final = 32
# The most requests one process runs at once: `serve` runs each blocking call in a worker thread of anyio's default
# limiter (40 threads, shared by both doors); each may use the stamp and read pools besides. Lambda runs one at a time.
REQUEST_CONCURRENCY: Final = 40
# One pooled connection per thread that can call DynamoDB at once, so no call waits for, or discards, a connection.
POOL_CONNECTIONS: Final = REQUEST_CONCURRENCY + STAMP_CONCURRENCY + READ_CONCURRENCY

# Codes that mean "briefly unavailable, retry later"; botocore has already retried them within its bound. Refused:
# storage turned the request away before acting on it. Failed: storage may have acted on it (a server error; or, for
# TransactionInProgress, a retry that met the attempt before it, same request token, still being applied).
_REFUSED_CODES: Final = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded", "LimitExceededException"}
)
_FAILED_CODES: Final = frozenset({"InternalServerError", "ServiceUnavailable", "TransactionInProgressException"})
_UNAVAILABLE_CODES: Final = _REFUSED_CODES | _FAILED_CODES
# The client's calls that write (by method name): a failure after one was sent leaves unknown whether it happened.
_WRITES: Final = frozenset(
    {
        "put_item",
        "update_item",
        "delete_item",
        "transact_write_items",
        "batch_write_item",
        "execute_statement",
        "batch_execute_statement",
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
    client.meta.events.register("needs-retry.dynamodb", _note_attempt)
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


class _Attempts:
    """The attempts botocore made of one call: why the first one sent and never confirmed may have been applied."""

    unconfirmed: str | None = None


_attempts: ContextVar[_Attempts | None] = ContextVar("dynamodb_attempts", default=None)


def _note_attempt(response: Any = None, caught_exception: Exception | None = None, **_: Any) -> None:
    """botocore's `needs-retry` hook, after every attempt (retried or not): note one that was sent and never
    confirmed, so that a call whose last attempt was merely throttled still says its write may have happened."""
    attempts = _attempts.get()
    if attempts is None or attempts.unconfirmed is not None:
        return
    if caught_exception is not None:
        attempts.unconfirmed = _lost(caught_exception)
    elif response is not None:
        http, parsed = response
        code = parsed.get("Error", {}).get("Code")
        if code in _FAILED_CODES or (http.status_code >= 500 and code not in _REFUSED_CODES):
            attempts.unconfirmed = str(code or f"HTTP {http.status_code}")


def _lost(exception: BaseException) -> str | None:
    """Why an attempt that ended in `exception` may have reached storage; None when it cannot have (no connection was
    made: botocore's ConnectionError, a connect timeout among them)."""
    if isinstance(exception, ReadTimeoutError):
        return "no answer in time"
    if isinstance(exception, HTTPClientError):
        return "the connection was lost"
    return None


def call(operation: Callable[..., Any], **kwargs: Any) -> Any:
    """Run one DynamoDB call, turning its failures into the domain's terms by error code and exception class: a write
    that any attempt sent without its outcome confirmed is WriteOutcomeUnknownError, any other failure to answer is
    StorageUnavailableError."""
    attempts = _Attempts()
    token = _attempts.set(attempts)
    try:
        return operation(**kwargs)
    except ClientError as exc:
        translated = _translated(exc, operation, kwargs, attempts.unconfirmed)
        if translated is exc:
            raise
        # A condition or a cancellation is this adapter's own answer, not a failure: no botocore trace behind it.
        raise translated from (exc if isinstance(translated, StorageUnavailableError) else None)
    except (ConnectionError, HTTPClientError) as exc:
        unconfirmed = attempts.unconfirmed or _lost(exc)
        raise _unavailable(operation, unconfirmed, "storage could not be reached; retry shortly") from exc
    except StorageUnavailableError as exc:
        # Refused before an attempt (the request's budget): perhaps after an earlier attempt left its write unknown.
        unknown = _unavailable(operation, attempts.unconfirmed, str(exc), exc.retry_after_seconds)
        if isinstance(unknown, WriteOutcomeUnknownError):
            raise unknown from exc
        raise
    finally:
        _attempts.reset(token)


def _translated(
    exc: ClientError, operation: Callable[..., Any], request: Mapping[str, Any], unconfirmed: str | None
) -> Exception:
    """The domain's (or this adapter's) error for a DynamoDB error answer; `exc` itself for any other code."""
    code = exc.response["Error"]["Code"]
    if code == "ConditionalCheckFailedException":
        return ConditionFailedError(exc.response.get("Item"))  # type: ignore[arg-type]  # the stubs omit the item DynamoDB returns
    if code == "TransactionCanceledException":
        reasons = exc.response.get("CancellationReasons", [])
        return TransactionCancelledError([reason.get("Code", "None") for reason in reasons])
    if code in _UNAVAILABLE_CODES:
        unconfirmed = unconfirmed or (code if code in _FAILED_CODES else None)
        return _unavailable(operation, unconfirmed, f"storage is busy ({code}); retry shortly")
    if code == "ResourceNotFoundException":  # this adapter names no other resource than its table
        return TableMissingError(_table_of(request))
    return exc


def _unavailable(
    operation: Callable[..., Any], unconfirmed: str | None, detail: str, retry_after_seconds: int = 1
) -> StorageUnavailableError:
    if unconfirmed is not None and getattr(operation, "__name__", "") in _WRITES:
        return WriteOutcomeUnknownError(unconfirmed, retry_after_seconds=retry_after_seconds)
    return StorageUnavailableError(detail, retry_after_seconds)


@contextmanager
def incidental() -> Iterator[None]:
    """Writes no caller asked for (an access stamp, an id drawn for a create): whether one happened is no caller's
    concern (a read stamps again, a create that drew an id stored nothing), so a failure after it was sent is plain
    unavailability."""
    try:
        yield
    except WriteOutcomeUnknownError as exc:
        raise StorageUnavailableError(f"storage failed ({exc.cause}); retry shortly", exc.retry_after_seconds) from exc


def report_health(client: DynamoDBClient, health: StorageHealth) -> None:
    """Tell `health` how every call of `client` ended, after botocore's retries: failed as `call` reports storage
    unavailable (throttled, failing, unreachable, no answer in time, the table missing), or answered. A call refused
    before any attempt (the request's budget) tells nothing of storage."""

    def answered(http_response: Any, parsed: Mapping[str, Any], **_: Any) -> None:
        code = parsed.get("Error", {}).get("Code")
        if code in _UNAVAILABLE_CODES or code == "ResourceNotFoundException" or http_response.status_code >= 500:
            health.failed(str(code or f"HTTP {http_response.status_code}"))
        else:
            health.succeeded()

    def unanswered(exception: BaseException, **_: Any) -> None:
        if isinstance(exception, HTTPClientError | ConnectionError):
            health.failed(_lost(exception) or "storage could not be reached")

    client.meta.events.register("after-call.dynamodb.*", answered)
    client.meta.events.register("after-call-error.dynamodb.*", unanswered)


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
