"""A consent: what a person approving an OAuth client with an API key may grant (the key's own namespace, scopes it
holds), checked before any grant is made (core.grants)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.access import Scope, parse_scopes, validate_namespace
from core.errors import AuthenticationError, InvalidInputError
from core.keys import KeyService

INVALID_KEY = "That API key is not valid: it is unknown, revoked or expired."


class ConsentRefusedError(Exception):
    """The consent page cannot grant what was asked with the key given; the message says why (never the key)."""


@dataclass(frozen=True)
class Consent:
    """What a person consented to, with which key (its id)."""

    key_id: str
    namespace: str
    scopes: tuple[Scope, ...]


def consent(keys: KeyService, api_key: str, namespace: str, scopes: Iterable[str]) -> Consent:
    """The consent `api_key` gives to `namespace` and `scopes`: the namespace must be the key's own and the scopes
    ones it holds. ConsentRefusedError otherwise."""
    try:
        namespace = validate_namespace(namespace.strip())
        wanted = parse_scopes(scopes)
    except InvalidInputError as exc:
        raise ConsentRefusedError("; ".join(f"{e.field} {e.message}" for e in exc.errors)) from None
    try:
        principal = keys.authenticate(api_key.strip())
    except AuthenticationError:
        raise ConsentRefusedError(INVALID_KEY) from None
    if principal.namespace != namespace or principal.key_id is None:
        raise ConsentRefusedError(f"That API key is not a key of namespace {namespace}.")
    missing = [scope for scope in wanted if scope not in principal.scopes]
    if missing:
        raise ConsentRefusedError(f"That API key may not grant {' or '.join(missing)}: it lacks that scope.")
    return Consent(principal.key_id, namespace, wanted)
