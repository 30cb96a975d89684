"""`agent-memory serve` never writes a credential to its log: uvicorn's access log names each request by its path,
never its query string, where a client may have put an access token (RFC 6750 §2.3, which this server refuses) or
anything else it should not have."""

from __future__ import annotations

import secrets
import urllib.error
import urllib.request
from pathlib import Path


def answer_status(url: str, body: bytes | None = None) -> int:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"} if body else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status: int = response.status
    except urllib.error.HTTPError as refused:
        status = refused.code
    return status


def test_a_token_in_the_query_string_is_refused_and_never_written_to_the_access_log(
    shared_serve: tuple[str, str], shared_serve_output: Path
) -> None:
    base, _ = shared_serve
    token = f"amt_{secrets.token_hex(8)}_{secrets.token_urlsafe(32)}"
    other = secrets.token_urlsafe(32)
    marker = f"/no-such-page-{secrets.token_hex(8)}"

    refused = answer_status(f"{base}/mcp?access_token={token}", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    missing = answer_status(f"{base}{marker}?access_token={other}&state=x")  # answered after /mcp's line is written

    said = shared_serve_output.read_text(errors="replace")
    assert (refused, missing) == (401, 404)
    assert f'"GET {marker} HTTP/1.1" 404' in said  # the request is logged, by its path alone
    assert token not in said
    assert other not in said
    assert "access_token=" not in said
