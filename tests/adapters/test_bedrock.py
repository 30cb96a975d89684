"""The Bedrock embedder against botocore's Stubber: the exact InvokeModel request Titan V2 takes, its recorded answer
shape, and every failure turned into EmbedderUnavailableError (moto's invoke_model answers an empty body, so it
cannot stand in)."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, cast

import botocore.session
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from adapters.bedrock import TITAN_V2, BedrockEmbedder, make_bedrock_client
from core.digest import Vector
from core.recall.embedding import EmbedderUnavailableError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient


def answer(embedding: list[float]) -> dict[str, object]:
    body = json.dumps({"embedding": embedding, "inputTextTokenCount": 7}).encode()
    return {"body": StreamingBody(io.BytesIO(body), len(body)), "contentType": "application/json"}


def request(text: str, dimensions: int = 256) -> dict[str, object]:
    body = json.dumps({"inputText": text, "dimensions": dimensions, "normalize": True})
    return {"modelId": TITAN_V2, "body": body, "contentType": "application/json", "accept": "application/json"}


@pytest.fixture
def client() -> BedrockRuntimeClient:
    session = botocore.session.get_session()
    client = session.create_client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    return cast("BedrockRuntimeClient", client)


def test_each_text_is_one_invoke_model_call_in_titan_v2s_shape_and_comes_back_quantised(
    client: BedrockRuntimeClient,
) -> None:
    stubber = Stubber(client)
    first, second = [0.5, -1.0] + [0.0] * 254, [0.25] * 256
    stubber.add_response("invoke_model", answer(first), request("The user eats fish"))
    stubber.add_response("invoke_model", answer(second), request("what does the user eat?"))
    with stubber:
        vectors = BedrockEmbedder(client).embed(["The user eats fish", "what does the user eat?"], "passage")
    stubber.assert_no_pending_responses()
    assert vectors == [Vector.quantise(first), Vector.quantise(second)]


def test_the_model_names_its_id_and_dimensions() -> None:
    embedder = BedrockEmbedder(make_bedrock_client("us-east-1"), dimensions=512)
    assert embedder.model == f"bedrock:{TITAN_V2}:512"
    with pytest.raises(ValueError, match="dimensions must be one of"):
        BedrockEmbedder(make_bedrock_client("us-east-1"), dimensions=300)


@pytest.mark.parametrize(
    "code", ["ThrottlingException", "AccessDeniedException", "ModelTimeoutException", "ValidationException"]
)
def test_a_refusal_is_unavailable_never_a_crash(client: BedrockRuntimeClient, code: str) -> None:
    stubber = Stubber(client)
    stubber.add_client_error("invoke_model", service_error_code=code, http_status_code=400)
    with stubber, pytest.raises(EmbedderUnavailableError, match=code):
        BedrockEmbedder(client).embed(["x"], "query")


@pytest.mark.parametrize("embedding", [[0.1] * 255, "nope", None])
def test_an_answer_without_an_embedding_of_the_asked_dimensions_is_unavailable(
    client: BedrockRuntimeClient, embedding: object
) -> None:
    stubber = Stubber(client)
    stubber.add_response("invoke_model", answer(embedding), request("x"))  # type: ignore[arg-type]
    with stubber, pytest.raises(EmbedderUnavailableError, match="no 256-dimension embedding"):
        BedrockEmbedder(client).embed(["x"], "query")


def test_an_unreachable_endpoint_is_unavailable() -> None:
    session = botocore.session.get_session()
    client = session.create_client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=botocore.config.Config(retries={"total_max_attempts": 1}, connect_timeout=0.5),
    )
    with pytest.raises(EmbedderUnavailableError, match="could not embed"):
        BedrockEmbedder(cast("BedrockRuntimeClient", client)).embed(["x"], "query")


class Closing:
    """A client made by the embedder's factory: answers one embedding and records being closed."""

    def __init__(self) -> None:
        self.closed = False

    def invoke_model(self, **_: object) -> dict[str, object]:
        return answer([0.5] * 256)

    def close(self) -> None:
        self.closed = True


def test_reconnect_closes_the_client_made_and_the_next_embedding_makes_a_new_one() -> None:
    made: list[Closing] = []

    def make() -> BedrockRuntimeClient:
        made.append(Closing())
        return cast("BedrockRuntimeClient", made[-1])

    embedder = BedrockEmbedder(make)
    embedder.reconnect()  # no client made yet: nothing to close, nothing made
    assert made == []

    embedder.embed(["x"], "passage")
    embedder.reconnect()
    embedder.embed(["y"], "passage")

    assert [client.closed for client in made] == [True, False]
