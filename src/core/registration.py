"""Bounds on dynamic client registration (RFC 7591), which anyone may call: what one registration may hold, and each
registration counted in the store for its caller and in total, per fixed window, so the bounds hold across every
instance serving the door. Rules only; GrantService.register applies them and GrantRepository.add_client counts."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from core.access import hash_key
from core.errors import FieldError, InvalidInputError
from core.limits import (
    MAX_CLIENT_METADATA_BYTES,
    MAX_REDIRECT_URIS,
    REGISTRATION_WINDOW_SECONDS,
    REGISTRATIONS_IN_TOTAL,
    REGISTRATIONS_PER_CALLER,
)
from core.repository import RegistrationBound, RegistrationWindow
from core.tokens import check_redirect_uri


@dataclass(frozen=True)
class RegistrationBounds:
    """How many clients one caller, and every caller together, may register per fixed window (core.limits)."""

    per_caller: int = REGISTRATIONS_PER_CALLER
    total: int = REGISTRATIONS_IN_TOTAL
    window_seconds: int = REGISTRATION_WINDOW_SECONDS

    def window(self, caller: str, now: int) -> RegistrationWindow:
        """The window a registration from `caller` at `now` (epoch seconds) is counted in; the caller only hashed."""
        starts = now - now % self.window_seconds
        return RegistrationWindow(
            hash_key(caller_bucket(caller)), starts, starts + self.window_seconds, self.per_caller, self.total
        )


def check_registration(metadata: str, redirect_uris: list[str]) -> None:
    """A registration's bounds: its metadata (JSON) at most MAX_CLIENT_METADATA_BYTES, and 1 to MAX_REDIRECT_URIS
    redirect URIs, each one core.tokens.check_redirect_uri admits; InvalidInputError otherwise."""
    if len(metadata.encode()) > MAX_CLIENT_METADATA_BYTES:
        raise InvalidInputError([FieldError("metadata", f"must be at most {MAX_CLIENT_METADATA_BYTES} bytes")])
    if not 1 <= len(redirect_uris) <= MAX_REDIRECT_URIS:
        raise InvalidInputError([FieldError("redirect_uris", f"must hold 1 to {MAX_REDIRECT_URIS} URIs")])
    for uri in redirect_uris:
        check_redirect_uri(uri)


class RegistrationLimitError(Exception):
    """A registration over one of its RegistrationBounds (`bound`): nothing was stored; its window ends in
    `retry_after_seconds`."""

    def __init__(self, bound: RegistrationBound, bounds: RegistrationBounds, retry_after_seconds: int) -> None:
        self.bound = bound
        self.retry_after_seconds = retry_after_seconds
        if bound == "caller":
            who, limit = "from this address", bounds.per_caller
        else:
            who, limit = "on this server (every address together)", bounds.total
        super().__init__(
            f"too many client registrations {who}: at most {limit} per {bounds.window_seconds // 60} minutes; "
            f"retry in {retry_after_seconds} s"
        )


def caller_bucket(address: str) -> str:
    """Whom a registration counts for: the address, or for IPv6 its /64 (one subscriber's usual allocation, which
    gives its holder more addresses than any bound); anything that is no address counts as itself."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip), 64), strict=False))
    return str(ip)
