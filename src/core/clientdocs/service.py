"""ClientDocuments: the client a Client ID Metadata Document describes, read through a DocumentFetcher (the network,
core.clientdocs.https) and kept for its lifetime (core.clientdocs.document), a refusal for a minute, in a bounded
cache, so one authorization fetches its client's document once."""

from __future__ import annotations

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
from core.repository import Client

# Documents (and refusals) kept at once; when full the cache starts over, costing one fetch each.
MAX_DOCUMENTS: Final = 256


class DocumentFetcher(Protocol):
    def __call__(self, url: DocumentUrl) -> Fetched:
        """The document at `url` as its server answered it (200 only); ClientDocumentError when it cannot be read
        within the fetcher's bounds."""
        ...


@dataclass(frozen=True)
class _Known:
    client: Client | None
    refusal: str  # why there is no client (a fresh error is raised each time: one raised again keeps its traceback)
    until: int


class ClientDocuments:
    def __init__(self, fetch: DocumentFetcher, clock: Clock = utc_now, max_documents: int = MAX_DOCUMENTS) -> None:
        self._fetch = fetch
        self._clock = clock
        self._cache: TtlCache[str, _Known] = TtlCache(MAX_LIFETIME, max_documents, clock)

    def forget(self) -> None:
        """Fetch every document again on its next use."""
        self._cache.clear()

    def client(self, url: str) -> Client:
        """The client the document at `url` describes (its `expires_at`: until when it is trusted without a fetch);
        ClientDocumentError when the URL or its document cannot be used, or it cannot be fetched."""
        where = document_url(url)
        now = epoch_seconds(self._clock())
        known = self._cache.get(url)
        if known is None or known.until <= now:
            known = self._read(where, now)
            self._cache.put(url, known)
        if known.client is None:
            raise ClientDocumentError(url, known.refusal)
        return known.client

    def _read(self, where: DocumentUrl, now: int) -> _Known:
        try:
            client = client_of(where.url, self._fetch(where), now)
        except ClientDocumentError as refusal:
            return _Known(None, refusal.reason, now + int(REFUSAL_LIFETIME.total_seconds()))
        return _Known(client, "", client.expires_at)
