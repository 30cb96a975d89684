"""The console's files as the HTTP door serves them at /console/: open like /healthz, a strict Content-Security-
Policy, revalidated with an ETag, its settings from the core, small; and on Lambda through an API Gateway event."""

from __future__ import annotations

import gzip
import re
from typing import get_args

import pytest
from fastapi.testclient import TestClient

from core.contract import SortKey
from core.history import DEFAULT_RETENTION_DAYS
from core.limits import CONTENT_MAX_CHARS, DEFAULT_LIMIT, MAX_LIMIT
from core.memories import MemoryService
from core.model import MEMORY_TYPES, STANDARD_TAGS, Status, WritableStatus
from core.recall.lexical import STOP_WORDS
from handlers.auth import open_access
from handlers.console import STATIC, Console
from handlers.http.app import create_app
from tests.conftest import SERVE_ROOT

EVENTS = SERVE_ROOT / "events"
# The page a first visit downloads, all files together (the aim: under 100 KB), as a browser receives it.
WEIGHT_BUDGET = 100 * 1024
GZIP = {"Accept-Encoding": "gzip, deflate, br"}


def test_console_redirects_to_its_directory_so_relative_files_resolve(http: TestClient) -> None:
    response = http.get("/console", follow_redirects=False)

    assert response.status_code == 308
    assert response.headers["location"] == "/console/"


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/console/", "text/html; charset=utf-8"),
        ("/console/index.html", "text/html; charset=utf-8"),
        ("/console/console.js", "text/javascript; charset=utf-8"),
        ("/console/console.css", "text/css; charset=utf-8"),
        ("/console/favicon.svg", "image/svg+xml"),
        ("/console/config.json", "application/json"),
    ],
)
def test_every_file_is_served_without_a_key_under_a_strict_policy(
    http: TestClient, path: str, content_type: str
) -> None:
    response = http.get(path)  # the `http` fixture's app is open, but these routes check no key at all

    assert response.status_code == 200
    assert response.headers["content-type"] == content_type
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-cache"
    assert re.fullmatch(r'"[0-9a-f]{32}"', response.headers["etag"])


def test_an_unchanged_file_is_a_304_and_a_head_has_no_body(http: TestClient) -> None:
    etag = http.get("/console/console.js").headers["etag"]

    again = http.get("/console/console.js", headers={"If-None-Match": etag})
    head = http.head("/console/console.js")

    assert again.status_code == 304
    assert again.content == b""
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == http.get("/console/console.js").headers["content-length"]


def test_a_browser_gets_each_file_gzipped_with_its_own_etag_and_a_client_refusing_gzip_gets_it_plain(
    http: TestClient,
) -> None:
    plain = (STATIC / "list.js").read_bytes()

    zipped = http.get("/console/list.js", headers=GZIP)
    refused = [http.get("/console/list.js", headers={"Accept-Encoding": value}) for value in ("identity", "gzip;q=0")]

    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == plain  # decoded by the client
    assert int(zipped.headers["content-length"]) < len(plain) / 2
    for response in refused:
        assert "content-encoding" not in response.headers
        assert response.content == plain
        assert response.headers["content-length"] == str(len(plain))
        assert response.headers["etag"] != zipped.headers["etag"]
    assert zipped.headers["vary"] == refused[0].headers["vary"] == "Accept-Encoding"
    # A revalidation is answered for the representation it names.
    again = http.get("/console/list.js", headers={**GZIP, "If-None-Match": zipped.headers["etag"]})
    stale = http.get("/console/list.js", headers={**GZIP, "If-None-Match": refused[0].headers["etag"]})
    assert (again.status_code, stale.status_code) == (304, 200)


@pytest.mark.parametrize("name", ["missing.js", "..%2F__init__.py", "static", "%2e%2e%2fhttp_api.py"])
def test_anything_else_under_console_is_a_404_problem(http: TestClient, name: str) -> None:
    response = http.get(f"/console/{name}")

    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == 404


def test_the_page_loads_no_inline_script_or_style_and_nothing_from_elsewhere() -> None:
    page = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>", page)

    assert scripts == ['<script type="module" src="console.js">']
    assert "style=" not in page
    assert "<style" not in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    for module in STATIC.glob("*.js"):  # no absolute URLs, no CDN
        assert "http" not in module.read_text().replace("HTTP ", ""), module.name


def modules_imported(http: TestClient, name: str, seen: set[str]) -> set[str]:
    """`name` and every module it imports, directly or not, each as the console serves it."""
    response = http.get(f"/console/{name}")
    assert response.status_code == 200, name
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    seen.add(name)
    for imported in re.findall(r'^import [^;]*? from "\./([a-z]+\.js)";', response.text, flags=re.MULTILINE):
        if imported not in seen:
            modules_imported(http, imported, seen)
    return seen


def test_every_module_the_page_imports_is_served_and_all_its_script_is_under_60_kb_gzipped(http: TestClient) -> None:
    modules = modules_imported(http, "console.js", set())

    assert modules == {path.name for path in STATIC.glob("*.js")}  # no module left unused, none missing
    script = b"".join(http.get(f"/console/{name}").content for name in sorted(modules))
    assert len(gzip.compress(script)) < 60 * 1024


def test_the_settings_the_page_reads_come_from_the_core(http: TestClient, memory_service: MemoryService) -> None:
    config = http.get("/console/config.json").json()

    assert config == {
        "memory_types": list(MEMORY_TYPES),
        "statuses": list(get_args(Status)),
        "writable_statuses": list(get_args(WritableStatus)),
        "sorts": list(get_args(SortKey)),
        "standard_tags": list(STANDARD_TAGS),
        "default_limit": DEFAULT_LIMIT,
        "max_limit": MAX_LIMIT,
        "content_max_chars": CONTENT_MAX_CHARS,
        "retention_days": DEFAULT_RETENTION_DAYS,
        "recall_stop_words": sorted(STOP_WORDS),
    }

    seven = create_app(memory_service, open_access(), version="test", retention_days=7)
    with TestClient(seven) as client:
        assert client.get("/console/config.json").json()["retention_days"] == 7


def test_the_whole_page_weighs_under_its_budget(http: TestClient) -> None:
    console = Console(DEFAULT_RETENTION_DAYS)
    served = sum(
        int(http.get(f"/console/{path.name}", headers=GZIP).headers["content-length"])
        for path in STATIC.iterdir()
        if path.is_file()
    ) + int(http.get("/console/config.json", headers=GZIP).headers["content-length"])

    assert served == console.weight < WEIGHT_BUDGET
    assert console.weight < console.plain_weight / 2
