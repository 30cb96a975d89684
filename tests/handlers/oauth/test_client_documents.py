"""Client ID Metadata Documents at the door, in process: the `mcp` SDK's client, given the URL of its metadata
document, connects by that URL alone (no registration), through the consent page, to tools; the document is fetched
once for the whole flow, from a real https server on 127.0.0.1 that only the test-only CA setting lets through. A
document that cannot be used is answered 400 `invalid_client` saying why, at /authorize and at /token, never a 500
and never logged as the SDK's unexpected error."""

from __future__ import annotations

import html
import logging
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client

from adapters.https import HttpsDocumentFetcher
from adapters.memory import InMemoryGrantRepository
from core.clientdocs.document import ClientDocumentError
from core.clientdocs.service import ClientDocuments
from core.grants import GrantService
from core.keys import KeyService
from core.limits import MAX_CLIENT_NAME_CHARS
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.bootstrap import Settings, client_documents
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.document_server import Answer, DocumentServer, document_server
from tests.handlers.oauth.flow import REDIRECT_URI, MemoryTokenStorage, Person, client_metadata, pkce
from tests.handlers.oauth.test_oauth import MCP_URL, ORIGIN, authorization_url, registered, token_request

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with document_server(tmp_path_factory.mktemp("client-documents")) as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime.now(UTC))  # the SDK's token handler checks a code's expiry by the wall clock


@pytest.fixture
def grant_store() -> InMemoryGrantRepository:
    return InMemoryGrantRepository()


def door(memory_service: MemoryService, key_service: KeyService, grants: GrantService) -> MCPEndpoint:
    keys = key_authenticator(key_service)
    return create_endpoint(
        create_server(memory_service, keys, version="test"), authenticate=keys, oauth=OAuthServer(grants)
    )


@pytest.fixture
def endpoint(
    memory_service: MemoryService,
    key_service: KeyService,
    grant_store: InMemoryGrantRepository,
    clock: FakeClock,
    documents: DocumentServer,
) -> MCPEndpoint:
    fetcher = HttpsDocumentFetcher(test_loopback_ca=documents.ca_file)
    grants = GrantService(grant_store, key_service, clock, documents=ClientDocuments(fetcher, clock))
    return door(memory_service, key_service, grants)


async def test_the_sdk_client_connects_by_the_url_of_its_metadata_document_without_registering(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    alice_key: str,
    documents: DocumentServer,
    grant_store: InMemoryGrantRepository,
) -> None:
    url = documents.document("/flow/client.json", client_name="Documented Client", redirect_uris=[REDIRECT_URI])
    person = Person(browser, "alice", alice_key)
    storage = MemoryTokenStorage()
    http.auth = OAuthClientProvider(
        server_url=MCP_URL,
        client_metadata=client_metadata(token_endpoint_auth_method="none"),
        storage=storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
        client_metadata_url=url,
    )

    async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
        created = await client.call_tool("create_memory", {"content": "The user names clients by URL"})

    assert not created.is_error, created
    assert storage.client_info is not None
    assert storage.client_info.client_id == url
    assert grant_store.clients == {}  # nothing registered
    consent = person.pages[0].text
    assert "Documented Client (127.0.0.1)" in consent  # the name anyone may publish, and whose document it is
    assert documents.requested.count("/flow/client.json") == 1  # one fetch for /authorize, the page and /token


async def test_the_authorization_server_metadata_says_client_id_metadata_documents_are_read(
    http: httpx2.AsyncClient, memory_service: MemoryService, key_service: KeyService
) -> None:
    without = door(memory_service, key_service, GrantService(InMemoryGrantRepository(), key_service))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=without), base_url=ORIGIN) as plain:
        unsupported = (await plain.get("/.well-known/oauth-authorization-server")).json()

    supported = (await http.get("/.well-known/oauth-authorization-server")).json()

    assert supported["client_id_metadata_document_supported"] is True
    assert "client_id_metadata_document_supported" not in unsupported


