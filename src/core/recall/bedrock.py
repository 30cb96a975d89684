"""The deployed embedding model: Amazon Titan Text Embeddings V2 (or another model with its request and response
shape) on Amazon Bedrock, through botocore, with retries and timeouts bounded like the storage calls.

Titan V2 embeds one text per InvokeModel call: `{"inputText": ..., "dimensions": 256, "normalize": true}` answers
`{"embedding": [...], "inputTextTokenCount": n}`. It makes no difference between a query and a stored text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from core.budget import refuse_late_attempts
from core.digest import Vector
from core.recall.embedding import EmbedderUnavailableError, Kind

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

TITAN_V2: Final = "amazon.titan-embed-text-v2:0"
# Titan V2 answers in 256, 512 or 1,024 dimensions; 256 keeps about 97 % of 1,024's retrieval accuracy (AWS's figure)
# at a quarter of the bytes every recall reads.
DEFAULT_DIMENSIONS: Final = 256
TITAN_DIMENSIONS: Final = (256, 512, 1024)
# Titan V2's normalised vectors put unrelated texts near 0 (not calibrated here: no Bedrock on the build machine; the
# template's RecallSemanticFloor overrides it).
TITAN_FLOOR: Final = 0.0
# An embedding is on the request path of every write and every recall, and neither needs it to succeed (a write's
# memory waits for its vector, a recall ranks without meaning): fewer, shorter attempts than storage's (Titan answers
# in well under a second), and within the request's budget (core.budget), which they share with the storage calls.
CONNECT_TIMEOUT_SECONDS: Final = 1.0
READ_TIMEOUT_SECONDS: Final = 3.0
ATTEMPTS: Final = 2


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
    ) -> None:
        if dimensions not in TITAN_DIMENSIONS:
            raise ValueError(f"dimensions must be one of {TITAN_DIMENSIONS}, not {dimensions}")
        # A function making the client defers its cost (botocore loads the service's model) to the first embedding,
        # out of a Lambda function's cold start.
        self._make_client = client if callable(client) else lambda: client
        self._model_id = model_id
        self._dimensions = dimensions
        self._floor = floor

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

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> Vector:
        body = json.dumps({"inputText": text, "dimensions": self._dimensions, "normalize": True})
        try:
            response = self._client.invoke_model(
                modelId=self._model_id, body=body, contentType="application/json", accept="application/json"
            )
            answer: dict[str, Any] = json.loads(response["body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise EmbedderUnavailableError(f"Amazon Bedrock refused the embedding ({code})") from exc
        except (BotoCoreError, ValueError) as exc:
            raise EmbedderUnavailableError(f"Amazon Bedrock could not embed: {exc}") from exc
        embedding = answer.get("embedding")
        if not isinstance(embedding, list) or len(embedding) != self._dimensions:
            raise EmbedderUnavailableError(f"Amazon Bedrock answered no {self._dimensions}-dimension embedding")
        return Vector.quantise([float(value) for value in embedding])
