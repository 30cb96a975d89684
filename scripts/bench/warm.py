"""Warm overhead: each door's Lambda handler invoked in-process with the events in events/, over in-memory ports,
against a bare handler that returns the same response (µs per call and the ratio)."""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.memory import InMemoryKeyRepository, InMemoryMemoryRepository
from core.access import SCOPES, ApiKey, hash_key, key_id_of
from core.keys import KeyService
from core.memories import MemoryService
from core.model import Memory
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder

EVENTS = Path(__file__).resolve().parents[2] / "events"
# The API key the files in events/ carry (tests/conftest.py EVENT_API_KEY): a public fixture value.
EVENT_API_KEY = "am_e7e27e57e7e2_fixture-only-test-key-not-valid-anywhere-00"
NAMESPACE = "default"
SEED = 30

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class LambdaContext:
    function_name = "bench"
    function_version = "$LATEST"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 28_000


def _seed() -> dict[tuple[str, int], Memory]:
    rows = {}
    for memory_id in range(1, SEED + 1):
        stamp = f"2026-04-06T14:{memory_id:02d}:00.000000Z"
        rows[NAMESPACE, memory_id] = Memory(
            id=memory_id,
            content=f"Prefers dark roast coffee, note {memory_id}",
            tags=["preference", "food"] if memory_id % 2 else ["travel"],
            created_at=stamp,
            updated_at=stamp,
            last_accessed_at=None,
            memory_type="preference" if memory_id % 3 else "fact",
            status="active",
            version=1,
        )
    return rows


def _services() -> tuple[InMemoryMemoryRepository, MemoryService, KeyService, RecallService]:
    """The ports a door is wired over; recall embeds with the stand-in (instant: the door's own cost is measured)."""
    memories, keys = InMemoryMemoryRepository(), InMemoryKeyRepository()
    created = "2026-04-06T14:00:00.000000Z"
    keys.add(ApiKey(key_id_of(EVENT_API_KEY), NAMESPACE, SCOPES, created, None, False, hash_key(EVENT_API_KEY)))
    return memories, MemoryService(memories), KeyService(keys), RecallService(memories, StandInEmbedder())


def doors() -> dict[str, tuple[Handler, InMemoryMemoryRepository]]:
    """Both Lambda handlers built as their modules build them, over the in-memory ports; each door's handler again
    with the metrics its entrypoint emits (`+metrics`), and the MCP handler as it was before performance round two
    (`mcp@today`: an endpoint and its session manager started and stopped on every invocation)."""
    from adapters.dynamodb.usage import CapacityTally
    from handlers.auth import key_authenticator
    from handlers.aws.events import invoke
    from handlers.http import app as http_api
    from handlers.mcp import create_endpoint, create_server
    from handlers.mcp import endpoint as mcp_server
    from handlers.metrics import RequestMetrics, event_body, http_operation, mcp_operation, request_line

    http_repo, http_service, http_keys, http_recall = _services()
    authenticate = key_authenticator(http_keys)
    app = http_api.create_app(http_service, authenticate, version="bench", recall=http_recall)

    @http_api.logger.inject_lambda_context(correlation_id_path="requestContext.requestId", log_event=False)
    def http_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return invoke(app, event, context)

    mcp_repo, mcp_service, mcp_keys, mcp_recall = _services()
    mcp_authenticate = key_authenticator(mcp_keys)
    server = create_server(mcp_service, mcp_authenticate, version="bench", recall=mcp_recall)
    inject = mcp_server.logger.inject_lambda_context(correlation_id_path="requestContext.requestId", log_event=False)
    mcp_handler = inject(mcp_server.create_handler(server, authenticate=mcp_authenticate))

    def today(event: dict[str, Any], context: Any) -> dict[str, Any]:
        endpoint = create_endpoint(server, authenticate=mcp_authenticate)
        return invoke(endpoint, event, context, lifespan="on")

    def measured(door: str, handler: Handler, operation: Callable[[dict[str, Any]], str]) -> Handler:
        metrics = RequestMetrics(door, CapacityTally(), "bench")

        def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
            started = metrics.start()
            response = handler(event, context)
            metrics.finish(started, operation(event), response["statusCode"])
            return response

        return handle

    return {
        "http": (http_handler, http_repo),
        "http+metrics": (measured("http", http_handler, lambda e: http_operation(*request_line(e))), http_repo),
        "mcp": (mcp_handler, mcp_repo),
        "mcp+metrics": (measured("mcp", mcp_handler, lambda e: mcp_operation(event_body(e))), mcp_repo),
        "mcp@today": (inject(today), mcp_repo),
    }


def bare_for(response: dict[str, Any]) -> Handler:
    """A plain function answering with the same JSON response dict."""
    status, headers = response["statusCode"], dict(response.get("headers", {}))
    try:
        payload: Any = json.loads(response.get("body") or "null")
    except ValueError:
        payload = response.get("body")

    def bare(event: dict[str, Any], context: Any) -> dict[str, Any]:
        body = event.get("body")
        if body and not event.get("isBase64Encoded"):
            with contextlib.suppress(ValueError):
                json.loads(body)
        return {"statusCode": status, "headers": headers, "body": json.dumps(payload)}

    return bare


def measure(rounds: int, calls: int) -> dict[str, Any]:
    """µs per call of each door over its events (mean over the events, median over rounds) and the bare one's."""
    context = LambdaContext()
    seed = _seed()
    result: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):  # the metrics' EMF lines
        built = doors()
        for door, (handler, repo) in built.items():
            result[door] = _measure_door(door, handler, repo, rounds, calls, context, seed)
    return result


def _measure_door(
    door: str,
    handler: Handler,
    repo: InMemoryMemoryRepository,
    rounds: int,
    calls: int,
    context: Any,
    seed: dict[tuple[str, int], Memory],
) -> dict[str, Any]:
    prefix = door.split("+")[0].split("@")[0]  # the events of its door
    events = {path.stem: json.loads(path.read_text()) for path in sorted(EVENTS.glob(f"{prefix}_*.json"))}
    bares: dict[str, Handler] = {}
    statuses: dict[str, int] = {}
    for name, event in events.items():
        repo.reset(seed, {NAMESPACE: SEED + 1})
        response = handler(event, context)
        statuses[name] = int(response["statusCode"])
        bares[name] = bare_for(response)
    per_round: dict[str, list[float]] = {"handler": [], "bare": []}
    per_event: dict[str, list[float]] = {name: [] for name in events}
    for _ in range(rounds):
        for kind in ("handler", "bare"):
            total = 0.0
            for name, event in events.items():
                call = handler if kind == "handler" else bares[name]
                spent = 0.0
                for _ in range(calls):
                    repo.reset(seed, {NAMESPACE: SEED + 1})
                    start = time.perf_counter()
                    call(event, context)
                    spent += time.perf_counter() - start
                total += spent / calls
                if kind == "handler":
                    per_event[name].append(spent / calls * 1e6)
            per_round[kind].append(total / len(events) * 1e6)
    handler_us = statistics.median(per_round["handler"])
    bare_us = statistics.median(per_round["bare"])
    return {
        "events": len(events),
        "handler_us": handler_us,
        "bare_us": bare_us,
        "ratio": handler_us / bare_us,
        "per_event_us": {name: statistics.median(values) for name, values in per_event.items()},
        "statuses": statuses,
    }