@pytest.mark.parametrize(
    ("path", "fields", "why"),
    [
        ("/refused/other.json", {"client_id": "https://client.example.com/c.json"}, "exactly the URL"),
        ("/refused/evil.json", {"redirect_uris": ["http://evil.example/cb"]}, "https, or http on a loopback host"),
        ("/refused/none.json", {"redirect_uris": None}, "redirect_uris must be a list"),
        ("/refused/secret.json", {"client_secret": "s"}, "must not carry a client secret"),
    ],
)
async def test_a_document_that_describes_no_usable_client_is_refused_at_authorize_saying_why(
    browser: httpx2.AsyncClient,
    documents: DocumentServer,
    caplog: pytest.LogCaptureFixture,
    path: str,
    fields: dict[str, Any],
    why: str,
) -> None:
    url = documents.document(path, **({"redirect_uris": [REDIRECT_URI]} | fields))

    answer = await browser.get(authorization_url(url, pkce()[1]))

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_client"
    assert why in answer.json()["error_description"]
    assert "location" not in answer.headers
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (Answer(status=302, headers={"Location": "https://127.0.0.1/elsewhere.json"}), "redirect (302)"),
        (Answer(b" " * (16 * 1024 + 1)), "larger than 16384 bytes"),
        (Answer(b"<html>", headers={"Content-Type": "text/html"}), "not JSON"),
    ],
)
async def test_a_document_its_server_will_not_serve_within_bounds_is_refused_at_authorize(
    browser: httpx2.AsyncClient, documents: DocumentServer, answer: Answer, why: str
) -> None:
    url = documents.serve(f"/bounds/{why.split()[0]}.json", answer)

    refused = await browser.get(authorization_url(url, pkce()[1]))

    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_client")
    assert why in refused.json()["error_description"]


@pytest.mark.parametrize(
    ("client_id", "why"),
    [
        ("http://127.0.0.1:1/client.json", "must be https"),
        ("https://10.0.0.1/client.json", "not a public address"),
        ("https://client.example.com/", "has a path"),
    ],
)
async def test_a_client_id_url_that_may_not_be_fetched_is_refused_at_authorize_and_at_token(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, client_id: str, why: str
) -> None:
    authorized = await browser.get(authorization_url(client_id, pkce()[1]))
    exchanged = await token_request(
        http, grant_type="authorization_code", client_id=client_id, code="amc_x", code_verifier="v" * 43
    )

    for answer in (authorized, exchanged):
        assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
        assert why in answer.json()["error_description"]
        assert answer.headers["cache-control"] == "no-store"


async def test_without_the_test_only_ca_setting_a_loopback_document_server_is_refused(
    memory_service: MemoryService, key_service: KeyService, documents: DocumentServer
) -> None:
    url = documents.document("/production/client.json", redirect_uris=[REDIRECT_URI])
    grants = GrantService(InMemoryGrantRepository(), key_service, documents=ClientDocuments(HttpsDocumentFetcher()))
    production = door(memory_service, key_service, grants)

    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=production), base_url=ORIGIN) as browser:
        answer = await browser.get(authorization_url(url, pkce()[1]))

    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert "resolves to 127.0.0.1, which is not a public address" in answer.json()["error_description"]
    assert "/production/client.json" not in documents.requested


def test_the_composition_root_lets_a_loopback_document_server_through_only_when_the_test_only_setting_names_its_ca(
    documents: DocumentServer,
) -> None:
    url = documents.document("/settings/client.json", redirect_uris=[REDIRECT_URI])
    deployed = client_documents(Settings.from_env({}))
    tested = client_documents(Settings.from_env({"TEST_ONLY_CLIENT_METADATA_CA": documents.ca_file}))

    with pytest.raises(ClientDocumentError, match="which is not a public address"):
        deployed.client(url)

    assert tested.client(url).client_id == url
    assert documents.requested.count("/settings/client.json") == 1


async def ask_each_endpoint(http: httpx2.AsyncClient, browser: httpx2.AsyncClient, url: str) -> list[httpx2.Response]:
    """What /authorize, /token, /consent and /revoke answer a request naming `url` as its client."""
    challenge = pkce()[1]
    consent = {"client_id": url, "redirect_uri": REDIRECT_URI, "code_challenge": challenge, "scope": "read write"}
    return [
        await browser.get(authorization_url(url, challenge)),
        await token_request(http, grant_type="authorization_code", client_id=url, code="amc_x", code_verifier="v" * 43),
        await browser.get("/consent", params=consent),
        await http.post("/revoke", data={"client_id": url, "token": "amt_x"}),
    ]


UNREADABLE = {
    "nested": Answer(b"[" * 16_000, headers={"Content-Type": "application/json"}),
    "chunked": Answer(
        raw=b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 40 + b"\r\n{}\r\n0\r\n\r\n"
    ),
}


@pytest.mark.parametrize(("kind", "why"), [("nested", "nested deeper than 32 levels"), ("chunked", "whole HTTP")])
async def test_a_document_no_parser_can_read_is_invalid_client_at_every_endpoint_and_fetched_once(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    documents: DocumentServer,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    why: str,
) -> None:
    url = documents.serve(f"/unreadable/{kind}.json", UNREADABLE[kind])

    answers = await ask_each_endpoint(http, browser, url)

    for answer in answers:
        assert (answer.status_code, answer.headers["content-type"]) == (400, "application/json"), answer.text
        assert answer.json()["error"] == "invalid_client"
        assert why in answer.json()["error_description"]
    assert documents.requested.count(f"/unreadable/{kind}.json") == 1  # the refusal is remembered
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


