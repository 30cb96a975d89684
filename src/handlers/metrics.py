"""What a deployed function reports about each request it serves: CloudWatch metrics in the embedded metric format
(EMF), one JSON line on stdout per invocation that CloudWatch Logs turns into metrics (no API call, no added
latency beyond writing the line), through Powertools Metrics.

Per request, with the dimensions `door` (http | mcp) and `operation` (a small fixed set, never an id or a raw path:
http_operation, mcp_operation): `Requests` (1), `Latency` (ms, in the handler), `ReadUnits` and `WriteUnits`
(DynamoDB's consumed capacity), `RowsReturned` (a listing's, history's or recall's page, a get's one row) and
`RowsStamped` (those of them whose `last_accessed_at` the request set: none for `Prefer: no-stamp` or a history page),
and `Status4xx` / `Status5xx` (1 or 0 for the HTTP status), plus `ToolErrors` on the MCP door (a tool call answered
with `isError`). Each is also published without `operation`, as the door's totals. Only the Lambda entrypoints emit;
`serve` does not.

What a door served is noted in the record of the request being measured (RequestMetrics.start), found through a
context variable: each request, of either door, has its own, so two in flight in one process (both doors in one
test process, or concurrent requests on one loop) never count each other's rows; rows noted outside a measured
request (`serve`) count nowhere.
"""

from __future__ import annotations

import base64
import json
import time
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Final, Protocol
from urllib.parse import parse_qs, urlsplit

from aws_lambda_powertools.metrics import Metrics, MetricUnit


class Consumed(Protocol):
    """Capacity units consumed (the DynamoDB adapter's usage.Consumed)."""

    @property
    def read_units(self) -> float: ...

    @property
    def write_units(self) -> float: ...


class CapacityTally(Protocol):
    """What the storage calls consumed since the last `take()` (the DynamoDB adapter's usage.CapacityTally, which the
    composition root passes in)."""

    def take(self) -> Consumed: ...


OTHER: Final = "other"
OAUTH: Final = "oauth"
# The MCP door's operations: its tools by name, and the protocol's own methods; anything else is OTHER (a client
# names methods and tools: a metric dimension must stay a small fixed set).
MCP_TOOLS: Final = frozenset(
    {
        "prime_memory_context",
        "search_memories",
        "recall_memories",
        "create_memory",
        "get_memory",
        "update_memory",
        "delete_memory",
    }
)
MCP_METHODS: Final = frozenset({"initialize", "notifications/initialized", "tools/list", "ping"})
# The HTTP door's routes by their first path segment, beside /memories (handlers.http) and /healthz.
_HTTP_SYSTEM: Final = {
    ("GET", "key"): "key",
    ("GET", "openapi.json"): "openapi",
    ("GET", "recall"): "recall",
    ("GET", "changes"): "changes",
}
_CONSOLE: Final = "console"  # handlers.console.CONSOLE_PATH, every page and asset under it


@dataclass
class Served:
    """What the door noted about the request being served."""

    rows: int = 0
    stamped: int = 0


@dataclass
class Measuring:
    """A request being measured: when it started, and what its door noted."""

    started: float
    served: Served = field(default_factory=Served)
    token: Token[Served | None] | None = None


# The record of the request being measured in this context (None: none is, as in `serve`).
_REQUEST: ContextVar[Served | None] = ContextVar("served", default=None)


def rows_served(rows: int, *, stamped: bool) -> None:
    """The rows the request being served returned, and whether it stamped them (called by the doors)."""
    served = _REQUEST.get()
    if served is not None:
        served.rows = rows
        served.stamped = rows if stamped else 0


def request_line(event: object) -> tuple[str, str]:
    """The method and target (the path, and `?` and the query string when there is one) of a payload 2.0 event
    (empty strings for anything else)."""
    context = event.get("requestContext") if isinstance(event, dict) else None
    http = context.get("http") if isinstance(context, dict) else None
    if not isinstance(http, dict):
        return "", ""
    method, path = http.get("method"), http.get("path")
    query = event.get("rawQueryString") if isinstance(event, dict) else None
    target = path if isinstance(path, str) else ""
    if isinstance(query, str) and query:
        target = f"{target}?{query}"
    return (method if isinstance(method, str) else ""), target


def event_body(event: object) -> str | None:
    """A payload 2.0 event's (or a Lambda response's) body as text, or None when there is none or it is unreadable."""
    if not isinstance(event, dict):
        return None
    body = event.get("body")
    if not isinstance(body, str):
        return None
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True).decode()
        except ValueError:
            return None
    return body


