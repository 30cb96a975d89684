"""The store a local command uses: its settings from the command line over the environment's, and the commands
that work on an existing store (`keys`, `embed`, `export`, `import`) run against it with their failures told plainly."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from adapters.dynamodb import make_client, table_exists
from core.errors import DomainError, StorageUnavailableError
from handlers import bootstrap
from handlers.bootstrap.runtime import serve_state_dir
from local.running import RunningServe, running_serves

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The loopback port of the DynamoDB Local `serve` runs, unless told another.
DEFAULT_DDB_PORT: Final = 8788


def settings_for(args: argparse.Namespace, endpoint_url: str | None) -> bootstrap.Settings:
    """The environment's settings (`args.settings`, local.cli) with the store the options name."""
    settings: bootstrap.Settings = args.settings
    return settings.model_copy(update={"table_name": args.table or settings.table_name, "endpoint_url": endpoint_url})


class ServeNotChosenError(Exception):
    """No option names the store and the command cannot tell which running `serve`'s to use: several run and none is
    named, or none runs on the port --port names, or a serve and a store are both named. The message lists the
    running serves and says how to name one."""


def _store_settings(args: argparse.Namespace) -> tuple[bootstrap.Settings, str]:
    """The settings of the store a command works on, and the hint its unreachability gets: the store the options name
    (--endpoint-url, --aws, --ddb-port); without one, the store of the running `serve` on --port, or of the one running
    `serve` (local.running); without one, serve's default DynamoDB Local port. ServeNotChosenError when that is not
    one serve."""
    named_store = args.endpoint_url is not None or args.aws or args.ddb_port is not None
    if named_store and args.port is not None:
        raise ServeNotChosenError(
            "--port names a running `agent-memory serve`, --ddb-port, --endpoint-url and --aws a store: give one"
        )
    if named_store:
        if args.endpoint_url is None and not args.aws:
            bootstrap.use_placeholder_credentials()
            return settings_for(args, f"http://127.0.0.1:{args.ddb_port}"), " (is `agent-memory serve` running?)"
        return settings_for(args, args.endpoint_url), ""
    serve = _chosen_serve(running_serves(serve_state_dir()), args.port)
    if serve is None:
        bootstrap.use_placeholder_credentials()
        return settings_for(args, f"http://127.0.0.1:{DEFAULT_DDB_PORT}"), " (is `agent-memory serve` running?)"
    if serve.endpoint_url is not None and serve.endpoint_url.startswith("http://127.0.0.1:"):
        bootstrap.use_placeholder_credentials()  # serve's own DynamoDB Local
    settings: bootstrap.Settings = args.settings
    found = settings.model_copy(
        update={"table_name": args.table or serve.table, "endpoint_url": serve.endpoint_url, "region": serve.region}
    )
    return found, f" (the store of the `agent-memory serve` at {serve.base_url}; has it stopped?)"


def _chosen_serve(serves: list[RunningServe], port: int | None) -> RunningServe | None:
    """The running serve on HTTP `port`, else the one running (None: none runs, and no port is named)."""
    chosen = serves if port is None else [serve for serve in serves if serve.port == port]
    if len(chosen) == 1:
        return chosen[0]
    if not chosen and port is None:
        return None
    listed = "".join(f"\n  {serve.describe()}" for serve in serves)
    choices = " or ".join(f"--port {serve.port}" for serve in serves if serve.port is not None)
    if port is not None:
        running = f"; running:{listed}" if serves else "; none runs"
        raise ServeNotChosenError(f"no `agent-memory serve` runs on port {port}{running}")
    raise ServeNotChosenError(
        f"{len(serves)} `agent-memory serve`s are running:{listed}\nname the one to use by its HTTP port, "
        f"{choices}, or name a store with --ddb-port, --endpoint-url or --aws (and --table)"
    )


def on_store(args: argparse.Namespace, action: Callable[[bootstrap.Settings, DynamoDBClient], None]) -> int:
    """Run `action` on the store the options name (by default the running `serve`'s: _store_settings): 0, or 1 with
    the reason on stderr when the table is missing, the store unreachable, or the action refused (2 when it cannot
    tell which serve's store: ServeNotChosenError)."""
    try:
        settings, hint = _store_settings(args)
    except ServeNotChosenError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    where = settings.endpoint_url or "AWS DynamoDB"
    client: DynamoDBClient = make_client(settings.endpoint_url, settings.region)
    try:
        if not table_exists(client, settings.table_name):
            print(
                f"agent-memory: no table {settings.table_name!r} at {where}; `agent-memory serve` creates it, or "
                "name another with --table",
                file=sys.stderr,
            )
            return 1
        action(settings, client)
    except StorageUnavailableError as exc:
        print(f"agent-memory: cannot use DynamoDB at {where}{hint}: {exc}", file=sys.stderr)
        return 1
    except DomainError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
    return 0
