"""The memory console: static files (static/), the settings they read from the core (config.json), so the page
names the same types, statuses, sorts and tags the API checks, and the routes the HTTP door serves them at (/console/).

No build step and nothing from elsewhere: the page loads only its own files and talks only to the JSON API. Every
answer carries a strict Content-Security-Policy (no inline script or style, no framing) and is revalidated on each
use (`no-cache` with an ETag), so a deploy is seen at once and an unchanged file costs a 304. A browser that accepts
gzip (every one does) is sent each file compressed once at start-up: API Gateway's HTTP APIs do not compress, and a
first visit then downloads about a third of the files' bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from core.contract import SortKey
from core.limits import CONTENT_MAX_CHARS, DEFAULT_LIMIT, MAX_LIMIT
from core.model import MEMORY_TYPES, STANDARD_TAGS, Status, WritableStatus
from core.recall.lexical import STOP_WORDS
from handlers.problem import http_problem

CONSOLE_PATH: Final = "/console"
STATIC: Final = Path(__file__).parent / "static"
CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@dataclass(frozen=True)
class _Body:
    """One representation of a file: its bytes and their ETag (each encoding has its own, as RFC 9110 asks)."""

    data: bytes
    etag: str


def _body(data: bytes) -> _Body:
    return _Body(data, f'"{hashlib.sha256(data).hexdigest()[:32]}"')


@dataclass(frozen=True)
class _File:
    plain: _Body
    gzipped: _Body
    content_type: str

    def body(self, accept_encoding: str) -> tuple[_Body, dict[str, str]]:
        """The representation a request's Accept-Encoding asks for, and the headers that say which it is."""
        if _accepts_gzip(accept_encoding):
            return self.gzipped, {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return self.plain, {"Vary": "Accept-Encoding"}


def _file(data: bytes, suffix: str) -> _File:
    # mtime=0: the same bytes give the same compressed bytes, so the ETag stays the same across start-ups.
    return _File(_body(data), _body(gzip.compress(data, compresslevel=9, mtime=0)), CONTENT_TYPES[suffix])


def _accepts_gzip(accept_encoding: str) -> bool:
    """Whether `gzip` (or `*`) is listed without `q=0` (RFC 9110, 12.5.3)."""
    for entry in accept_encoding.lower().split(","):
        coding, *parameters = (part.strip() for part in entry.split(";"))
        if coding in ("gzip", "*"):
            quality = next((parameter[2:] for parameter in parameters if parameter.startswith("q=")), "1")
            try:
                return float(quality) > 0
            except ValueError:
                return False
    return False


class Console:
    """The console's files, read once, and config.json for a service whose deleted memories stay restorable for
    `retention_days`."""

    def __init__(self, retention_days: int) -> None:
        self._files = {path.name: _file(path.read_bytes(), path.suffix) for path in STATIC.iterdir() if path.is_file()}
        config = {
            "memory_types": list(MEMORY_TYPES),
            "statuses": list(get_args(Status)),
            "writable_statuses": list(get_args(WritableStatus)),
            "sorts": list(get_args(SortKey)),
            "standard_tags": list(STANDARD_TAGS),
            "default_limit": DEFAULT_LIMIT,
            "max_limit": MAX_LIMIT,
            "content_max_chars": CONTENT_MAX_CHARS,
            "retention_days": retention_days,
            # So Ask can say which of a question's words a memory matched: those recall's lexical part looks for.
            "recall_stop_words": sorted(STOP_WORDS),
        }
        self._files["config.json"] = _file(json.dumps(config, separators=(",", ":")).encode(), ".json")

    @property
    def weight(self) -> int:
        """Bytes a first visit of a browser downloads: every file of the page, gzipped."""
        return sum(len(file.gzipped.data) for file in self._files.values())

    @property
    def plain_weight(self) -> int:
        """The same files' bytes before compression."""
        return sum(len(file.plain.data) for file in self._files.values())

    async def redirect(self, request: Request) -> Response:
        return RedirectResponse(f"{CONSOLE_PATH}/", status_code=308, headers=HEADERS)

    async def serve(self, request: Request) -> Response:
        name = request.path_params.get("name") or "index.html"
        file = self._files.get(name)
        if file is None:
            return http_problem(404, f"no console file {name[:100]!r}", headers=HEADERS)
        chosen, encoding = file.body(request.headers.get("accept-encoding", ""))
        headers = {**HEADERS, **encoding, "ETag": chosen.etag}
        if chosen.etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        body = b"" if request.method == "HEAD" else chosen.data
        return Response(
            body, media_type=file.content_type, headers={**headers, "Content-Length": str(len(chosen.data))}
        )


def console_router(retention_days: int) -> APIRouter:
    """The console's routes: a page for people, open like /healthz (it holds no data; the person's key is sent by
    it), left out of the OpenAPI document."""
    console = Console(retention_days)
    router = APIRouter()
    router.add_route(CONSOLE_PATH, console.redirect, methods=["GET", "HEAD"], include_in_schema=False)
    router.add_route(f"{CONSOLE_PATH}/", console.serve, methods=["GET", "HEAD"], include_in_schema=False)
    router.add_route(f"{CONSOLE_PATH}/{{name}}", console.serve, methods=["GET", "HEAD"], include_in_schema=False)
    return router
