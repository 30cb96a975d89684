"""ClientDocuments: the client a Client ID Metadata Document describes, read through a DocumentFetcher (the network,
adapters.https) and kept for its lifetime (core.clientdocs.document), a refusal for a minute, in bounded caches,
so one authorization fetches its client's document once; and the bound on fetches at once (FetchGate), so that URLs
that stall hold no more than a few of the threads every other request needs."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Protocol

from core.cache import TtlCache
from core.clientdocs.document import (
    MAX_LIFETIME,
    REFUSAL_LIFETIME,
    ClientDocumentError,
    DocumentUrl,
    Fetched,
    client_of,
    document_url,
)
from core.clock import Clock, epoch_seconds, utc_now
from core.limits import MAX_DOCUMENT_FETCHES, MAX_DOCUMENT_FETCHES_PER_HOST
from core.repository import Client

# Documents kept at once; when full the cache starts over, costing one fetch each.
MAX_DOCUMENTS: Final = 256
# Refusals kept at once, apart from the documents (so naming many refused URLs pushes no trusted document out); when
# full it starts over, costing one fetch each, which FetchGate bounds.
MAX_REFUSALS: Final = 1024
BUSY: Final = "too many client documents are being fetched; retry"


class DocumentFetcher(Protocol):
    def __call__(self, url: DocumentUrl) -> Fetched:
        """The document at `url` as its server answered it (200 only); ClientDocumentError when it cannot be read
        within the fetcher's bounds."""
        ...


class FetchGate:
    """At most `in_all` fetches at once, `per_host` of them to one host; a fetch over either bound is refused at
    once (ClientDocumentError, BUSY) rather than waiting: a wait would hold its request's thread too."""

    def __init__(self, in_all: int = MAX_DOCUMENT_FETCHES, per_host: int = MAX_DOCUMENT_FETCHES_PER_HOST) -> None:
        self._in_all = in_all
        self._per_host = per_host
        self._fetching: Counter[str] = Counter()
        self._lock = threading.Lock()

    @contextmanager
    def admitted(self, where: DocumentUrl) -> Iterator[None]:
        with self._lock:
            if self._fetching.total() >= self._in_all or self._fetching[where.host] >= self._per_host:
                raise ClientDocumentError(where.url, BUSY)
            self._fetching[where.host] += 1
        try:
            yield
        finally:
            with self._lock:
                self._fetching[where.host] -= 1
                if not self._fetching[where.host]:
                    del self._fetching[where.host]


@dataclass(frozen=True)
class _Refusal:
    reason: str  # why there is no client (a fresh error is raised each time: one raised again keeps its traceback)
    until: int


class ClientDocuments:
    def __init__(
        self,
        fetch: DocumentFetcher,
        clock: Clock = utc_now,
        max_documents: int = MAX_DOCUMENTS,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._gate = FetchGate()
        self._clients: TtlCache[str, Client] = TtlCache(MAX_LIFETIME, max_documents, clock)
        self._refusals: TtlCache[str, _Refusal] = TtlCache(REFUSAL_LIFETIME, MAX_REFUSALS, clock)

    def forget(self) -> None:
        """Fetch every document again on its next use."""
        self._clients.clear()
        self._refusals.clear()

    def client(self, url: str) -> Client:
        """The client the document at `url` describes (its `expires_at`: until when it is trusted without a fetch);
        ClientDocumentError when the URL or its document cannot be used, it cannot be fetched, or too many documents
        are being fetched (FetchGate: that refusal alone is not remembered)."""
        where = document_url(url)
        now = epoch_seconds(self._clock())
        client = self._clients.get(url)
        if client is not None and now < client.expires_at:
            return client
        refusal = self._refusals.get(url)
        if refusal is not None and now < refusal.until:
            raise ClientDocumentError(url, refusal.reason)
        with self._gate.admitted(where):
            client = self._read(where, now)
        self._clients.put(url, client)
        return client

    def _read(self, where: DocumentUrl, now: int) -> Client:
        """The client the document describes; every failure to read it is a ClientDocumentError, remembered."""
        try:
            return client_of(where.url, self._fetch(where), now)
        except ClientDocumentError as refused:
            reason = refused.reason
        # Anyone may name any URL and serve anything there: whatever a parser or the fetcher raises on what it read
        # is this document's refusal (remembered like any other), never the request's 500.
        except Exception as exc:  # noqa: BLE001
            reason = f"it could not be read ({type(exc).__name__})"
        self._refusals.put(where.url, _Refusal(reason, now + int(REFUSAL_LIFETIME.total_seconds())))
        raise ClientDocumentError(where.url, reason)
