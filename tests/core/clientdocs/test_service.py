"""ClientDocuments (core.clientdocs.service): a document is fetched once for as long as it is trusted, then again; a
refusal is remembered for a minute, so a URL that cannot be used costs one fetch a minute however often it is
named, whatever made it unusable (an exception of the parser's or the fetcher's own included); a URL that may not be
fetched never is; fetches at once are bounded in all and per host, and one over a bound is refused at once, not
remembered."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.clientdocs.document import REFUSAL_LIFETIME, ClientDocumentError, DocumentUrl, Fetched
from core.clientdocs.service import ClientDocuments
from core.limits import MAX_DOCUMENT_FETCHES, MAX_DOCUMENT_FETCHES_PER_HOST
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


@pytest.mark.parametrize(
    "failure",
    [
        RecursionError("maximum recursion depth exceeded while decoding a JSON array"),
        OverflowError("cannot fit 'int' into an index-sized integer"),
        MemoryError(),
        RuntimeError("a bug of the fetcher's"),
    ],
)
def test_any_failure_while_reading_a_document_is_a_refusal_remembered_like_any_other(
    clock: FakeClock, failure: BaseException
) -> None:
    fetched: list[str] = []

    def failing(url: DocumentUrl) -> Fetched:
        fetched.append(url.url)
        raise failure

    documents = ClientDocuments(failing, clock)

    for _ in range(2):
        with pytest.raises(ClientDocumentError, match=f"it could not be read \\({type(failure).__name__}\\)"):
            documents.client(URL)

    assert fetched == [URL]


def test_refusals_are_kept_apart_from_documents_so_many_refused_urls_never_push_a_trusted_document_out(
    clock: FakeClock,
) -> None:
    fetcher = Documents()
    documents = ClientDocuments(fetcher, clock, max_documents=2)
    documents.client(URL)
    fetcher.refusal = "it answered 404, not 200"

    for number in range(10):
        with pytest.raises(ClientDocumentError):
            documents.client(f"https://refused{number}.example.com/client.json")

    assert name_of(documents) == "First"
    assert fetcher.fetched.count(URL) == 1


WAIT = 30  # seconds: a ceiling on every wait for another thread, never a speed claim


class HeldDocuments(Documents):
    """Documents whose fetches of a path with `/held` each wait for `release`, saying on `arrived` that one started;
    others are served at once."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Semaphore(0)
        self.release = threading.Event()

    def __call__(self, url: DocumentUrl) -> Fetched:
        if "/held" in url.target:
            self.arrived.release()
            assert self.release.wait(WAIT), "the test never released the fetch"
        return super().__call__(url)


def test_a_fetch_over_the_bound_per_host_is_refused_at_once_and_not_remembered(clock: FakeClock) -> None:
    fetcher = HeldDocuments()
    documents = ClientDocuments(fetcher, clock)
    held = [f"https://client.example.com/held{number}.json" for number in range(MAX_DOCUMENT_FETCHES_PER_HOST)]
    other = "https://client.example.com/other.json"

    with ThreadPoolExecutor(max_workers=len(held)) as pool:
        futures = [pool.submit(documents.client, url) for url in held]
        for _ in held:
            assert fetcher.arrived.acquire(timeout=WAIT)
        with pytest.raises(ClientDocumentError, match="too many client documents are being fetched; retry"):
            documents.client(other)
        elsewhere = documents.client("https://elsewhere.example.com/client.json")  # another host is not held up
        fetcher.release.set()
        clients = [future.result(timeout=WAIT) for future in futures]

    assert elsewhere.client_id == "https://elsewhere.example.com/client.json"
    assert [client.client_id for client in clients] == held
    assert documents.client(other).client_id == other  # the refusal was not remembered: fetched now
    assert other in fetcher.fetched


def test_a_fetch_over_the_bound_in_all_is_refused_at_once_whatever_its_host(clock: FakeClock) -> None:
    fetcher = HeldDocuments()
    documents = ClientDocuments(fetcher, clock)
    held = [f"https://client{number}.example.com/held.json" for number in range(MAX_DOCUMENT_FETCHES)]

    with ThreadPoolExecutor(max_workers=len(held)) as pool:
        futures = [pool.submit(documents.client, url) for url in held]
        for _ in held:
            assert fetcher.arrived.acquire(timeout=WAIT)
        with pytest.raises(ClientDocumentError, match="too many client documents are being fetched; retry"):
            documents.client("https://one-more.example.com/client.json")
        fetcher.release.set()
        for future in futures:
            future.result(timeout=WAIT)

    assert len(fetcher.fetched) == MAX_DOCUMENT_FETCHES
