"""The one reading of a host: a Host header or a URI's authority (`name[:port]`), and whether a name is this machine's
loopback. Both doors and the redirect-URI rules read hosts here, so none admits a host another refuses."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

# RFC 3986's reg-name also admits the sub-delims (! $ & ' ( ) * + , ; =) and percent-encodings, but no DNS name has
# them, and they are what reached the consent page's Content-Security-Policy (`;` ends a directive, `'` a source):
# a host is a DNS name (its labels of letters, digits and inner hyphens; an IDN in its A-label form, `xn--...`), an
# IPv4 address or a bracketed IPv6 address, and nothing else.
_AUTHORITY: Final = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]*)(?::(?P<port>[0-9]{1,5}))?")
_LABEL: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_MAX_HOST_CHARS: Final = 253
_MAX_PORT: Final = 65535


def split_authority(text: str) -> tuple[str, str | None] | None:
    """The host and the port's digits of `name[:port]` as written (the host not yet validated, the port not yet
    bounded); None when it has no such shape. Callers that word the two failures apart read it; others, parse_host."""
    match = _AUTHORITY.fullmatch(text)
    if match is None:
        return None
    return match["host"], match["port"]


def is_host(name: str) -> bool:
    """Whether `name` is a DNS name, an IPv4 address or a bracketed IPv6 address (the rules above)."""
    if name.startswith("["):
        return name.endswith("]") and _is_address(name[1:-1], ipaddress.IPv6Address)
    labels = name.split(".")
    if len(name) > _MAX_HOST_CHARS or not all(_LABEL.fullmatch(label) for label in labels):
        return False
    # A name whose last label is all digits is read as an IPv4 address (WHATWG URL): then it must be a valid one.
    return not labels[-1].isdigit() or _is_address(name, ipaddress.IPv4Address)


def is_port(digits: str) -> bool:
    return 1 <= int(digits) <= _MAX_PORT


def parse_host(text: str) -> tuple[str, int | None] | None:
    """The name (lower-cased; an IPv6 address in its brackets) and port of a Host header or authority; None when it
    is not a valid host with an optional port of 1-65535."""
    parts = split_authority(text)
    if parts is None:
        return None
    name, port = parts
    if not is_host(name) or (port is not None and not is_port(port)):
        return None
    return name.lower(), int(port) if port is not None else None


def is_loopback(name: str) -> bool:
    """Whether a host name or address (IPv6 with or without brackets) is this machine's loopback."""
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


# NAT64's well-known prefix (RFC 6052): its addresses carry an IPv4 address in their last 32 bits.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def is_public_address(address: str) -> bool:
    """Whether an IP address is one of the public internet's: not private, loopback, link-local, shared, multicast,
    reserved or unspecified; an IPv6 address carrying an IPv4 one (mapped, 6to4, Teredo, NAT64) only when that one is
    public too. What a server may fetch from for anyone who names a URL (SSRF)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if not ip.is_global or ip.is_multicast:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return True
    embedded = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    if ip in _NAT64:
        embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return all(is_public_address(str(inner)) for inner in embedded if inner is not None)


def _is_address(text: str, kind: type[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True
