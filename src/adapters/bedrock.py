"""The deployed embedding model: Amazon Titan Text Embeddings V2 (or another model with its request and response
shape) on Amazon Bedrock, through botocore, with retries and timeouts bounded like the storage calls, each call's
answer read within a total deadline, and any answer but an embedding refused with its reason.

Titan V2 embeds one text per InvokeModel call: `{"inputText": ..., "dimensions": 256, "normalize": true}` answers
`{"embedding": [...], "inputTextTokenCount": n}`. It makes no difference between a query and a stored text.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from core import budget
from core.budget import refuse_late_attempts
from core.digest import Vector
from core.recall.embedding import EmbedderUnavailableError, Kind

if TYPE_CHECKING:
    from botocore.response import StreamingBody
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

TITAN_V2: Final = "amazon.titan-embed-text-v2:0"
# Titan V2 answers in 256, 512 or 1,024 dimensions; 256 keeps about 97 % of 1,024's retrieval accuracy (AWS's figure)
# at a quarter of the bytes every recall reads.
DEFAULT_DIMENSIONS: Final = 256
TITAN_DIMENSIONS: Final = (256, 512, 1024)
# Titan V2's normalised vectors put unrelated texts near 0 (not calibrated here: no Bedrock on the build machine; the
# template's RecallSemanticFloor overrides it).
TITAN_FLOOR: Final = 0.0
# Two memories above this cosine are taken as versions or repeats of one fact (related memories). UNMEASURED (no
# Bedrock here): set high, so that what a write's answer names is likely a version or a repeat rather than another fact
# of the same person, at the price of missing differently worded versions; the template's RecallRelatedFloor sets the
# figure measured with `python -m recall_eval.related` against Bedrock (docs/operations.md).
TITAN_RELATED_FLOOR: Final = 0.6
# Every write and every recall waits for an embedding (at most core.recall.guard's wait), and neither needs it to
# succeed (a write's memory waits for its vector, a recall ranks without meaning): fewer, shorter attempts than
# storage's (Titan answers in well under a second), and within the request's budget (core.budget), which they share
# with the storage calls.
CONNECT_TIMEOUT_SECONDS: Final = 1.0
READ_TIMEOUT_SECONDS: Final = 3.0
ATTEMPTS: Final = 2
# A call's whole answer ends within this (or within what is left of the request's budget, when that ends first):
# botocore's read timeout bounds each read from the socket, not the answer, so one trickled a byte at a time would
# hold the call for minutes. As long as the two attempts can take at worst (tests/infra/test_bedrock_bounds.py).
CALL_SECONDS: Final = 10.0
# An answer longer than this is no embedding (1,024 dimensions take about 25 KB), and is not read further.
MAX_ANSWER_BYTES: Final = 256 * 1024
# Titan's answer opens two lists and objects (one of each); one opening more than this many is refused before it is
# parsed, so no answer can nest deep enough to exhaust the parser's recursion.
MAX_ANSWER_BRACKETS: Final = 16
# The socket timeout that ends a read in progress once its call's deadline has passed: the read waiting at that moment
# ends at its next byte (or its own read timeout), and the next one at once.
_CUT_SECONDS: Final = 0.001


def make_bedrock_client(region: str) -> BedrockRuntimeClient:
    config = Config(
        region_name=region,
        retries={"mode": "standard", "total_max_attempts": ATTEMPTS},
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
    )
    client = botocore.session.get_session().create_client("bedrock-runtime", config=config)
    client.meta.events.register(
        "before-send.bedrock-runtime", refuse_late_attempts(CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS, _too_late)
    )
    return cast("BedrockRuntimeClient", client)


def _too_late() -> EmbedderUnavailableError:
    return EmbedderUnavailableError("Amazon Bedrock could not answer within this request's budget")


class BedrockEmbedder:
    """core.recall.embedding.Embedder over a Titan V2 model on Amazon Bedrock."""

    def __init__(
        self,
        client: BedrockRuntimeClient | Callable[[], BedrockRuntimeClient],
        model_id: str = TITAN_V2,
        dimensions: int = DEFAULT_DIMENSIONS,
        floor: float = TITAN_FLOOR,
        deadline_seconds: float = CALL_SECONDS,
        related_floor: float = TITAN_RELATED_FLOOR,
    ) -> None:
        if dimensions not in TITAN_DIMENSIONS:
            raise ValueError(f"dimensions must be one of {TITAN_DIMENSIONS}, not {dimensions}")
        # A function making the client defers its cost (botocore loads the service's model) to the first embedding,
        # out of a Lambda function's cold start.
        self._make_client = client if callable(client) else lambda: client
        self._model_id = model_id
        self._dimensions = dimensions
        self._floor = floor
        self._related_floor = related_floor
        self._deadline_seconds = deadline_seconds

    @functools.cached_property
    def _client(self) -> BedrockRuntimeClient:
        return self._make_client()

    def reconnect(self) -> None:
        """Drop the client and its pooled connections, if one was made: the next embedding makes a new one (a
        process restored from a snapshot must not share the snapshot's connections with its other copies)."""
        client = self.__dict__.pop("_client", None)
        if client is not None:
            client.close()

    @property
    def model(self) -> str:
        return f"bedrock:{self._model_id}:{self._dimensions}"

    @property
    def floor(self) -> float:
        return self._floor

    @property
    def related_floor(self) -> float:
        return self._related_floor

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> Vector:
        body = json.dumps({"inputText": text, "dimensions": self._dimensions, "normalize": True})
        left = budget.seconds_left()
        seconds = self._deadline_seconds if left is None else min(self._deadline_seconds, left)
        deadline = budget.clock() + seconds
        try:
            response = self._client.invoke_model(
                modelId=self._model_id, body=body, contentType="application/json", accept="application/json"
            )
            answer = _read_within(response["body"], deadline - budget.clock(), seconds)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise EmbedderUnavailableError(f"Amazon Bedrock refused the embedding ({code})") from exc
        except (BotoCoreError, OSError) as exc:
            raise EmbedderUnavailableError(f"Amazon Bedrock could not embed: {exc}") from exc
        return Vector.quantise(_embedding(answer, self._dimensions))


def _read_within(body: StreamingBody, seconds: float, deadline_seconds: float) -> bytes:
    """The answer's bytes (at most MAX_ANSWER_BYTES and one), read within `seconds`; past them, its read in progress is
    cut (a socket timeout of nothing: botocore's public way to reach the socket) and the answer is unavailable. The
    headers before it are bounded by each read's timeout only (botocore gives no way to them); Bedrock sends them at
    once, and a request waits for an embedding no longer than its own wait anyway (core.recall.guard)."""
    cut, read, reading = threading.Event(), threading.Event(), threading.Lock()

    def expire() -> None:
        with reading:
            if read.is_set():
                return
            cut.set()
            with contextlib.suppress(AttributeError):  # no socket under it (any more): no read waits on one
                body.set_socket_timeout(_CUT_SECONDS)

    watchdog = threading.Timer(max(seconds, 0.0), expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        return body.read(MAX_ANSWER_BYTES + 1)
    except (BotoCoreError, OSError) as exc:
        if cut.is_set():
            raise _too_slow(deadline_seconds) from exc
        raise
    finally:
        with reading:
            read.set()
        watchdog.cancel()
        body.close()


def _too_slow(seconds: float) -> EmbedderUnavailableError:
    return EmbedderUnavailableError(f"Amazon Bedrock's answer took longer than {seconds:g} s")


def _embedding(answer: bytes, dimensions: int) -> list[float]:
    """The `dimensions` finite numbers of a Titan answer's `embedding`; EmbedderUnavailableError saying what is wrong
    with any other answer (parsed only when it cannot nest deeper than an embedding's)."""
    if len(answer) > MAX_ANSWER_BYTES:
        raise EmbedderUnavailableError(f"Amazon Bedrock answered more than {MAX_ANSWER_BYTES} bytes")
    if answer.count(b"[") + answer.count(b"{") > MAX_ANSWER_BRACKETS:
        raise EmbedderUnavailableError("Amazon Bedrock answered JSON nested deeper than an embedding's")
    try:
        parsed = json.loads(answer)
    except ValueError:  # UnicodeDecodeError among them
        raise EmbedderUnavailableError("Amazon Bedrock answered no JSON") from None
    embedding = parsed.get("embedding") if isinstance(parsed, dict) else None
    if not isinstance(embedding, list) or len(embedding) != dimensions:
        raise EmbedderUnavailableError(f"Amazon Bedrock answered no {dimensions}-dimension embedding")
    values = []
    for value in embedding:
        number = _finite(value)
        if number is None:
            raise EmbedderUnavailableError("Amazon Bedrock answered an embedding of values not all finite numbers")
        values.append(number)
    return values


def _finite(value: object) -> float | None:
    """`value` as a float when it is a finite JSON number (not a boolean, a string or anything else)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
