"""The `agent-memory` command: `serve` runs the whole service locally in one process; `keys` manages API keys in
any store (a running `serve`'s embedded engine, DynamoDB Local, AWS)."""

from __future__ import annotations

import argparse
import errno
import functools
import ipaddress
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from core.access import SCOPES, ApiKey, Scope, parse_scopes, validate_namespace
from core.errors import DomainError, InvalidInputError, StorageUnavailableError, TableMissingError
from core.keys import CACHE_TTL, KeyService
from core.repository.dynamodb import ensure_table, make_client, table_exists
from handlers import bootstrap

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from starlette.types import ASGIApp

    from handlers.auth import Authenticator

T = TypeVar("T")

DEFAULT_PORT = 8787
DEFAULT_DDB_PORT = 8788
_DURATION = re.compile(r"([0-9]{1,6})([dhm])")
_DURATION_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def _duration(text: str) -> timedelta:
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30d, 12h or 90m")
    return timedelta(**{_DURATION_UNITS[match.group(2)]: int(match.group(1))})


def _scopes(text: str) -> tuple[Scope, ...]:
    try:
        return parse_scopes(part for part in text.split(",") if part.strip())
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _namespace(text: str) -> str:
    try:
        return validate_namespace(text)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _store_options(parser: argparse.ArgumentParser, env: bootstrap.Settings, ddb_port_help: str) -> None:
    """The options naming the store: the same for `serve` and every `keys` command."""
    parser.add_argument("--ddb-port", type=int, default=DEFAULT_DDB_PORT, help=ddb_port_help)
    parser.add_argument(
        "--endpoint-url",
        default=env.endpoint_url,
        help="use this DynamoDB (DynamoDB Local, or AWS when set to its URL) instead of the embedded engine "
        "[env AWS_ENDPOINT_URL_DYNAMODB]",
    )
    parser.add_argument(
        "--aws",
        action="store_true",
        help="use the AWS DynamoDB of the current credentials and region instead of the embedded engine",
    )
    parser.add_argument(
        "--table", default=env.table_name, help=f"table name (default {env.table_name}) [env TABLE_NAME]"
    )


def _parser() -> argparse.ArgumentParser:
    env = bootstrap.settings_from_env()
    parser = argparse.ArgumentParser(prog="agent-memory", description="Memory for AI agents, over HTTP and MCP.")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve", help="run the HTTP API and the MCP endpoint locally, with an embedded DynamoDB by default"
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    _store_options(serve, env, f"embedded DynamoDB port on loopback (default {DEFAULT_DDB_PORT})")
    serve.add_argument("--template", type=Path, default=None, help="template.yaml holding the table definition")
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help=f"accept every request without a key, as namespace {bootstrap.DEFAULT_NAMESPACE!r} with every scope; "
        "for quick experiments on a loopback host only",
    )

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    keys_commands = keys.add_subparsers(dest="keys_command", required=True)
    reach = (
        f"the embedded DynamoDB of a running `agent-memory serve` on this loopback port (default {DEFAULT_DDB_PORT})"
    )
    create = keys_commands.add_parser("create", help="create an API key; its plaintext is printed once")
    create.add_argument("--namespace", type=_namespace, required=True, help="the only namespace the key reaches")
    create.add_argument(
        "--scopes", type=_scopes, default=SCOPES, help="comma-separated: read, write or read,write (default)"
    )
    create.add_argument(
        "--expires-in", type=_duration, default=None, help="lifetime such as 30d, 12h or 90m (default: never)"
    )
    create.add_argument("--json", action="store_true", help="print the key as JSON")
    _store_options(create, env, reach)

    listing = keys_commands.add_parser("list", help="list API keys (never their secrets)")
    listing.add_argument("--namespace", type=_namespace, default=None, help="only this namespace's keys")
    listing.add_argument("--json", action="store_true", help="print the keys as JSON")
    _store_options(listing, env, reach)

    revoke = keys_commands.add_parser("revoke", help="revoke an API key: servers refuse it within 30 seconds")
    revoke.add_argument("key_id", help="the key id, as `keys list` shows it (the 12 characters after `am_`)")
    _store_options(revoke, env, reach)
    return parser