async def test_registration_reads_no_document_even_when_the_metadata_names_one(
    http: httpx2.AsyncClient, documents: DocumentServer
) -> None:
    url = documents.serve("/registering/client.json", UNREADABLE["nested"])

    metadata = client_metadata().model_dump(mode="json", exclude_none=True)

    answer = await http.post("/register", json={**metadata, "client_id": url})

    assert answer.status_code == 201, answer.text
    assert answer.json()["client_id"] != url
    assert "/registering/client.json" not in documents.requested


async def test_a_document_server_that_stalls_is_invalid_client_once_the_configured_deadline_passes(
    memory_service: MemoryService, key_service: KeyService, documents: DocumentServer
) -> None:
    release = threading.Event()
    url = documents.serve("/stalled/client.json", Answer(b"{}", hold=release))
    fetcher = HttpsDocumentFetcher(timeout_seconds=0.5, test_loopback_ca=documents.ca_file)
    grants = GrantService(InMemoryGrantRepository(), key_service, documents=ClientDocuments(fetcher))
    stalling = door(memory_service, key_service, grants)

    try:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=stalling), base_url=ORIGIN) as browser:
            answer = await browser.get(authorization_url(url, pkce()[1]))
        held = documents.holding
    finally:
        release.set()

    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert "it was not served within 0.5 s" in answer.json()["error_description"]
    assert held == 1  # answered while the server still held the document back


async def test_a_document_whose_text_holds_a_lone_surrogate_is_invalid_client_at_authorize(
    browser: httpx2.AsyncClient, documents: DocumentServer
) -> None:
    url = documents.document("/surrogate/client.json", client_name="Lone\ud800", redirect_uris=[REDIRECT_URI])

    answer = await browser.get(authorization_url(url, pkce()[1]))

    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert "its client_name holds a lone surrogate" in answer.json()["error_description"]


def shown_names(page: httpx2.Response) -> tuple[str, str]:
    """The consent page's title and the client as its text names it, as a browser reads them (entities decoded)."""
    title = re.search(r"<title>(.*?)</title>", page.text, re.DOTALL)
    named = re.search(r"<p><strong>(.*?)</strong> asks to use", page.text, re.DOTALL)
    assert title is not None, page.text
    assert named is not None, page.text
    return html.unescape(title[1]), html.unescape(named[1])


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Good App\u202e\u2066moc.elgoog", "Good Appmoc.elgoog"),  # bidi overrides and isolates: the host stays last
        ("Good\u200f\u200e\u061c\u202a\u202b\u202c\u202d\u2067\u2068\u2069 App", "Good App"),
        ("A\x00B\x1b[31mC\x7f\x9b", "AB[31mC"),  # NUL, ESC and the other controls
        ("Line\nbreak\u2028and\u2029paragraph\tand  spaces ", "Line break and paragraph and spaces"),
        ("Zero\u200bwidth\ufeff and tag\U000e0041 characters", "Zerowidth and tag characters"),
        ("x" * 15_000, "x" * (MAX_CLIENT_NAME_CHARS - 1) + "\u2026"),
        ("\u202e\x00 \u200f", "An unnamed application"),
        ("\u05e9\u05dc\u05d5\u05dd 1", "\u2068\u05e9\u05dc\u05d5\u05dd 1\u2069"),  # right-to-left: isolated by us
    ],
)
async def test_the_consent_page_shows_a_documents_name_bounded_without_controls_and_its_host_last(
    browser: httpx2.AsyncClient, documents: DocumentServer, name: str, shown: str
) -> None:
    path = f"/named/{abs(hash(name))}.json"
    url = documents.document(path, client_name=name, redirect_uris=[REDIRECT_URI])
    sent = await browser.get(authorization_url(url, pkce()[1]))
    assert sent.status_code == 302, sent.text

    page = await browser.get(sent.headers["location"])

    assert page.status_code == 200, page.text
    assert shown_names(page) == (f"Allow {shown} (127.0.0.1) to use your memories?", f"{shown} (127.0.0.1)")


async def test_the_consent_page_shows_a_registered_clients_name_by_the_same_rule(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient
) -> None:
    client_id = await registered(http, client_name="Claude\u202e edoc\x1b" + "!" * 200)
    sent = await browser.get(authorization_url(client_id, pkce()[1]))

    page = await browser.get(sent.headers["location"])

    shown = "Claude edoc" + "!" * (MAX_CLIENT_NAME_CHARS - len("Claude edoc") - 1) + "\u2026"
    assert shown_names(page) == (f"Allow {shown} to use your memories?", shown)
