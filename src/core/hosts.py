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


# Every entry of IANA's IPv4 Special-Purpose Address Registry, multicast and the reserved 240/4 (which holds the
# broadcast address) included. The few entries marked globally reachable (the anycast of PCP, TURN, AMT and AS112)
# are refused too: no document server lives there, and the rule stays one list.
_SPECIAL_IPV4: Final = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",  # this network
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared (carrier-grade NAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local (the cloud's instance metadata)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.31.196.0/24",  # AS112
        "192.52.193.0/24",  # AMT
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # private
        "192.175.48.0/24",  # AS112 direct delegation
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and 255.255.255.255
    )
)
# IPv6 unicast on the internet is 2000::/3 (everything else there is loopback, unspecified, an IPv4 address mapped,
# compatible or translated, NAT64, discard, unique-local, link-local, site-local or multicast); inside it, IANA's IPv6
# Special-Purpose Address Registry's entries. An address carrying an IPv4 one (6to4, Teredo, NAT64, mapped) is
# refused whatever it carries: it is reached through a relay or translator, never as itself.
_GLOBAL_UNICAST_IPV6: Final = ipaddress.IPv6Network("2000::/3")
_SPECIAL_IPV6: Final = tuple(
    ipaddress.IPv6Network(network)
    for network in (
        "2001::/23",  # IETF protocol assignments: Teredo, benchmarking, ORCHIDs, and protocol anycast
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing (SRv6) SIDs
    )
)


def is_public_address(address: str) -> bool:
    """Whether an IP address (an IPv6 one with or without brackets) is globally routable unicast: in no range of the
    IANA IPv4 and IPv6 Special-Purpose Address Registries (_SPECIAL_IPV4, _SPECIAL_IPV6), for IPv6 in 2000::/3, and
    with no zone. What a server may fetch from for anyone who names a URL (SSRF). One explicit table rather than
    ipaddress's is_global, which on Python 3.11 and 3.13 still calls ::7f00:1, ::ffff:0:7f00:1, fec0::1, every
    IPv4-mapped address of a public one, NAT64 and 192.88.99.1 global."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return not any(ip in network for network in _SPECIAL_IPV4)
    if ip.scope_id is not None or ip not in _GLOBAL_UNICAST_IPV6:
        return False
    return not any(ip in network for network in _SPECIAL_IPV6)


def _is_address(text: str, kind: type[ipaddress.IPv4Address | ipaddress.IPv6Address]) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True