def _settings(args: argparse.Namespace, endpoint_url: str | None) -> bootstrap.Settings:
    return bootstrap.Settings(
        table_name=args.table, region=bootstrap.settings_from_env().region, endpoint_url=endpoint_url
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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


def _busy_port(args: argparse.Namespace, embedded: bool) -> str | None:
    """The refusal for a port `serve` cannot listen on, naming its option, before anything is created."""
    wanted = [("--port", args.host, args.port)] + ([("--ddb-port", "127.0.0.1", args.ddb_port)] if embedded else [])
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


def serve_app(services: bootstrap.Services, authenticate: Authenticator) -> ASGIApp:
    """What `serve` runs: both doors over `services`, with every blocking storage call in a worker thread, so a slow
    call holds up only its own request."""
    from handlers.http_api import create_app
    from handlers.mcp_server import create_mcp_asgi_app, with_mcp_endpoint
    from handlers.mcp_tools import create_server

    server = create_server(provide_service=lambda: services.memories, authenticate=authenticate)
    mcp = create_mcp_asgi_app(server, bootstrap.settings_from_env().mcp_allowed_origins, authenticate)
    http = create_app(provide_service=lambda: services.memories, authenticate=authenticate, threaded=True)
    return with_mcp_endpoint(http, mcp)


def serve(args: argparse.Namespace) -> int:
    if args.no_auth and not is_loopback(args.host):
        print(
            f"agent-memory: refusing --no-auth on {args.host}: every caller that can reach it could read and erase "
            "every memory. Drop --no-auth (API keys are on by default) or listen on 127.0.0.1.",
            file=sys.stderr,
        )
        return 2
    embedded = None
    endpoint_url = args.endpoint_url
    busy = _busy_port(args, embedded=endpoint_url is None and not args.aws)
    if busy is not None:
        print(busy, file=sys.stderr)
        return 1

    import uvicorn

    from handlers.auth import key_authenticator, open_access
    from handlers.local import TEMPLATE, EmbeddedDynamoDB, table_definition

    if endpoint_url is None and not args.aws:
        bootstrap.use_placeholder_credentials()
        embedded = EmbeddedDynamoDB(args.ddb_port).start()
        endpoint_url = embedded.endpoint_url
    try:
        settings = _settings(args, endpoint_url)
        client = make_client(settings.endpoint_url, settings.region)
        definition = table_definition(args.template or TEMPLATE)
        created = ensure_table(client, settings.table_name, definition)
        services = bootstrap.build_services(settings, client)
        base = f"http://{args.host}:{args.port}"

        def first_key() -> tuple[ApiKey, str] | None:
            return None if args.no_auth or services.keys.list() else services.keys.create(bootstrap.DEFAULT_NAMESPACE)

        def on_recreated() -> None:
            if not args.no_auth:
                _print_auth(first_key(), services.keys, base, args)

        table = _OwnTable(client, settings.table_name, definition, on_recreated)
        guarded = bootstrap.Services(table.guard(services.memories), table.guard(services.keys))
        authenticate = open_access() if args.no_auth else key_authenticator(lambda: guarded.keys)
        key = first_key()
        app = serve_app(guarded, authenticate)
        where = (
            f"embedded engine at {endpoint_url} (in memory: data is lost on exit)"
            if embedded
            else (endpoint_url or "AWS DynamoDB")
        )
        print(f"agent-memory HTTP API  {base}/memories", flush=True)
        print(f"agent-memory MCP       {base}/mcp", flush=True)
        print(f"DynamoDB               {where}", flush=True)
        print(f"table                  {settings.table_name} ({'created' if created else 'existing'})", flush=True)
        if args.no_auth:
            _warn_open(base)
        else:
            _print_auth(key, services.keys, base, args)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def _warn_open(base: str) -> None:
    banner = "!" * 100
    print(
        f"{banner}\n"
        f"!! WARNING: --no-auth: authentication is OFF. Any program that reaches {base} reads, changes and\n"
        f"!! erases the memories of namespace {bootstrap.DEFAULT_NAMESPACE!r} without a key. Quick experiments only.\n"
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


def manage_keys(args: argparse.Namespace) -> int:
    endpoint_url = args.endpoint_url
    if endpoint_url is None and not args.aws:
        bootstrap.use_placeholder_credentials()
        endpoint_url = f"http://127.0.0.1:{args.ddb_port}"
    settings = _settings(args, endpoint_url)
    where = endpoint_url or "AWS DynamoDB"
    client: DynamoDBClient = make_client(settings.endpoint_url, settings.region)
    action: Callable[[KeyService, argparse.Namespace], None] = {
        "create": _create_key,
        "list": _list_keys,
        "revoke": _revoke_key,
    }[args.keys_command]
    try:
        if not table_exists(client, settings.table_name):
            print(
                f"agent-memory: no table {settings.table_name!r} at {where}; `agent-memory serve` creates it, or "
                "name another with --table",
                file=sys.stderr,
            )
            return 1
        action(bootstrap.build_services(settings, client).keys, args)
    except StorageUnavailableError as exc:
        hint = " (is `agent-memory serve` running?)" if args.endpoint_url is None and not args.aws else ""
        print(f"agent-memory: cannot use DynamoDB at {where}{hint}: {exc}", file=sys.stderr)
        return 1
    except DomainError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
    return 0


def _create_key(keys: KeyService, args: argparse.Namespace) -> None:
    key, token = keys.create(args.namespace, args.scopes, args.expires_in)
    if args.json:
        print(json.dumps({"key": token, "key_id": key.key_id, "namespace": key.namespace, "scopes": list(key.scopes)}))
        return
    print(
        f"Created API key {key.key_id} for namespace {key.namespace} (scopes {', '.join(key.scopes)}; "
        f"expires {key.expires_at or 'never'}). It is shown only this once; store it now:"
    )
    print(token)
    print("Send it as `Authorization: Bearer <key>`.")


def _list_keys(keys: KeyService, args: argparse.Namespace) -> None:
    listed, now = keys.list(args.namespace), keys.now()
    if args.json:
        rows = [
            {
                "key_id": key.key_id,
                "namespace": key.namespace,
                "scopes": list(key.scopes),
                "created_at": key.created_at,
                "expires_at": key.expires_at,
                "revoked": key.revoked,
                "state": key.state(now),
            }
            for key in listed
        ]
        print(json.dumps(rows))
        return
    if not listed:
        print("no API keys" + (f" in namespace {args.namespace}" if args.namespace else ""))
        return
    columns = ("KEY ID", "NAMESPACE", "SCOPES", "STATE", "CREATED", "EXPIRES")
    table = [columns] + [
        (key.key_id, key.namespace, ",".join(key.scopes), key.state(now), key.created_at, key.expires_at or "never")
        for key in listed
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _revoke_key(keys: KeyService, args: argparse.Namespace) -> None:
    key = keys.revoke(args.key_id)
    print(
        f"Revoked API key {key.key_id} (namespace {key.namespace}). Running servers refuse it within "
        f"{int(CACHE_TTL.total_seconds())} seconds."
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "keys":
        return manage_keys(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
