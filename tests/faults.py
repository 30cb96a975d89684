"""DynamoDB's error answers, made up before moto or DynamoDB Local sees a request (a handler of botocore's
`before-send` event returns one): the one way the tests inject them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from botocore.awsrequest import AWSResponse


class RawBody:
    """A raw HTTP body as botocore reads an answer's (streamed or read whole)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.raw

    def read(self, *_: Any, **__: Any) -> bytes:
        return self.raw


def answer(request: Any, status: int, body: bytes, headers: dict[str, str] | None = None) -> AWSResponse:
    """The answer `status` with `body` to `request`."""
    return AWSResponse(request.url, status, headers or {}, RawBody(body))  # type: ignore[arg-type]  # a raw body, as botocore's own


def error_answer(request: Any, code: str, status: int = 400, **extra: Any) -> AWSResponse:
    """DynamoDB's error answer `code` to `request` (with any `extra` fields, such as CancellationReasons)."""
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected", **extra})
    return answer(request, status, body.encode(), {"x-amzn-ErrorType": code})
