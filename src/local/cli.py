"""The `agent-memory` command line: `serve` (local.serve) runs the whole service locally in one process; `keys`
(local.keys) manages API keys, `embed` (local.backfilling) embeds the memories waiting for their recall vector,
`export`, `import` and `namespace erase` (local.portability) move or remove whole namespaces, in any store (a
running `serve`'s DynamoDB Local, DynamoDB Local, AWS), and `vectors backfill` (local.vectorfilling) fills recall's
vector index."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from core.access import DEFAULT_NAMESPACE, SCOPES, Scope, parse_scopes, validate_key_name, validate_namespace
from core.clock import Clock, utc_now
from core.errors import InvalidInputError
from handlers import bootstrap
from local.backfilling import MODELS, embed_store
from local.engine_watch import ENGINE_EXITED, STARTUP_FAILED
from local.keys import manage_keys
from local.portability import erase_namespace, export_namespace, import_namespace
from local.serve import DEFAULT_PORT, serve
from local.store import DEFAULT_DDB_PORT
from local.vectorfilling import add_vectors_commands, backfill_vectors

_DURATION = re.compile(r"([0-9]{1,6})([dhm])")
_DURATION_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def _duration(text: str) -> timedelta:
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 30d, 12h or 90m")
    return timedelta(**{_DURATION_UNITS[match.group(2)]: int(match.group(1))})


def _positive_days(text: str) -> int:
    try:
        return bootstrap.parse_retention_days(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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


def _key_name(text: str) -> str:
    try:
        return validate_key_name(text)
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _store_options(
    parser: argparse.ArgumentParser, env: bootstrap.Settings, ddb_port_help: str, *, serving: bool = False
) -> None:
    """The options naming the store: the same for `serve` and every command on a store. A command on a store given
    none of --ddb-port, --endpoint-url and --aws works on the running serve's store (the one --port names, when
    several run), its table unless --table names another (local.store.on_store)."""
    if not serving:
        parser.add_argument(
            "--port",
            type=int,
            default=None,
            help="the running `agent-memory serve` listening on this HTTP port, its store and table (default: the one "
            "serve running; with several, this or an option naming a store is needed)",
        )
    parser.add_argument("--ddb-port", type=int, default=None, help=ddb_port_help)
    parser.add_argument(
        "--endpoint-url",
        default=env.endpoint_url,
        help="use this DynamoDB (DynamoDB Local, or AWS when set to its URL) instead of DynamoDB Local in memory "
        "[env AWS_ENDPOINT_URL_DYNAMODB]",
    )
    parser.add_argument(
        "--aws",
        action="store_true",
        help="use the AWS DynamoDB of the current credentials and region instead of DynamoDB Local in memory",
    )
    table_default = f"default {env.table_name}" if serving else f"default the running serve's, else {env.table_name}"
    parser.add_argument(
        "--table", default=env.table_name if serving else None, help=f"table name ({table_default}) [env TABLE_NAME]"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line, its defaults from the environment's settings (read here, once per process: every command
    finds them as `args.settings`). Public so a caller (a test) can hand a command the arguments `main` would."""
    env = bootstrap.Settings.from_env()
    parser = argparse.ArgumentParser(prog="agent-memory", description="Memory for AI agents, over HTTP and MCP.")
    parser.set_defaults(settings=env)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the HTTP API and the MCP endpoint locally, over Amazon DynamoDB Local in memory by default",
        epilog=f"exit status: 0 stopped (Ctrl-C, SIGTERM); {STARTUP_FAILED} could not start (a port in use, no "
        f"DynamoDB Local); 2 refused its options; {ENGINE_EXITED} its DynamoDB Local exited on its own while serving "
        "(the in-memory data is gone; serve says so on stderr and answers 503 until it stops)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    _store_options(
        serve,
        env,
        f"DynamoDB Local's port on loopback (default: the HTTP port's next, {DEFAULT_DDB_PORT} beside {DEFAULT_PORT}, "
        "or a free one when that is taken)",
        serving=True,
    )
    serve.add_argument("--template", type=Path, default=None, help="template.yaml holding the table definition")
    serve.add_argument(
        "--deleted-retention-days",
        type=_positive_days,
        default=env.deleted_retention_days,
        help=f"days a deleted memory stays restorable before it is purged (default {env.deleted_retention_days}) "
        "[env DELETED_RETENTION_DAYS]",
    )
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help=f"accept every request without a key, as namespace {DEFAULT_NAMESPACE!r} with every scope; "
        "for quick experiments on a loopback host only",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        default=None,
        metavar="ADDRESSES",
        help="trust X-Forwarded-For and X-Forwarded-Proto from these proxies only (addresses or networks, "
        "comma-separated; * for any): behind a proxy you run, the caller's address is then the one it forwards. "
        "By default no forwarded header is trusted, from loopback neither: each caller is the address it connects "
        "from (what the OAuth registration bound counts)",
    )
    serve.add_argument(
        "--no-embed",
        action="store_true",
        help="do not embed in the background the memories waiting for their recall vector (imported ones, say): "
        "they wait, ranked by their terms only, until `agent-memory embed` runs; for a serve that only moves data",
    )

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    keys_commands = keys.add_subparsers(dest="keys_command", required=True)
    reach = (
        "the DynamoDB Local on this loopback port, as a running `agent-memory serve` prints it (default: the store "
        f"of the one serve running, found by itself, or of the one --port names; else {DEFAULT_DDB_PORT})"
    )
    create = keys_commands.add_parser("create", help="create an API key; its plaintext is printed once")
    create.add_argument("--namespace", type=_namespace, required=True, help="the only namespace the key reaches")
    create.add_argument(
        "--scopes",
        type=_scopes,
        default=SCOPES,
        help="comma-separated, of read, write and keys (may revoke the namespace's other keys, as the console "
        "offers); default read,write",
    )
    create.add_argument(
        "--expires-in", type=_duration, default=None, help="lifetime such as 30d, 12h or 90m (default: never)"
    )
    create.add_argument(
        "--name",
        type=_key_name,
        default=None,
        help="what you call the key, e.g. 'work laptop' (shown by list and the console)",
    )
    create.add_argument("--json", action="store_true", help="print the key as JSON")
    _store_options(create, env, reach)

    listing = keys_commands.add_parser("list", help="list API keys (never their secrets)")
    listing.add_argument("--namespace", type=_namespace, default=None, help="only this namespace's keys")
    listing.add_argument("--json", action="store_true", help="print the keys as JSON")
    _store_options(listing, env, reach)

    revoke = keys_commands.add_parser("revoke", help="revoke an API key: it reads and writes nothing from now on")
    revoke.add_argument("key_id", help="the key id, as `keys list` shows it (the 12 characters after `am_`)")
    _store_options(revoke, env, reach)
    _embed_options(
        commands.add_parser(
            "embed",
            help="embed the memories waiting for their recall vector (written while the model was unavailable, or "
            "imported) until none is left",
        ),
        env,
        reach,
    )

    export = commands.add_parser(
        "export", help="write a namespace's memories to standard output, one JSON object per line (NDJSON)"
    )
    export.add_argument("--namespace", type=_namespace, required=True, help="the namespace to export")
    export.add_argument("--include-deleted", action="store_true", help="also the deleted (restorable) memories")
    export.add_argument("--history", action="store_true", help="with every memory's history")
    _store_options(export, env, reach)

    load = commands.add_parser(
        "import", help="import an export into an empty namespace: every line is checked before anything is written"
    )
    load.add_argument("--namespace", type=_namespace, required=True, help="the empty namespace to import into")
    load.add_argument("file", type=Path, help="a file written by `agent-memory export`")
    _store_options(load, env, reach)

    namespace = commands.add_parser("namespace", help="whole-namespace operations")
    namespace_commands = namespace.add_subparsers(dest="namespace_command", required=True)
    erase = namespace_commands.add_parser(
        "erase",
        help="remove everything of a namespace for good: memories, history, totals, counters, API keys, OAuth grants",
    )
    erase.add_argument("namespace", type=_namespace, help="the namespace to erase")
    erase.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _store_options(erase, env, reach)
    add_vectors_commands(
        commands.add_parser("vectors", help="recall's vector index (Amazon S3 Vectors, RecallVectorIndex)"),
        lambda parser: _store_options(parser, env, reach),
        _namespace,
    )
    return parser


def _embed_options(embed: argparse.ArgumentParser, env: bootstrap.Settings, reach: str) -> None:
    embed.add_argument(
        "--all",
        action="store_true",
        help="first put back among the waiting every memory another model embedded (after a change of model); "
        "reads the whole table",
    )
    embed.add_argument(
        "--model",
        choices=MODELS,
        default=None,
        help="offline: the model serve runs; bedrock: the deployed one, EMBEDDING_MODEL (default: bedrock with "
        "--aws, else offline)",
    )
    _store_options(embed, env, reach)


def main(argv: Sequence[str] | None = None, *, clock: Clock = utc_now) -> int:
    """Run the command `argv` names (by default the process's arguments); `clock` is the one `keys` reads times on
    (the wall clock; tests pass their own)."""
    try:
        parser = build_parser()
    except bootstrap.SettingsError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "keys":
        return manage_keys(args, clock)
    if args.command == "embed":
        return embed_store(args)
    if args.command == "export":
        return export_namespace(args)
    if args.command == "import":
        return import_namespace(args)
    if args.command == "namespace":
        return erase_namespace(args)
    if args.command == "vectors":
        return backfill_vectors(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
