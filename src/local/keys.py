"""`agent-memory keys create|list|revoke`: API keys in any store (a running `serve`'s DynamoDB Local, DynamoDB
Local, AWS)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.errors import DomainError, StorageUnavailableError
from core.keys import CACHE_TTL, KeyService
from core.repository.dynamodb import make_client, table_exists
from handlers import bootstrap
from local.store import settings_for

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def manage_keys(args: argparse.Namespace) -> int:
    endpoint_url = args.endpoint_url
    if endpoint_url is None and not args.aws:
        bootstrap.use_placeholder_credentials()
        endpoint_url = f"http://127.0.0.1:{args.ddb_port}"
    settings = settings_for(args, endpoint_url)
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