def is_tool_error(response_body: str | None) -> bool:
    """Whether an MCP response is a tool call answered with `isError`."""
    if not response_body or '"isError"' not in response_body:
        return False
    try:
        message = json.loads(response_body)
    except ValueError:
        return False
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and result.get("isError") is True


def http_operation(method: str, target: str) -> str:
    """The HTTP door's operation for a request line (request_line): create, search, get, update, delete, purge,
    history, restore, changes, recall, key, openapi, console, health or other."""
    url = urlsplit(target)
    path = url.path
    parts = path.strip("/").split("/")
    if parts[0] == _CONSOLE:
        return _CONSOLE if method in ("GET", "HEAD") else OTHER
    if parts[0] != "memories":
        return "health" if path == "/healthz" else _HTTP_SYSTEM.get((method, path[1:]), OTHER)
    if len(parts) == 1:
        return {"POST": "create", "GET": "search"}.get(method, OTHER)
    if len(parts) == 3:
        return {("GET", "history"): "history", ("POST", "restore"): "restore"}.get((method, parts[2]), OTHER)
    if len(parts) > 3:
        return OTHER
    if method == "DELETE" and parse_qs(url.query).get("purge") == ["true"]:
        return "purge"
    return {"GET": "get", "PATCH": "update", "DELETE": "delete"}.get(method, OTHER)


def mcp_operation(body: str | None) -> str:
    """The MCP door's operation for a request body: the tool a tools/call names, or the protocol method (requests to
    the OAuth server beside it are OAUTH: handlers.aws.mcp tells them by path)."""
    try:
        message = json.loads(body or "")
    except ValueError:
        return OTHER
    if not isinstance(message, dict):
        return OTHER
    method = message.get("method")
    if method == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return name if name in MCP_TOOLS else "unknown_tool"
    return method if method in MCP_METHODS else OTHER


class RequestMetrics:
    """One door's metrics: `measure(...)` around each invocation emits one EMF line for it."""

    def __init__(self, door: str, tally: CapacityTally, namespace: str) -> None:
        self._door = door
        self._tally = tally
        self._metrics = Metrics(namespace=namespace)

    def start(self) -> Measuring:
        """Begin measuring a request in this context: what the door notes from now on in it is this request's."""
        self._tally.take()  # anything consumed before this request (at init) is not its
        measuring = Measuring(time.perf_counter())
        measuring.token = _REQUEST.set(measuring.served)
        return measuring

    def finish(self, measuring: Measuring, operation: str, status: int, *, tool_error: bool = False) -> None:
        latency_ms = (time.perf_counter() - measuring.started) * 1000
        consumed = self._tally.take()
        served = measuring.served
        if measuring.token is not None:
            _REQUEST.reset(measuring.token)  # what is noted after this request counts nowhere
            measuring.token = None
        metrics = self._metrics
        metrics.add_dimension(name="door", value=self._door)
        metrics.add_dimension(name="operation", value=operation)
        metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
        metrics.add_metric(name="Latency", unit=MetricUnit.Milliseconds, value=latency_ms)
        metrics.add_metric(name="ReadUnits", unit=MetricUnit.Count, value=consumed.read_units)
        metrics.add_metric(name="WriteUnits", unit=MetricUnit.Count, value=consumed.write_units)
        metrics.add_metric(name="RowsReturned", unit=MetricUnit.Count, value=served.rows)
        metrics.add_metric(name="RowsStamped", unit=MetricUnit.Count, value=served.stamped if status < 300 else 0)
        metrics.add_metric(name="Status4xx", unit=MetricUnit.Count, value=int(400 <= status < 500))
        metrics.add_metric(name="Status5xx", unit=MetricUnit.Count, value=int(status >= 500))
        if self._door == "mcp":
            metrics.add_metric(name="ToolErrors", unit=MetricUnit.Count, value=int(tool_error))
        blob = metrics.serialize_metric_set()
        # A second dimension set without `operation`: the door's totals, which alarms need (an alarm reads one
        # metric per dimension set, and cannot add up the operations' own).
        for declared in blob["_aws"]["CloudWatchMetrics"]:
            declared["Dimensions"].append([name for name in declared["Dimensions"][0] if name != "operation"])
        print(json.dumps(blob, separators=(",", ":")), flush=True)  # EMF is read from stdout
        metrics.clear_metrics()
