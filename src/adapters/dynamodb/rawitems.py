"""The items of recall's digest reads, read from the answer's JSON directly.

Recall reads every digest of a namespace. botocore parses each attribute value of each item against the
AttributeValue shape, walking its ten members, which for 1,000 digests of seven attributes takes longer than the
rest of the recall together (about 60 ms of a 150 ms budget, 10 times that at 10,000). For the Query calls made
inside `raw_items()` only, a `before-parse` handler (botocore's public event for a service's own answer handling)
takes `Items` out of the answer's body before botocore parses it, and hands them back converted exactly as botocore
would have: binary values decoded from base64, every other value as JSON has it. The rest of the answer (`Count`,
`LastEvaluatedKey`, an error) is parsed by botocore as ever.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_HANDLER_ID: Final = "agent-memory-raw-items"
_active = threading.local()


@contextmanager
def raw_items() -> Iterator[None]:
    """The Query calls this thread makes meanwhile, on a client `watch` was given, have their items read directly."""
    _active.on = True
    try:
        yield
    finally:
        _active.on = False


def watch(client: DynamoDBClient) -> None:
    """Read the items of `client`'s Query calls made inside `raw_items()` directly (once per client, however often)."""
    client.meta.events.register("before-parse.dynamodb.Query", take_items, unique_id=_HANDLER_ID)


def take_items(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    """botocore's `before-parse` handler: move a successful answer's items into the customised part of the response
    (merged into the parsed answer by botocore), converted as botocore converts them."""
    if not getattr(_active, "on", False) or response_dict.get("status_code") != 200:
        return
    body = response_dict.get("body")
    if not isinstance(body, bytes | str) or not body:
        return
    try:
        answer = json.loads(body)
    except ValueError:  # not JSON (another protocol): botocore's own parser knows it
        return
    if not isinstance(answer, dict) or not isinstance(answer.get("Items"), list):
        return
    items = answer.pop("Items")
    for item in items:
        for name, value in item.items():
            item[name] = _value(value)
    customized_response_dict["Items"] = items
    response_dict["body"] = json.dumps(answer).encode()


def _value(value: dict[str, Any]) -> dict[str, Any]:
    """One AttributeValue as botocore parses it: B and BS decoded from base64, L and M element by element, the rest
    (S, N, BOOL, NULL, SS, NS) as JSON has it, the same object."""
    if "S" in value or "N" in value:
        return value  # most of a digest's values: nothing to convert
    if "B" in value:
        return {"B": base64.b64decode(value["B"])}
    if "BS" in value:
        return {"BS": [base64.b64decode(element) for element in value["BS"]]}
    if "L" in value:
        return {"L": [_value(element) for element in value["L"]]}
    if "M" in value:
        return {"M": {name: _value(element) for name, element in value["M"].items()}}
    return value
