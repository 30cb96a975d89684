"""The capacity DynamoDB reports consuming, summed per request for the service's metrics: every call of a client
asks for it (ReturnConsumedCapacity=TOTAL, no extra call and no extra cost) and adds it to one process-wide tally.

One tally per process suits Lambda, which serves one request at a time per process; `serve` does not count.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The operations that take ReturnConsumedCapacity (DescribeTable, CreateTable and the like do not).
_COUNTED: Final = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
        "ExecuteStatement",
        "BatchExecuteStatement",
    }
)


@dataclass(frozen=True)
class Consumed:
    read_units: float = 0.0
    write_units: float = 0.0


class CapacityTally:
    """The read and write units a client's calls consumed since the last `take()`, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read = 0.0
        self._write = 0.0

    def watch(self, client: DynamoDBClient) -> None:
        """Have every counted call of `client` ask for its consumed capacity and add it here."""
        events = client.meta.events
        events.register("provide-client-params.dynamodb.*", self._ask)
        events.register("after-call.dynamodb.*", self._add)

    def take(self) -> Consumed:
        """The units consumed since the last take, and start again from zero."""
        with self._lock:
            consumed = Consumed(self._read, self._write)
            self._read = self._write = 0.0
        return consumed

    def _ask(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name in _COUNTED:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")

    def _add(self, parsed: Mapping[str, Any], model: Any, **_: Any) -> None:
        if model.name not in _COUNTED:
            return
        reported = parsed.get("ConsumedCapacity")
        if reported is None:
            return
        entries = reported if isinstance(reported, list) else [reported]
        read = write = 0.0
        for entry in entries:
            # TOTAL reports CapacityUnits; reads and writes are told apart by the operation, and a transaction or
            # batch of writes consumes write units (its condition checks included).
            units = float(entry.get("CapacityUnits", 0.0))
            read += float(entry.get("ReadCapacityUnits", 0.0))
            write += float(entry.get("WriteCapacityUnits", 0.0))
            if "ReadCapacityUnits" not in entry and "WriteCapacityUnits" not in entry:
                if model.name in _READS:
                    read += units
                else:
                    write += units
        with self._lock:
            self._read += read
            self._write += write


_READS: Final = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems", "ExecuteStatement"})
