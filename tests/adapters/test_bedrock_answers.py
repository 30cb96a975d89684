"""The Bedrock embedder against answers no Titan model gives: a malformed body (a list, a string, nulls, strings or
booleans for numbers, NaN or infinite numbers, deep nesting, no JSON, too many bytes) is EmbedderUnavailableError
with its reason, never another exception; and an answer trickled a byte at a time, each read within botocore's read
timeout, ends at the call's deadline (or at the request's budget, when that ends first) instead of holding the call
for minutes. The trickling answers come from a local HTTP endpoint the client is pointed at."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final, cast

import botocore.session
import pytest
from botocore.config import Config
from botocore.response import StreamingBody
from botocore.stub import Stubber

from adapters.bedrock import TITAN_V2, BedrockEmbedder
from core.budget import storage_budget
from core.recall.embedding import EmbedderUnavailableError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

DIMENSIONS: Final = 256
JSON: Final = "application/json"
NUMBERS: Final = ", ".join(["0.0625"] * DIMENSIONS)


def embedding_of(values: str) -> bytes:
    return ('{"embedding": [' + values + '], "inputTextTokenCount": 3}').encode()


MALFORMED: dict[str, bytes] = {
    "a list": b"[" + NUMBERS.encode() + b"]",
    "a string": b'"embedding"',
    "null": b"null",
    "a number": b"42",
    "strings for numbers": embedding_of(", ".join(['"0.0625"'] * DIMENSIONS)),
    "nulls for numbers": embedding_of(", ".join(["null"] * DIMENSIONS)),
    "booleans for numbers": embedding_of(", ".join(["true"] * DIMENSIONS)),
    "lists for numbers": embedding_of(", ".join(["[0.0625]"] * DIMENSIONS)),
    "objects for numbers": embedding_of(", ".join(["{}"] * DIMENSIONS)),
    "a NaN": embedding_of("NaN, " + ", ".join(["0.0625"] * (DIMENSIONS - 1))),
    "an infinity": embedding_of("-Infinity, " + ", ".join(["0.0625"] * (DIMENSIONS - 1))),
    "a number too large for a float": embedding_of("1" + "0" * 400 + ", " + ", ".join(["0.0625"] * (DIMENSIONS - 1))),
    "an overflowing exponent": embedding_of("1e999, " + ", ".join(["0.0625"] * (DIMENSIONS - 1))),
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep nesting inside the embedding": embedding_of("[" * 50_000 + "]" * 50_000),
    "no JSON": b"<html>busy</html>",
    "not UTF-8": b'{"embedding": "\xff\xfe"}',
    "nothing": b"",
    "too many bytes": embedding_of(", ".join(["0." + "1" * 2000] * DIMENSIONS)),
}


@pytest.fixture
def client() -> BedrockRuntimeClient:
    session = botocore.session.get_session()
    client = session.create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    return cast("BedrockRuntimeClient", client)


@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_answer_is_unavailable_with_its_reason_never_another_error(
    client: BedrockRuntimeClient, body: bytes
) -> None:
    stubber = Stubber(client)
    stubber.add_response("invoke_model", {"body": StreamingBody(io.BytesIO(body), len(body)), "contentType": JSON})
    with stubber, pytest.raises(EmbedderUnavailableError, match=r"^Amazon Bedrock answered "):
        BedrockEmbedder(client).embed(["The user is vegetarian."], "passage")


# The answer's bytes come this far apart: each read gets a byte well within the read timeout, so botocore never
# times the call out, and the whole answer takes about 25 s.
TRICKLE_SECONDS: Final = 0.01
READ_TIMEOUT_SECONDS: Final = 3
ANSWER: Final = embedding_of(NUMBERS)


class _Trickling(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        try:
            for byte in ANSWER:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(TRICKLE_SECONDS)
        except OSError:
            pass  # the client gave up and closed: nothing more to send

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def trickling() -> Iterator[BedrockRuntimeClient]:
    """A Bedrock runtime client pointed at a local endpoint that answers every call a byte at a time."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickling)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="trickling-bedrock", daemon=True)
    thread.start()
    session = botocore.session.get_session()
    client = session.create_client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=f"http://127.0.0.1:{server.server_address[1]}",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=READ_TIMEOUT_SECONDS),
    )
    try:
        yield cast("BedrockRuntimeClient", client)
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_an_answer_trickled_past_the_calls_deadline_is_unavailable(trickling: BedrockRuntimeClient) -> None:
    embedder = BedrockEmbedder(trickling, model_id=TITAN_V2, deadline_seconds=0.3)

    with pytest.raises(EmbedderUnavailableError, match=r"^Amazon Bedrock's answer took longer than 0\.3 s"):
        embedder.embed(["The user is vegetarian."], "passage")


def test_an_answer_trickled_past_the_requests_budget_is_unavailable(trickling: BedrockRuntimeClient) -> None:
    embedder = BedrockEmbedder(trickling, model_id=TITAN_V2)

    with storage_budget(0.3), pytest.raises(EmbedderUnavailableError, match=r"^Amazon Bedrock's answer took longer"):
        embedder.embed(["The user is vegetarian."], "passage")


def test_an_answer_within_the_deadline_is_the_embedding(client: BedrockRuntimeClient) -> None:
    stubber = Stubber(client)
    stubber.add_response("invoke_model", {"body": StreamingBody(io.BytesIO(ANSWER), len(ANSWER)), "contentType": JSON})
    with stubber:
        (vector,) = BedrockEmbedder(client, deadline_seconds=0.3).embed(["The user is vegetarian."], "passage")

    assert vector.dimensions == DIMENSIONS
    assert json.loads(ANSWER)["embedding"][0] == 0.0625
