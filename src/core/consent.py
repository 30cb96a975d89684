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
    """The consent page cannot grant what was asked with the key given; the message says why (never the key), and
    `namespace` is the key's own when the key was valid, for the page to offer it."""

    def __init__(self, message: str, namespace: str | None = None) -> None:
        self.namespace = namespace
        super().__init__(message)


@dataclass(frozen=True)
class Consent:
    """What a person consented to, with which key (its id)."""

    key_id: str
    namespace: str
    scopes: tuple[Scope, ...]


def consent(keys: KeyService, api_key: str, namespace: str, scopes: Iterable[str]) -> Consent:
    """The consent `api_key` gives to `namespace` and `scopes`: the namespace must be the key's own (left empty, it
    is: a key has one) and the scopes ones it holds. ConsentRefusedError otherwise."""
    try:
        namespace = validate_namespace(namespace.strip()) if namespace.strip() else ""
        wanted = parse_scopes(scopes)
    except InvalidInputError as exc:
        raise ConsentRefusedError("; ".join(f"{e.field} {e.message}" for e in exc.errors)) from None
    try:
        principal = keys.authenticate(api_key.strip())
    except AuthenticationError:
        raise ConsentRefusedError(INVALID_KEY) from None
    namespace = namespace or principal.namespace
    if principal.namespace != namespace or principal.key_id is None:
        raise ConsentRefusedError(f"That API key is not a key of namespace {namespace}.", principal.namespace)
    missing = [scope for scope in wanted if scope not in principal.scopes]
    if missing:
        refusal = f"That API key may not grant {' or '.join(missing)}: it lacks that scope."
        raise ConsentRefusedError(refusal, principal.namespace)
    return Consent(principal.key_id, namespace, wanted)
