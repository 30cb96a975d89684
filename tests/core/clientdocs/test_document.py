"""The rules of a Client ID Metadata Document (core.clientdocs.document): which client id URLs may be fetched, what a
document must hold to describe a client this server serves, and how long it is trusted."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from core.clientdocs.document import (
    DEFAULT_LIFETIME,
    MAX_LIFETIME,
    MIN_LIFETIME,
    ClientDocumentError,
    Fetched,
    client_of,
    document_lifetime,
    document_url,
    is_client_id_url,
)
from core.limits import MAX_DOCUMENT_BYTES, MAX_DOCUMENT_DEPTH

URL = "https://client.example.com/oauth/client.json"
REDIRECT = "http://127.0.0.1/callback"
NOW = 1_800_000_000


@pytest.mark.parametrize(
    ("client_id", "is_url"),
    [
        (URL, True),
        ("HTTPS://client.example.com/x", True),
        ("http://client.example.com/x", True),
        ("0a1b2c3d-uuid-of-a-registration", False),
        ("https:/client.example.com", False),
        ("", False),
    ],
)
def test_a_client_id_is_a_documents_url_when_it_is_an_http_or_https_url(client_id: str, is_url: bool) -> None:
    assert is_client_id_url(client_id) is is_url


@pytest.mark.parametrize(
    ("url", "host", "port", "target", "authority"),
    [
        (URL, "client.example.com", 443, "/oauth/client.json", "client.example.com"),
        ("https://Client.Example.COM:8443/c?v=2", "client.example.com", 8443, "/c?v=2", "client.example.com:8443"),
        ("https://[2001:db8::1]/client", "[2001:db8::1]", 443, "/client", "[2001:db8::1]"),
        ("https://192.0.2.10/client", "192.0.2.10", 443, "/client", "192.0.2.10"),
    ],
)
def test_a_fetchable_client_id_url_is_read_into_its_host_port_and_target(
    url: str, host: str, port: int, target: str, authority: str
) -> None:
    where = document_url(url)

    assert (where.url, where.host, where.port, where.target, where.authority) == (url, host, port, target, authority)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://client.example.com/client.json", "must be https"),
        ("https://client.example.com", "has a path"),
        ("https://client.example.com/", "has a path"),
        ("https://client.example.com/a/../client.json", "no . or .. segment"),
        ("https://client.example.com/./client.json", "no . or .. segment"),
        ("https://client.example.com/%2E%2E/client.json", "no . or .. segment"),
        ("https://client.example.com/client.json#me", "no fragment"),
        ("https://user@client.example.com/client.json", "must be a DNS name"),
        ("https://client.example.com:0/client.json", "must be a DNS name"),
        ("https://client_example.com/client.json", "must be a DNS name"),
        ("https://client.example.com/client.json\r\nX-Injected: 1", "printable chars"),
        ("https://client.example.com/a client.json", "printable chars"),
        ("https://client.example.com/bücher.json", "printable chars"),
        ("https://client.example.com/" + "a" * 2000, "printable chars"),
        ("https://[::1/client.json", "not a URL"),
    ],
)
def test_a_client_id_url_that_may_not_be_fetched_is_refused_saying_why(url: str, why: str) -> None:
    with pytest.raises(ClientDocumentError) as refused:
        document_url(url)

    assert why in str(refused.value)


def fetched(cache_control: str | None = None, **fields: Any) -> Fetched:
    return Fetched(json.dumps({"client_id": URL, "redirect_uris": [REDIRECT], **fields}).encode(), cache_control)


def test_a_document_describes_a_public_client_with_every_scope_until_its_lifetime_ends() -> None:
    client = client_of(URL, fetched(client_name="Example", logo_uri="not even a URL"), NOW)

    assert client.client_id == URL
    assert client.expires_at == NOW + DEFAULT_LIFETIME.total_seconds()
    assert json.loads(client.metadata) == {
        "client_id": URL,
        "client_name": "Example",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "scope": "read write",
    }


def test_brackets_inside_strings_and_nesting_up_to_the_bound_are_read_as_any_document() -> None:
    nested = json.loads("[" * (MAX_DOCUMENT_DEPTH - 1) + "]" * (MAX_DOCUMENT_DEPTH - 1))  # the object is one level
    document = fetched(client_name='[{"\\' * 1000, extension=nested)

    metadata = json.loads(client_of(URL, document, NOW).metadata)

    assert metadata["client_name"] == '[{"\\' * 1000


def test_a_document_keeps_its_own_scope_grant_and_response_types_and_serves_any_keyless_method_as_none() -> None:
    document = fetched(
        scope="read",
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="private_key_jwt",
    )

    metadata = json.loads(client_of(URL, document, NOW).metadata)

    assert (metadata["scope"], metadata["grant_types"], metadata["response_types"]) == (
        "read",
        ["authorization_code"],
        ["code"],
    )
    assert metadata["token_endpoint_auth_method"] == "none"


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (Fetched(b"<html>", None), "not JSON"),
        (Fetched(b"\xff\xfe", None), "not JSON"),
        (Fetched(b"[]", None), "not a JSON object"),
        (Fetched(b" " * (MAX_DOCUMENT_BYTES + 1), None), f"larger than {MAX_DOCUMENT_BYTES} bytes"),
        (Fetched(b"[" * 16_000, None), f"nested deeper than {MAX_DOCUMENT_DEPTH} levels"),
        (Fetched(b'{"a":' * 2000 + b"1" + b"}" * 2000, None), f"nested deeper than {MAX_DOCUMENT_DEPTH} levels"),
        (fetched(extension=json.loads("[" * MAX_DOCUMENT_DEPTH + "]" * MAX_DOCUMENT_DEPTH)), "nested deeper"),
        (fetched(client_id="https://client.example.com/other.json"), "client_id must be exactly the URL"),
        (fetched(client_id=None), "client_id must be exactly the URL"),
        (fetched(redirect_uris=None), "redirect_uris must be a list of 1 to 10"),
        (fetched(redirect_uris=[]), "redirect_uris must be a list of 1 to 10"),
        (fetched(redirect_uris=[REDIRECT] * 11), "redirect_uris must be a list of 1 to 10"),
        (fetched(redirect_uris=[1]), "redirect_uris must be a list of 1 to 10"),
        (fetched(redirect_uris="https://a.example/cb"), "redirect_uris must be a list of 1 to 10"),
        (fetched(redirect_uris=["http://evil.example/cb"]), "https, or http on a loopback host"),
        (fetched(redirect_uris=["myapp://callback"]), "https, or http on a loopback host"),
        (fetched(redirect_uris=["https://a.example/cb#x"]), "must not have a fragment"),
        (fetched(client_secret="s3cret"), "must not carry a client secret"),
        (fetched(client_secret_expires_at=0), "must not carry a client secret"),
        (fetched(token_endpoint_auth_method="client_secret_basic"), "shared secret"),
        (fetched(token_endpoint_auth_method="client_secret_post"), "shared secret"),
        (fetched(client_name=["Example"]), "client_name must be a string"),
        (fetched(client_name="Example\ud800"), "its client_name holds a lone surrogate"),
        (fetched(scope="read\udfff"), "its scope holds a lone surrogate"),
        (fetched(grant_types=["\ud800"]), "its grant_types holds a lone surrogate"),
        (fetched(redirect_uris=["https://a.example/\ud800"]), "its redirect_uris holds a lone surrogate"),
        (fetched(scope=7), "scope must be a string"),
        (fetched(grant_types="authorization_code"), "grant_types must be a list of strings"),
    ],
)
def test_a_document_that_describes_no_client_this_server_serves_is_refused_saying_why(
    document: Fetched, why: str
) -> None:
    with pytest.raises(ClientDocumentError) as refused:
        client_of(URL, document, NOW)

    assert why in str(refused.value)
    assert str(refused.value).startswith(f"the client metadata document at {URL} cannot be used: ")


@pytest.mark.parametrize(
    ("cache_control", "lifetime"),
    [
        (None, DEFAULT_LIFETIME),
        ("public", DEFAULT_LIFETIME),
        ("max-age=7200", timedelta(hours=2)),
        ("public, MAX-AGE=600, must-revalidate", timedelta(minutes=10)),
        ("max-age=0", MIN_LIFETIME),
        ("max-age=60", MIN_LIFETIME),
        ("no-store", MIN_LIFETIME),
        ("no-cache, max-age=7200", MIN_LIFETIME),
        ("max-age=31536000", MAX_LIFETIME),
        ("max-age=99999999999999999999", DEFAULT_LIFETIME),
        ("max-age=-5", DEFAULT_LIFETIME),
        ("max-age=²", DEFAULT_LIFETIME),
    ],
)
def test_a_document_is_trusted_for_its_max_age_within_bounds_else_an_hour(
    cache_control: str | None, lifetime: timedelta
) -> None:
    assert document_lifetime(cache_control) == lifetime
