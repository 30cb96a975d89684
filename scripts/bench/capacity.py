"""DynamoDB capacity computed from item sizes (moto's and DynamoDB Local's reported capacity are not to be trusted),
and a recorder of every call a client makes, through botocore's event hooks only, so it does not depend on the
adapter's item layout.

Size rules (DynamoDB Developer Guide, "DynamoDB item sizes and formats"): an attribute costs its name's UTF-8 bytes
plus its value: S = UTF-8 bytes; N = 1 byte per 2 significant digits + 1; B = raw bytes; BOOL and NULL = 1;
L and M = 3 + each element + 1 per element (a map's keys count like attribute names); sets = the sum of their
elements.

Units: a read is 1 RCU per 4 KB (strongly consistent), half that when eventually consistent; a Query or Scan sums
the sizes of every item it EVALUATED (before FilterExpression; a projection or Select=COUNT does not reduce it) and
rounds up once per call; GetItem and BatchGetItem round per item. A Query of a global secondary index (always
eventually consistent) sums the sizes of the index ENTRIES it evaluated: the table's key, the index's key and the
projected attributes (`TableShape.projected`; a KEYS_ONLY entry is its keys alone). A write is 1 WCU per 1 KB of the
larger of the old and new item, 2x inside a transaction, plus the writes each GSI needs (see `index_write_units`).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

READ_UNIT = 4096
WRITE_UNIT = 1024
Item = Mapping[str, Any]


def number_size(text: str) -> int:
    digits = text.strip().lstrip("+-")
    mantissa = re.split("[eE]", digits)[0].replace(".", "")
    significant = mantissa.strip("0")
    return (len(significant) + 1) // 2 + 1


def value_size(value: Mapping[str, Any]) -> int:
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return number_size(str(inner))
    if kind == "B":
        return len(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(part).encode()) for part in inner)
    if kind == "NS":
        return sum(number_size(str(part)) for part in inner)
    if kind == "BS":
        return sum(len(part) for part in inner)
    if kind == "L":
        return 3 + sum(value_size(element) + 1 for element in inner)
    if kind == "M":
        return 3 + sum(len(name.encode()) + value_size(element) + 1 for name, element in inner.items())
    raise ValueError(f"unknown DynamoDB type {kind}")


def item_size(item: Item | None) -> int:
    """Bytes of one item in DynamoDB JSON (low-level client form); 0 for no item."""
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def read_units(size: int, consistent: bool) -> float:
    """Units of one read of `size` bytes (one item, or one Query's sum); a read of nothing still costs one unit."""
    units = max(1, math.ceil(size / READ_UNIT))
    return float(units) if consistent else units / 2


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT))


@dataclass(frozen=True)
class Index:
    name: str
    keys: tuple[str, ...]
    projection: str  # ALL | KEYS_ONLY | INCLUDE
    include: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableShape:
    keys: tuple[str, ...]
    indexes: tuple[Index, ...]

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> TableShape:
        """From the table's CloudFormation `Properties` (local.template.table_definition)."""
        indexes = []
        for gsi in definition.get("GlobalSecondaryIndexes", []):
            projection = gsi.get("Projection", {})
            indexes.append(
                Index(
                    gsi["IndexName"],
                    tuple(key["AttributeName"] for key in gsi["KeySchema"]),
                    projection.get("ProjectionType", "ALL"),
                    tuple(projection.get("NonKeyAttributes", [])),
                )
            )
        return cls(tuple(key["AttributeName"] for key in definition["KeySchema"]), tuple(indexes))

    def key_of(self, item: Item) -> dict[str, Any]:
        return {name: item[name] for name in self.keys}

    def index(self, name: str) -> Index | None:
        return next((index for index in self.indexes if index.name == name), None)

    def projected(self, index: Index, item: Item | None) -> dict[str, Any] | None:
        """The index entry `item` has (None when it lacks an index key: sparse)."""
        if not item or any(name not in item for name in index.keys):
            return None
        if index.projection == "ALL":
            return dict(item)
        wanted = {*self.keys, *index.keys, *(index.include if index.projection == "INCLUDE" else ())}
        return {name: value for name, value in item.items() if name in wanted}


