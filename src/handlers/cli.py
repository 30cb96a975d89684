"""The `agent-memory` command: `serve` runs the whole service locally in one process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from core.repository.dynamodb import ensure_table, make_client
from handlers import bootstrap


def _parser() -> argparse.ArgumentParser:
    env = bootstrap.settings_from_env()
    parser = argparse.ArgumentParser(prog="agent-memory", description="Memory for AI agents, over HTTP.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="run the HTTP API and the MCP endpoint locally, with an embedded DynamoDB by default"
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8787, help="HTTP port (default 8787)")
    serve.add_argument("--ddb-port", type=int, default=8788, help="embedded DynamoDB port on loopback (default 8788)")
    serve.add_argument(
        "--endpoint-url",
        default=env.endpoint_url,
        help="use this DynamoDB (DynamoDB Local, or AWS when set to its URL) instead of the embedded engine "
        "[env AWS_ENDPOINT_URL_DYNAMODB]",
    )
    serve.add_argument(
        "--aws",
        action="store_true",
        help="use the AWS DynamoDB of the current credentials and region instead of the embedded engine",
    )
    serve.add_argument(
        "--table", default=env.table_name, help=f"table name (default {env.table_name}) [env TABLE_NAME]"
    )
    serve.add_argument("--template", type=Path, default=None, help="template.yaml holding the table definition")
    return parser


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from handlers.http_api import create_app
    from handlers.local import TEMPLATE, EmbeddedDynamoDB, table_definition
    from handlers.mcp_server import create_mcp_asgi_app, create_server, with_mcp_endpoint

    embedded = None
    endpoint_url = args.endpoint_url
    if endpoint_url is None and not args.aws:
        bootstrap.use_placeholder_credentials()
        embedded = EmbeddedDynamoDB(args.ddb_port).start()
        endpoint_url = embedded.endpoint_url
    try:
        settings = bootstrap.Settings(
            table_name=args.table, region=bootstrap.settings_from_env().region, endpoint_url=endpoint_url
        )
        created = ensure_table(
            make_client(settings.endpoint_url, settings.region),
            settings.table_name,
            table_definition(args.template or TEMPLATE),
        )
        service = bootstrap.build_service(settings)
        mcp = create_mcp_asgi_app(
            create_server(provide_service=lambda: service), bootstrap.settings_from_env().mcp_allowed_origins
        )
        app = with_mcp_endpoint(create_app(provide_service=lambda: service), mcp)
        where = (
            f"embedded engine at {endpoint_url} (in memory: data is lost on exit)"
            if embedded
            else (endpoint_url or "AWS DynamoDB")
        )
        print(f"agent-memory HTTP API  http://{args.host}:{args.port}/memories", flush=True)
        print(f"agent-memory MCP       http://{args.host}:{args.port}/mcp", flush=True)
        print(f"DynamoDB               {where}", flush=True)
        print(f"table                  {settings.table_name} ({'created' if created else 'existing'})", flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return serve(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
