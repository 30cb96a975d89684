"""The one host reading (core.hosts): a Host header or authority is a DNS name, an IPv4 address or a bracketed IPv6
address with an optional port of 1-65535, and loopback names are told from the rest."""

from __future__ import annotations

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
        ("::ffff:93.184.215.14", True),
        ("64:ff9b::5db8:d70e", True),  # NAT64 of 93.184.215.14
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
        ("example.com", False),
        ("", False),
    ],
)
def test_only_an_address_of_the_public_internet_is_public(address: str, public: bool) -> None:
    assert is_public_address(address) is public
