"""Recall's digest reads take their items from the answer's JSON directly: the answer is then exactly what botocore
would have parsed, for every kind of attribute value, and nothing changes outside those reads or for an error."""

from __future__ import annotations

import base64
import json
from typing import Any

import botocore.session
from botocore.model import Shape
from botocore.parsers import create_parser

from adapters.dynamodb.rawitems import raw_items, take_items

OUTPUT = botocore.session.get_session().get_service_model("dynamodb").operation_model("Query").output_shape
assert OUTPUT is not None
QUERY: Shape = OUTPUT
BLOB = base64.b64encode(b"\x00\xffdeflated").decode()
ITEM = {
    "sk": {"S": "RCL#0000000007"},
    "terms": {"B": BLOB},
    "vec_scale": {"N": "0.0157"},
    "digested": {"BOOL": True},
    "gone": {"NULL": True},
    "words": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [BLOB]},
    "list": {"L": [{"S": "x"}, {"B": BLOB}, {"M": {"inner": {"B": BLOB}}}]},
    "map": {"M": {"blob": {"B": BLOB}, "n": {"N": "3"}}},
}
ANSWER = {
    "Items": [ITEM, {"sk": {"S": "RCL#0000000008"}}],
    "Count": 2,
    "ScannedCount": 3,
    "LastEvaluatedKey": {"pk": {"S": "NS#a"}, "sk": {"S": "RCL#0000000008"}},
}


def response(body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    return {"body": json.dumps(body).encode(), "headers": {}, "status_code": status}


def parsed(answer: dict[str, Any], status: int = 200, *, raw: bool) -> dict[str, Any]:
    """The answer as a client parses it, with the handler run first (as botocore's before-parse event runs it)."""
    received, customised = response(answer, status), dict[str, Any]()
    if raw:
        with raw_items():
            take_items(received, customised)
    else:
        take_items(received, customised)
    result: dict[str, Any] = create_parser("json").parse(received, QUERY)
    return result | customised


def test_items_read_directly_are_what_botocore_parses_for_every_kind_of_value() -> None:
    direct = parsed(ANSWER, raw=True)

    assert direct == parsed(ANSWER, raw=False)
    assert direct["Items"][0]["terms"]["B"] == b"\x00\xffdeflated"
    assert direct["LastEvaluatedKey"] == ANSWER["LastEvaluatedKey"]


def test_outside_recall_reads_and_for_an_error_botocore_parses_the_answer_alone() -> None:
    for status, answer in ((200, ANSWER), (400, {"__type": "ValidationException", "message": "bad"})):
        received, customised = response(answer, status), dict[str, Any]()
        if status == 200:
            take_items(received, customised)  # not inside raw_items()
        else:
            with raw_items():
                take_items(received, customised)

        assert customised == {}
        assert received["body"] == json.dumps(answer).encode()


def test_an_answer_that_is_not_json_is_left_to_botocore() -> None:
    received, customised = {"body": b"\xa2\x65Items\x80", "headers": {}, "status_code": 200}, dict[str, Any]()
    with raw_items():
        take_items(received, customised)

    assert customised == {}
    assert received["body"] == b"\xa2\x65Items\x80"