def entry_size(shape: TableShape, index_name: str | None, item: Item) -> int:
    """The bytes a read of `item` counts: the item's on the table (`index_name` None), its entry's on an index."""
    index = shape.index(index_name) if index_name else None
    return item_size(shape.projected(index, item) if index else item)


def largest_entries(shape: TableShape, items: Iterable[Item]) -> dict[str, int]:
    """The size of the largest entry of each index among `items` (indexes without one left out)."""
    largest: dict[str, int] = {}
    for item in items:
        for index in shape.indexes:
            entry = shape.projected(index, item)
            if entry is not None:
                largest[index.name] = max(largest.get(index.name, 1), item_size(entry))
    return largest


def index_write_units(shape: TableShape, old: Item | None, new: Item | None) -> int:
    """GSI writes of one item write: none→none 0; none→entry put; entry→none delete; same index key with
    equal projection 0; same key, changed projection one update of the larger entry; key changed delete + put."""
    total = 0
    for index in shape.indexes:
        before, after = shape.projected(index, old), shape.projected(index, new)
        if before is None and after is None:
            continue
        if before is None or after is None:
            total += write_units(item_size(before or after))
        elif any(before[name] != after[name] for name in index.keys):
            total += write_units(item_size(before)) + write_units(item_size(after))
        elif before != after:
            total += write_units(max(item_size(before), item_size(after)))
    return total


@dataclass
class Call:
    operation: str
    thread: int
    started: float = 0.0
    ended: float = 0.0
    rcu: float = 0.0
    wcu: float = 0.0
    evaluated: int = 0
    returned: int = 0
    failed: str | None = None
    params: dict[str, Any] | None = None
    # Read units and items by what was read: an index's name, else the kind of item (`item_kind`: `RCL`, `MEM`, ...).
    kinds: dict[str, list[float]] = field(default_factory=dict)

    def read(self, kind: str, units: float, items: int) -> None:
        units_and_items = self.kinds.setdefault(kind, [0.0, 0])
        units_and_items[0] += units
        units_and_items[1] += items


@dataclass
class Recording:
    calls: list[Call] = field(default_factory=list)

    @property
    def rcu(self) -> float:
        return sum(call.rcu for call in self.calls)

    @property
    def wcu(self) -> float:
        return sum(call.wcu for call in self.calls)

    @property
    def evaluated(self) -> int:
        return sum(call.evaluated for call in self.calls)

    @property
    def returned(self) -> int:
        return sum(call.returned for call in self.calls)

    def read_by_kind(self) -> dict[str, dict[str, float]]:
        """Read units and items of the recording's calls by what they read (`Call.kinds`)."""
        totals: dict[str, dict[str, float]] = {}
        for call in self.calls:
            for kind, (units, items) in call.kinds.items():
                total = totals.setdefault(kind, {"rcu": 0.0, "items": 0})
                total["rcu"] += units
                total["items"] += items
        return totals

    def count(self, *operations: str) -> int:
        return sum(1 for call in self.calls if not operations or call.operation in operations)

    def sequential(self, *operations: str) -> int:
        """Round trips one after another: the most calls of `operations` of which each started after the one before
        it ended (calls in flight together count once). A call sent from a pool task starts when the task was
        submitted (see `requested_at_submit`): tasks submitted together wait on no one, even when, with the GIL
        shared by 20 threads serialising their requests, the last one reaches the network after the first returned."""
        chain, ended = 0, float("-inf")
        for call in sorted((c for c in self.calls if not operations or c.operation in operations), key=_end):
            if call.started >= ended:
                chain, ended = chain + 1, call.ended
        return chain


_requested = threading.local()


