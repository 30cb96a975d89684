"""What the OAuth grants' rules (core.grants) promise their callers: how long each token lives, the token response,
and the refusal a token request gets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Final, Literal

from core.access import Scope

# RFC 6749 §4.1.2 asks for at most 10 minutes; a code only has to survive one redirect and one token request.
CODE_TTL: Final = timedelta(minutes=5)
ACCESS_TTL: Final = timedelta(hours=1)
# A grant whose refresh token goes unused this long ends; every refresh starts the window again.
REFRESH_TTL: Final = timedelta(days=30)
# A registration never used to obtain tokens expires this soon; one in use, this long after its newest grant ends.
UNUSED_CLIENT_TTL: Final = timedelta(days=1)
# How long a verified access token is trusted without reading it again (as API keys are: core.keys.CACHE_TTL).
TOKEN_CACHE_TTL: Final = timedelta(seconds=30)
TOKEN_CACHE_MAX_ENTRIES: Final = 1024

INVALID_TOKEN: Final = "the access token is not valid"  # noqa: S105  # a message, not a secret
# What a caller holding an access token that no longer works is told to do, at both doors: its person approves the
# client again (a token holder has no key to send instead).
SIGN_IN_AGAIN: Final = "sign in again: connect the MCP client once more and approve it with a live API key"


class GrantError(Exception):
    """A token request the authorization server refuses, with its RFC 6749 §5.2 error code."""

    def __init__(self, error: Literal["invalid_grant", "invalid_target", "invalid_scope"], description: str) -> None:
        self.error = error
        self.description = description
        super().__init__(description)


@dataclass(frozen=True)
class Tokens:
    """A token response: the plaintexts exist only here."""

    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[Scope, ...]
