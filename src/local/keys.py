"""`agent-memory keys create|list|revoke`: API keys in any store (a running `serve`'s DynamoDB Local, DynamoDB
Local, AWS)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from core.clock import Clock, utc_now
from core.keys import CACHE_TTL, KeyService
from handlers import bootstrap
from local.store import on_store


def manage_keys(args: argparse.Namespace, clock: Clock = utc_now) -> int:
    """`keys create|list|revoke` on the store the options name, the keys' times (created, expires, state) read on
    `clock` (the wall clock; tests pass their own)."""
    action: Callable[[KeyService, argparse.Namespace], None] = {
        "create": _create_key,
        "list": _list_keys,
        "revoke": _revoke_key,
    }[args.keys_command]
    return on_store(
        args, lambda settings, client: action(bootstrap.build_services(settings, client, clock=clock).keys, args)
    )


def _create_key(keys: KeyService, args: argparse.Namespace) -> None:
    key, token = keys.create(args.namespace, args.scopes, args.expires_in, args.name)
    if args.json:
        printed = {"key": token, "key_id": key.key_id, "namespace": key.namespace, "scopes": list(key.scopes)}
        print(json.dumps({**printed, "name": key.name}))
        return
    named = f" ({key.name})" if key.name else ""
    print(
        f"Created API key {key.key_id}{named} for namespace {key.namespace} (scopes {', '.join(key.scopes)}; "
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
                "name": key.name,
                "last_used_at": key.last_used_at,
            }
            for key in listed
        ]
        print(json.dumps(rows))
        return
    if not listed:
        print("no API keys" + (f" in namespace {args.namespace}" if args.namespace else ""))
        return
    # The name last: it may hold spaces, and every column before it still splits on whitespace.
    columns = ("KEY ID", "NAMESPACE", "SCOPES", "STATE", "CREATED", "EXPIRES", "NAME")
    table = [columns] + [
        (
            key.key_id,
            key.namespace,
            ",".join(key.scopes),
            key.state(now),
            key.created_at,
            key.expires_at or "never",
            key.name or "",
        )
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