def requested_at_submit(pool: Any) -> None:
    """Make the first call each task of `pool` (a ThreadPoolExecutor the service submits its concurrent calls to)
    sends start, for `Recording.sequential`, when the task was submitted."""
    submit = pool.submit

    def submitted(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        at = time.perf_counter()

        def task() -> Any:
            _requested.at = at
            try:
                return fn(*args, **kwargs)
            finally:
                _requested.at = None

        return submit(task)

    pool.submit = submitted


def _end(call: Call) -> float:
    return call.ended


READS = ("GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems")
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "BatchExecuteStatement")
# DynamoDB ends a Query or Scan page once it has read 1 MB (DynamoDB Local does not; see Recorder's page cap).
PAGE_BYTES = 1024 * 1024


def item_kind(sort_key: str) -> str:
    """The kind of an item of the table, by its sort key: what comes before its first `#` (`MEM`, `Q`, `A`, ...)."""
    return sort_key.partition("#")[0]


_SHADOW_KEEP = frozenset(
    {"TableName", "IndexName", "KeyConditionExpression", "ExclusiveStartKey", "Limit", "ScanIndexForward"}
    | {"Segment", "TotalSegments", "ConsistentRead"}
)
_PLACEHOLDER = re.compile(r"[:#][A-Za-z0-9_]+")
_PARTIQL_UPDATE = re.compile(r'^UPDATE\s+"(?P<table>[^"]+)"\s+(?P<rest>.*)$', re.IGNORECASE | re.DOTALL)
_PARTIQL_TERM = re.compile(r"\b(\w+)\s*(=|<>|<=|>=|<|>)\s*\?")


