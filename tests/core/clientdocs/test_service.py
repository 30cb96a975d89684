"""ClientDocuments (core.clientdocs.service): a document is fetched once for as long as it is trusted, then again; a
refusal is remembered for a minute, so a URL that cannot be used costs one fetch a minute however often it is
named; a URL that may not be fetched never is."""

from __future__ import annotations

import json

import pytest

from core.clientdocs.document import REFUSAL_LIFETIME, ClientDocumentError, DocumentUrl, Fetched
from core.clientdocs.service import ClientDocuments
from tests.conftest import FakeClock

URL = "https://client.example.com/oauth/client.json"


class Documents:
    """A DocumentFetcher that serves `body` (or refuses with `refusal`) and counts what it was asked."""

    def __init__(self, cache_control: str | None = "max-age=600") -> None:
        self.cache_control = cache_control
        self.refusal: str | None = None
        self.name = "First"
        self.fetched: list[str] = []

    def __call__(self, url: DocumentUrl) -> Fetched:
        self.fetched.append(url.url)
        if self.refusal is not None:
            raise ClientDocumentError(url.url, self.refusal)
        body = {"client_id": url.url, "client_name": self.name, "redirect_uris": ["https://client.example.com/cb"]}
        return Fetched(json.dumps(body).encode(), self.cache_control)


@pytest.fixture
def clock() -> FakeClock:
    clock = FakeClock()
    clock.freeze()
    return clock


def name_of(documents: ClientDocuments) -> str:
    name: str = json.loads(documents.client(URL).metadata)["client_name"]
    return name


def test_a_document_is_fetched_once_while_it_is_trusted_and_again_after(clock: FakeClock) -> None:
    fetcher = Documents(cache_control="max-age=600")
    documents = ClientDocuments(fetcher, clock)
    start = int(clock.now.timestamp())
    first = documents.client(URL)
    fetcher.name = "Second"

    again = [name_of(documents) for _ in range(3)]
    clock.advance(seconds=599)
    still = name_of(documents)
    clock.advance(seconds=1)
    renewed = name_of(documents)

    assert first.expires_at == start + 600
    assert (again, still, renewed) == (["First"] * 3, "First", "Second")
    assert fetcher.fetched == [URL, URL]


def test_a_refusal_is_remembered_for_a_minute_then_the_document_is_fetched_again(clock: FakeClock) -> None:
    fetcher = Documents()
    fetcher.refusal = "it was not served within 5 s"
    documents = ClientDocuments(fetcher, clock)

    for _ in range(3):
        with pytest.raises(ClientDocumentError, match="not served within 5 s"):
            documents.client(URL)
    fetcher.refusal = None
    clock.advance(seconds=REFUSAL_LIFETIME.total_seconds())

    assert name_of(documents) == "First"
    assert fetcher.fetched == [URL, URL]


def test_a_url_that_may_not_be_fetched_is_refused_without_a_fetch(clock: FakeClock) -> None:
    fetcher = Documents()
    documents = ClientDocuments(fetcher, clock)

    with pytest.raises(ClientDocumentError, match="must be https"):
        documents.client("http://client.example.com/oauth/client.json")

    assert fetcher.fetched == []


def test_the_cache_holds_a_bounded_number_of_documents_and_starts_over_when_full(clock: FakeClock) -> None:
    fetcher = Documents()
    documents = ClientDocuments(fetcher, clock, max_documents=2)
    urls = [f"https://client{number}.example.com/client.json" for number in range(3)]

    for url in [*urls[:2], *urls[:2]]:
        documents.client(url)
    kept = len(fetcher.fetched)
    documents.client(urls[2])  # a third while two are held: the cache starts over
    documents.client(urls[0])

    assert kept == 2
    assert fetcher.fetched == [*urls[:2], urls[2], urls[0]]


def test_after_forget_a_document_still_trusted_is_fetched_again(clock: FakeClock) -> None:
    fetcher = Documents(cache_control="max-age=600")
    documents = ClientDocuments(fetcher, clock)
    name_of(documents)
    fetcher.name = "Second"

    documents.forget()

    assert name_of(documents) == "Second"
    assert len(fetcher.fetched) == 2
