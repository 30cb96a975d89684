"""The one host reading (core.hosts): a Host header or authority is a DNS name, an IPv4 address or a bracketed IPv6
address with an optional port of 1-65535, and loopback names are told from the rest."""

from __future__ import annotations

import ipaddress

import pytest

from core.hosts import is_loopback, is_public_address, parse_host


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("localhost", ("localhost", None)),
        ("LocalHost:8000", ("localhost", 8000)),
        ("Example.COM:8443", ("example.com", 8443)),
        ("xn--bcher-kva.example", ("xn--bcher-kva.example", None)),
        ("a-b.c-d.example:1", ("a-b.c-d.example", 1)),
        ("127.0.0.1:65535", ("127.0.0.1", 65535)),
        ("[::1]", ("[::1]", None)),
        ("[2001:DB8::1]:443", ("[2001:db8::1]", 443)),
        ("[::ffff:192.0.2.1]:80", ("[::ffff:192.0.2.1]", 80)),
    ],
)
def test_a_valid_host_is_read_as_its_lower_cased_name_and_port(text: str, parsed: tuple[str, int | None]) -> None:
    assert parse_host(text) == parsed


@pytest.mark.parametrize(
    "text",
    [
        "",
        ":8000",
        "example.com:",
        "example.com:0",
        "example.com:65536",
        "example.com:123456",
        "example.com:+80",
        "example.com:80:80",
        "user@example.com",
        "evil.example;sandbox",
        "evil.example'x",
        "a%3Bb.example",
        "bücher.example",
        "under_score.example",
        "-lead.example",
        "trail-.example",
        "a..b.example",
        "trailing.dot.example.",
        "a" * 64 + ".example",
        ".".join(["abcdefghi"] * 26),
        "1.2.3.999",
        "01.2.3.4",
        "123",
        "::1",
        "[::1",
        "[::g]",
        "[::1%25eth0]",
        "[127.0.0.1]",
    ],
)
def test_a_malformed_host_is_none(text: str) -> None:
    assert parse_host(text) is None


@pytest.mark.parametrize(
    ("name", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("[0:0:0:0:0:0:0:1]", True),
        ("0.0.0.0", False),
        ("192.0.2.1", False),
        ("[2001:db8::1]", False),
        ("localhost.example.com", False),
        ("", False),
    ],
)
def test_loopback_names_are_told_from_the_rest(name: str, loopback: bool) -> None:
    assert is_loopback(name) is loopback


def test_every_parsed_loopback_host_header_is_loopback() -> None:
    for text in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
        parsed = parse_host(text)
        assert parsed is not None
        assert is_loopback(parsed[0])


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700::1111", True),
        ("[2606:4700::1111]", True),
        ("2001:200::1", True),  # the first global unicast block after 2001::/23
        ("2003::1", True),
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # the cloud's instance metadata
        ("100.64.0.1", False),  # carrier-grade NAT
        ("0.0.0.0", False),
        ("192.0.2.1", False),  # documentation
        ("224.0.0.1", False),
        ("239.255.255.250", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("ff02::1", False),
        ("2001:db8::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:127.0.0.1", False),
        ("2002:a00:1::1", False),  # 6to4 of 10.0.0.1
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
        ("fe80::1%eth0", False),
        ("2606:4700::1111%eth0", False),  # a zone names an interface of this machine: no internet address has one
        ("example.com", False),
        ("", False),
    ],
)
def test_only_an_address_of_the_public_internet_is_public(address: str, public: bool) -> None:
    assert is_public_address(address) is public


@pytest.mark.parametrize(
    "address",
    [
        "::7f00:1",  # IPv4-compatible 127.0.0.1 (::/96, deprecated)
        "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1 (::ffff:0:0:0/96)
        "fec0::1",  # site-local (fec0::/10, deprecated)
        "::ffff:93.184.215.14",  # IPv4-mapped, even of a public IPv4 address: a fetch reaches an IPv4 host by IPv4
        "64:ff9b::5db8:d70e",  # NAT64 of 93.184.215.14: the translator is no host to fetch from
    ],
)
def test_the_addresses_of_issue_38_and_every_ipv6_address_carrying_an_ipv4_one_are_not_public(address: str) -> None:
    assert is_public_address(address) is False


# Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries, and the IPv6 space outside global unicast
# (2000::/3): each one's first and last address is refused.
SPECIAL_PURPOSE = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.31.196.0/24",
    "192.52.193.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "192.175.48.0/24",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "::/128",
    "::1/128",
    "::/96",
    "::ffff:0:0/96",
    "::ffff:0:0:0/96",
    "64:ff9b::/96",
    "64:ff9b:1::/48",
    "100::/64",
    "2001::/23",
    "2001::/32",
    "2001:2::/48",
    "2001:10::/28",
    "2001:20::/28",
    "2001:db8::/32",
    "2002::/16",
    "3fff::/20",
    "5f00::/16",
    "fc00::/7",
    "fe80::/10",
    "fec0::/10",
    "ff00::/8",
    "::/3",
    "4000::/2",
    "8000::/1",
]


@pytest.mark.parametrize("network", SPECIAL_PURPOSE)
def test_no_address_of_a_special_purpose_range_is_public(network: str) -> None:
    block = ipaddress.ip_network(network)

    assert (is_public_address(str(block[0])), is_public_address(str(block[-1]))) == (False, False)


@pytest.mark.parametrize(
    "address",
    ["9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "198.20.0.0"],
)
def test_an_address_just_outside_a_special_purpose_range_is_public(address: str) -> None:
    assert is_public_address(address) is True
