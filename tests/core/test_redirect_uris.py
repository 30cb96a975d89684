"""The redirect URIs a client may register (core.tokens): a host is a DNS name, an IPv4 address or a bracketed IPv6
address, with a port of 1-65535 and no user information; and the origin the consent page's policy names is rebuilt
from those validated parts."""

from __future__ import annotations

import pytest

from core.errors import InvalidInputError
from core.tokens import check_redirect_uri, redirect_origin, redirect_uri_registered


@pytest.mark.parametrize(
    ("uri", "origin"),
    [
        ("https://claude.ai/api/mcp/auth_callback", "https://claude.ai"),
        ("https://Example.COM:8443/cb?x=1;y=2", "https://example.com:8443"),
        ("https://xn--bcher-kva.example/cb", "https://xn--bcher-kva.example"),
        ("https://a-b.c-d.example/cb", "https://a-b.c-d.example"),
        ("https://192.0.2.1/cb", "https://192.0.2.1"),
        ("https://[2001:db8::1]:65535/cb", "https://[2001:db8::1]:65535"),
        ("http://127.0.0.1:53682/callback", "http://127.0.0.1:53682"),
        ("http://localhost/cb", "http://localhost"),
        ("http://[::1]/cb", "http://[::1]"),
    ],
)
def test_a_redirect_uri_with_a_valid_host_is_admitted_and_its_origin_rebuilt(uri: str, origin: str) -> None:
    assert check_redirect_uri(uri) == uri
    assert redirect_origin(uri) == origin


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("https://evil.example;sandbox/cb", "must name its host"),
        ("https://evil.example,x/cb", "must name its host"),
        ("https://evil.example'x/cb", "must name its host"),
        ('https://evil.example"x/cb', "must name its host"),
        ("https://*.example/cb", "must name its host"),
        ("https://a$b.example/cb", "must name its host"),
        ("https://a(b).example/cb", "must name its host"),
        ("https://a%3Bb.example/cb", "must name its host"),
        ("https://bücher.example/cb", "must name its host"),  # an IDN in its A-label form only
        ("https://under_score.example/cb", "must name its host"),
        ("https://-lead.example/cb", "must name its host"),
        ("https://trail-.example/cb", "must name its host"),
        ("https://a..b.example/cb", "must name its host"),
        ("https://trailing.dot.example./cb", "must name its host"),
        ("https://" + "a" * 64 + ".example/cb", "must name its host"),
        ("https://" + ".".join(["abcdefghi"] * 26) + "/cb", "must name its host"),
        ("https://1.2.3.999/cb", "must name its host"),
        ("https://01.2.3.4/cb", "must name its host"),
        ("https://123/cb", "must name its host"),
        ("https://[::1%25eth0]/cb", "must name its host"),
        ("https:///cb", "must name its host"),
        ("https://[192.0.2.1]/cb", "is not a URI"),
        ("https://user@example.com/cb", "must not carry user information"),
        ("https://user:pw@example.com/cb", "must not carry user information"),
        ("https://example.com:0/cb", "port of 1-65535"),
        ("https://example.com:65536/cb", "port of 1-65535"),
        ("https://example.com:/cb", "must name its host"),
        ("https://example.com:+80/cb", "must name its host"),
        ("http://example.com/cb", "https, or http on a loopback host"),
        ("myapp://callback", "https, or http on a loopback host"),
        ("https://example.com/cb#x", "must not have a fragment"),
    ],
)
def test_a_redirect_uri_whose_host_or_port_is_not_one_is_refused(uri: str, why: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        check_redirect_uri(uri)

    assert refused.value.errors[0].field == "redirect_uris"
    assert why in refused.value.errors[0].message


@pytest.mark.parametrize(
    ("requested", "registered"),
    [
        ("https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback"),
        ("http://127.0.0.1:54321/callback", "http://127.0.0.1/callback"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:54321/callback"),
        ("http://127.0.0.1:1/callback", "http://127.0.0.1:65535/callback"),
        ("http://[::1]:8080/cb?x=1", "http://[::1]/cb?x=1"),
        ("http://localhost:4000/", "http://localhost"),
        ("http://LOCALHOST:4000/cb", "http://localhost/cb"),
    ],
)
def test_a_redirect_uri_is_registered_when_equal_or_a_loopback_one_but_for_the_port(
    requested: str, registered: str
) -> None:
    assert redirect_uri_registered(requested, ["https://other.example/cb", registered])


@pytest.mark.parametrize(
    ("requested", "registered"),
    [
        ("https://claude.ai:8443/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback"),
        ("https://127.0.0.1:8443/callback", "https://127.0.0.1/callback"),
        ("http://127.0.0.1:54321/other", "http://127.0.0.1/callback"),
        ("http://127.0.0.1:54321/callback?x=2", "http://127.0.0.1/callback?x=1"),
        ("http://127.0.0.1:54321/callback", "http://[::1]/callback"),
        ("http://127.0.0.1:54321/callback", "http://localhost/callback"),
        ("http://127.0.0.1:54321/callback#x", "http://127.0.0.1/callback#x"),
        ("http://user@127.0.0.1:54321/callback", "http://user@127.0.0.1/callback"),
        ("http://evil.example:54321/callback", "http://evil.example/callback"),
        ("http://[::1:54321/callback", "http://[::1/callback"),
    ],
)
def test_only_a_loopback_http_redirect_uri_may_differ_from_the_registered_one_and_only_in_its_port(
    requested: str, registered: str
) -> None:
    assert not redirect_uri_registered(requested, [registered])