def shadow_read_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A Query or Scan that evaluates exactly the same items and returns them whole: no filter, no projection,
    no Select, and only the expression names and values the key condition still uses."""
    kept = {key: value for key, value in params.items() if key in _SHADOW_KEEP}
    used = set(_PLACEHOLDER.findall(params.get("KeyConditionExpression", "")))
    for name in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        values = {key: value for key, value in params.get(name, {}).items() if key in used}
        if values:
            kept[name] = values
    return kept


class Recorder:
    """Records the calls `client` makes (from any thread) while `recording()` is active.

    With `shadow` (an uncounted client on the same endpoint) it also computes each call's units: reads by
    re-running them unfiltered, writes from consistent reads of the item before and after. Without it, it only
    counts calls (cheap enough to leave on while timing).
    """

    def __init__(
        self,
        client: Any,
        shape: TableShape,
        page_items: int | None = None,
        kinds: Mapping[str, int] | None = None,
        indexes: Mapping[str, int] | None = None,
    ) -> None:
        """`page_items`: the most items any Query or Scan of `client` may read, always (recording or not): with the
        namespace's largest item, PAGE_BYTES // its size models DynamoDB's 1 MB page, which DynamoDB Local lacks.
        `kinds`: the same per kind of item (item_kind), for a Query of one id range of one kind (a search segment).
        `indexes`: the same per index, for a Query of an index (whose page is 1 MB of its entries, not of items)."""
        self._shape = shape
        self._page_items = page_items
        self._kinds = kinds or {}
        self._indexes = indexes or {}
        self._lock = threading.Lock()
        self._active: Recording | None = None
        self._shadow: Any = None
        client.meta.events.register("before-parameter-build.dynamodb.*", self._before)
        client.meta.events.register("after-call.dynamodb.*", self._after)

    @contextmanager
    def recording(self, shadow: Any = None) -> Iterator[Recording]:
        recording = Recording()
        self._active, self._shadow = recording, shadow
        try:
            yield recording
        finally:
            self._active, self._shadow = None, None

    def _before(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        if self._page_items is not None and model.name in ("Query", "Scan"):
            params["Limit"] = min(params.get("Limit", self._page_limit(params)), self._page_limit(params))
        if self._active is None:
            return
        at, _requested.at = getattr(_requested, "at", None), None  # only a task's first call was requested then
        context["bench_started"] = at if at is not None else time.perf_counter()
        context["bench_params"] = dict(params)
        if self._shadow is not None and model.name in WRITES:
            context["bench_old"] = [self._image(key) for key, _, _ in self._write_targets(model.name, params)]

    def _page_limit(self, params: Mapping[str, Any]) -> int:
        """The most items one page of this Query or Scan reads on AWS: of its index's entries, or of its kind."""
        assert self._page_items is not None
        if "IndexName" in params:
            return self._indexes.get(params["IndexName"], self._page_items)
        first = params.get("ExpressionAttributeValues", {}).get(":first", {}).get("S")
        return self._kinds.get(item_kind(first), self._page_items) if first else self._page_items

    def _after(self, parsed: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        recording = self._active
        params = context.get("bench_params")
        if recording is None or params is None:
            return
        call = Call(
            model.name,
            threading.get_ident(),
            started=context["bench_started"],
            ended=time.perf_counter(),
            failed=parsed.get("Error", {}).get("Code"),
            params=params,
        )
        if model.name in ("Query", "Scan"):
            call.returned = int(parsed.get("Count", len(parsed.get("Items", []))))
        if self._shadow is not None:
            self._units(call, model.name, params, context.get("bench_old", []), parsed.get("LastEvaluatedKey"))
            if model.name == "BatchExecuteStatement":
                # Each statement succeeds or fails on its own: a failed one wrote nothing (its units are the read).
                self._statement_units(call, params, parsed, context.get("bench_old", []))
        with self._lock:
            recording.calls.append(call)

    def _image(self, key: Mapping[str, Any]) -> Item | None:
        response = self._shadow.get_item(TableName=key["__table"], Key=key["__key"], ConsistentRead=True)
        item: Item | None = response.get("Item")
        return item

    def _write_targets(self, operation: str, params: Mapping[str, Any]) -> list[tuple[dict[str, Any], int, bool]]:
        """(table and key, unit multiplier, is a condition check) of each item a write touches."""
        if operation == "PutItem":
            return [({"__table": params["TableName"], "__key": self._shape.key_of(params["Item"])}, 1, False)]
        if operation in ("UpdateItem", "DeleteItem"):
            return [({"__table": params["TableName"], "__key": params["Key"]}, 1, False)]
        targets = []
        if operation == "TransactWriteItems":
            for entry in params["TransactItems"]:
                (kind, action), *_ = entry.items()
                key = self._shape.key_of(action["Item"]) if kind == "Put" else action["Key"]
                targets.append(({"__table": action["TableName"], "__key": key}, 2, kind == "ConditionCheck"))
        elif operation == "BatchExecuteStatement":
            for statement in params["Statements"]:
                targets.append((_partiql_update_key(statement, self._shape.keys), 1, False))
        elif operation == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    key = self._shape.key_of(request["PutRequest"]["Item"]) if "PutRequest" in request else None
                    key = key or request["DeleteRequest"]["Key"]
                    targets.append(({"__table": table, "__key": key}, 1, False))
        return targets

    def _units(
        self,
        call: Call,
        operation: str,
        params: Mapping[str, Any],
        old: list[Item | None],
        last_key: Mapping[str, Any] | None = None,
    ) -> None:
        if operation in ("Query", "Scan"):
            shadow_call: Callable[..., Any] = getattr(self._shadow, "query" if operation == "Query" else "scan")
            items = _evaluated(shadow_call, shadow_read_params(params), last_key)
            index = params.get("IndexName")
            consistent = bool(params.get("ConsistentRead")) and index is None
            call.evaluated = len(items)
            call.rcu = read_units(sum(entry_size(self._shape, index, item) for item in items), consistent)
            call.read(index or self._kind_read(params, items), call.rcu, call.evaluated)
        elif operation == "GetItem":
            item = self._image({"__table": params["TableName"], "__key": params["Key"]})
            call.evaluated = 1 if item else 0
            call.returned = call.evaluated
            call.rcu = read_units(item_size(item), bool(params.get("ConsistentRead")))
            call.read(self._kind_of(params["Key"]), call.rcu, call.evaluated)
        elif operation in ("BatchGetItem", "TransactGetItems"):
            if operation == "BatchGetItem":
                keys = [
                    ({"__table": table, "__key": key}, bool(request.get("ConsistentRead")), 1)
                    for table, request in params["RequestItems"].items()
                    for key in request["Keys"]
                ]
            else:
                keys = [
                    ({"__table": entry["Get"]["TableName"], "__key": entry["Get"]["Key"]}, True, 2)
                    for entry in params["TransactItems"]
                ]
            for key, consistent, factor in keys:
                item = self._image(key)
                units = factor * read_units(item_size(item), consistent)
                call.evaluated += 1 if item else 0
                call.rcu += units
                call.read(self._kind_of(key["__key"]), units, 1 if item else 0)
            call.returned = call.evaluated
        elif operation == "BatchExecuteStatement":
            pass  # per statement: _statement_units
        elif operation in WRITES:
            failed = call.failed is not None
            for (key, factor, check), before in zip(self._write_targets(operation, params), old, strict=True):
                after = before if failed or check else self._image(key)
                call.evaluated += 1
                call.wcu += factor * write_units(max(item_size(before), item_size(after)))
                if not failed and not check:
                    call.wcu += index_write_units(self._shape, before, after)

    def _kind_of(self, key: Mapping[str, Any]) -> str:
        """The kind of the item at `key` (its sort key's prefix; a counter's or a total's whole sort key)."""
        return item_kind(str(key[self._shape.keys[-1]]["S"]))

    def _kind_read(self, params: Mapping[str, Any], items: list[Item]) -> str:
        """The kind of item a Query or Scan of the table read: its first item's, or the kind its range starts at."""
        if items:
            return self._kind_of(items[0])
        first = params.get("ExpressionAttributeValues", {}).get(":first", {}).get("S")
        return item_kind(first) if first else ""

    def _statement_units(
        self, call: Call, params: Mapping[str, Any], parsed: Mapping[str, Any], old: list[Item | None]
    ) -> None:
        targets = self._write_targets("BatchExecuteStatement", params)
        answers = parsed.get("Responses", [])
        for (key, factor, _), before, answer in zip(targets, old, answers, strict=True):
            failed = "Error" in answer
            after = before if failed else self._image(key)
            call.evaluated += 1
            call.wcu += factor * write_units(max(item_size(before), item_size(after)))
            if not failed:
                call.wcu += index_write_units(self._shape, before, after)


def _partiql_update_key(statement: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The table and key of a PartiQL `UPDATE "<table>" SET ... WHERE <key> = ? AND ...` with `?` parameters."""
    match = _PARTIQL_UPDATE.match(statement["Statement"])
    if match is None:
        raise ValueError(f"not a PartiQL UPDATE: {statement['Statement']!r}")
    rest, parameters = match["rest"], statement["Parameters"]
    where = rest.upper().index(" WHERE ")
    before_where = rest[:where].count("?")
    found: dict[str, Any] = {}
    for position, (name, operator) in enumerate(_PARTIQL_TERM.findall(rest[where:])):
        if name in keys and operator == "=":
            found[name] = parameters[before_where + position]
    if set(found) != set(keys):
        raise ValueError(f"the WHERE of {statement['Statement']!r} does not name the whole key by parameters")
    return {"__table": match["table"], "__key": found}


def _evaluated(read: Callable[..., Any], params: dict[str, Any], last_key: Mapping[str, Any] | None) -> list[Item]:
    """The items the real call evaluated: from its start key up to and including its LastEvaluatedKey (to the end
    when it had none). Paging the unfiltered read to that key, rather than trusting one unfiltered page to stop at
    the same place, matters on DynamoDB Local, which sizes a filtered page by what it returns."""
    if last_key is not None:
        params.pop("Limit", None)
    items: list[Item] = []
    while True:
        response = read(**params)
        for item in response.get("Items", []):
            items.append(item)
            if last_key is not None and all(item.get(name) == value for name, value in last_key.items()):
                return items
        if "LastEvaluatedKey" not in response:
            return items
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def plain(value: Any) -> Any:
    """A TypeDeserializer result made JSON-friendly (Decimal to int or float)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [plain(element) for element in value]
    if isinstance(value, dict):
        return {key: plain(element) for key, element in value.items()}
    return value
