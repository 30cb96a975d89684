"""Loaded by schemathesis through the `hooks` setting of the schemathesis.toml that test_schemathesis.py writes; not
a test module.

object_level_authorization (ST402) decides that a peer received the owner's object when the owner's read and the
peer's replay agree on every field the response schema declares. Every GET of a memory stamps `last_accessed_at`
(CONTRACT.md), so the two reads never agree on it and the check could not report a leak at all: a planted bug
that served any namespace's memory by id passed unnoticed. The stamp is per-read metadata, not part of which object
was returned, so the two bodies are compared without it; every other field still has to match.

Idempotency-Key: a client sends one key per logical create and reuses it only to retry that create, whose answer
is then the first response's record even if that record was deleted since (ST302 would call that "created resource
not found"). Generated cases are independent requests, so each well-formed key is made unique per request; a
malformed key is sent as generated, so the 422 for it is still exercised.

The per-read fields are compared through schemathesis' own `object_authorization.is_equivalent`, replaced here: the
check has no public setting that leaves a field out (only turning the whole check off, which would lose what it
catches), so test_schemathesis.py pins the schemathesis version this was read against (CHECKED_SCHEMATHESIS_VERSION).
What a public setting can say (the restore's and the history's exceptions) is in the schemathesis.toml it writes.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis
from schemathesis.specs.openapi import object_authorization

PER_READ_FIELDS = frozenset({"last_accessed_at"})
_schemathesis_is_equivalent = object_authorization.is_equivalent


def _without_per_read_fields(body: object) -> object:
    if isinstance(body, dict):
        return {key: _without_per_read_fields(item) for key, item in body.items() if key not in PER_READ_FIELDS}
    if isinstance(body, list):
        return [_without_per_read_fields(item) for item in body]
    return body


def is_equivalent(owner: object, peer: object, value: object, schema: Any) -> bool:
    return _schemathesis_is_equivalent(_without_per_read_fields(owner), _without_per_read_fields(peer), value, schema)


object_authorization.is_equivalent = is_equivalent


_WELL_FORMED_KEY = re.compile(r"[!-~]{1,255}")


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and _WELL_FORMED_KEY.fullmatch(key):
        case.headers["Idempotency-Key"] = f"{key[:222]}-{uuid.uuid4().hex}"
