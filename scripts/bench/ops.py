"""Per operation on Amazon DynamoDB Local, through MemoryService only: calls, items, units, CPU and latency, each
listing against its lower bound (one Query of just the page) and each namespace against a naive full read. Reads are
made as deployed doors make them, for a caller's API key, so each pays its read fence (core.repository.LiveKey)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping
from typing import Any

from bench.capacity import (
    READS,
    WRITES,
    Call,
    Recorder,
    Recording,
    TableShape,
    item_kind,
    item_size,
    plain,
    read_units,
    shadow_read_params,
)
from bench.dataset import Q_WORD, TAG, Namespace, memory_body
from bench.recall import CountingEmbedder, created_with_related, question
from bench.timing import Timing, timed
from core.contract import RetrievalQuery
from core.history import HistoryQuery
from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.recall.query import RecallQuery
from core.recall.related import RelatedQuery
from core.recall.service import RecallService

LIST_OFFSET = 50
DEEP_OFFSET = 5000
LISTINGS: dict[str, dict[str, Any]] = {
    "list": {},
    "list_offset": {"offset": LIST_OFFSET},
    "search_q": {"q": Q_WORD},
    "search_tag": {"tag": TAG},
    # As the MCP tool prime_memory_context calls it (src/handlers/mcp/tools.py PRIME_*).
    "prime": {"status": "active", "sort": "updated_at", "limit": 20},
    "list_100": {"limit": 100},
    "list_invalid": {"status": "invalid"},  # about 10% of the rows
    "list_deep": {"offset": DEEP_OFFSET},  # only where the namespace holds that many
    # Ordered by last use, which no index orders: the access items of the namespace, then the page's records.
    "list_by_use": {"sort": "last_accessed_at"},
}
# A memory's life (issue 14): a patched memory's history read, a restore, a purge of a deleted memory.
LIFECYCLE = ("history", "restore", "purge")
# recall: a question (bench.recall.QUESTIONS), the default filters and page (limit 10). related: GET
# /memories/{id}/related's default (3); create_related: a create and its related check, as create_memory answers one.
RELATED = ("related", "create_related")
# Keeping memories true: one memory superseded by another (POST /memories/{id}/supersede), and a create that
# supersedes one (POST /memories with `supersedes`).
SUPERSEDING = ("supersede", "create_superseding")
# Recall and a `q` search from a process's warm copy of the namespace (core.warm; `recall` and `search_q` are cold: a
# process's first read, every digest or search copy): `_warm` after one read and no change since (but those the change
# index lists again at each refresh: every change of the last changes.WINDOW_SECONDS), `_warm_changed` with CHANGES
# changes written through the service between timed calls (half creates, half content patches). The recalls ask the
# bench's 8 questions in turn; a warm one reads no record whatever its page (it answers from the digests).
WARM = ("recall_warm", "search_q_warm", "recall_warm_changed", "search_q_warm_changed")
CHANGES = 10
# What the largest namespaces measure (the other operations cost the same at any size, or grow as these do).
RECALL_AND_Q = ("search_q", "recall", *WARM)
OPERATIONS = ("create", "get", "patch", "delete", *LIFECYCLE, *LISTINGS, "recall", *RELATED, *SUPERSEDING, *WARM)
# Measured again with today's repository (bench/baseline.py) in the same run, for the targets that compare with it.
TODAY = ("list_100", "list_deep", "search_q")


# Untimed runs of each listing and recall before it is timed (both ways of it): see OperationBench._measure.
WARMUP = 3
# The kind of item (capacity.item_kind) a read fence reads: the caller's API key, `KEY#<key id>`.
FENCE_KIND = "KEY"


def fence_reads(recording: Recording, shape: TableShape) -> list[Call]:
    """The read fence's calls: a strongly consistent GetItem of the caller's key item, one per keyed read."""
    sort_key = shape.keys[-1]
    return [
        call
        for call in recording.calls
        if call.operation == "GetItem" and item_kind((call.params or {})["Key"][sort_key]["S"]) == FENCE_KIND
    ]


def stamped_rows(recording: Recording) -> int:
    """Rows the writes of a listing stamp: one per UpdateItem, one per statement of a batch."""
    return sum(
        len(call.params["Statements"]) if call.operation == "BatchExecuteStatement" and call.params else 1
        for call in recording.calls
        if call.operation in WRITES
    )


class OperationBench:
    def __init__(
        self,
        service: MemoryService,
        recorder: Recorder,
        shadow: Any,
        shape: TableShape,
        seed: int,
        today: MemoryService | None = None,
        page_items: int | None = None,
        recall: tuple[RecallService, CountingEmbedder] | None = None,
        key_ids: Mapping[str, str] | None = None,
        warm: tuple[MemoryService, RecallService] | None = None,
    ) -> None:
        """`recall`: the recall service over `service`'s store and the embedder both embed with, counted. `key_ids`:
        the id of an API key of each namespace, which its reads are made for (behind their read fence). `service` and
        `recall` read cold (no warm copy); `warm`: the same services over a store that keeps warm copies (WARM)."""
        self._warm = warm
        self._key_ids = key_ids or {}
        self._page_items = page_items
        self._recall = recall
        self._service = service
        self._today = today
        self._recorder = recorder
        self._shadow = shadow
        self._shape = shape
        self._rng = random.Random(seed)  # noqa: S311  # benchmark choices, not secrets

    def _actions(
        self, namespace: Namespace, total: int, service: MemoryService | None = None
    ) -> dict[str, Callable[[], object]]:
        service, name, rng = service or self._service, namespace.name, self._rng
        key_id = self._key_ids.get(name)
        ids = list(namespace.active)
        rng.shuffle(ids)
        if len(ids) < 6 * total + 1:
            raise SystemExit(f"namespace {name} has too few active memories for {total} of each write")
        pools = [ids[i * total : (i + 1) * total] for i in range(6)]
        patched, patches, deletes, restores, purges = pools[0], iter(pools[0]), iter(pools[1]), pools[2], pools[3]
        superseded, superseded_at_creation = iter(pools[4]), iter(pools[5])
        reads = ids[6 * total :]

        def patch() -> Memory:
            return service.update(name, next(patches), MemoryChanges.parse({"content": "patched " + Q_WORD[:3]}), 1)

        restoring, purging = iter(restores), iter(purges)

        actions: dict[str, Callable[[], object]] = {
            "create": lambda: service.create(name, NewMemory.parse(memory_body(rng))),
            "get": lambda: service.get(name, rng.choice(reads), key_id=key_id),
            "patch": patch,
            "delete": lambda: service.delete(name, next(deletes)),
            "history": lambda: service.history(name, rng.choice(patched), HistoryQuery(), key_id),
            "restore": lambda: service.restore(name, next(restoring)),
            "purge": lambda: service.purge(name, next(purging)),
            "supersede": lambda: service.supersede(name, rng.choice(reads), [next(superseded)], key_id=key_id),
            "create_superseding": lambda: service.create(
                name, NewMemory.parse({**memory_body(rng), "supersedes": [next(superseded_at_creation)]})
            ),
        }

        # What a restore and a purge act on: deleted memories, deleted (untimed) just before those are timed.
        def delete_all(pool: list[int]) -> Callable[[], None]:
            def run() -> None:
                for memory_id in pool:
                    service.delete(name, memory_id)

            return run

        self._setup.update({"restore": delete_all(restores), "purge": delete_all(purges)})
        for op, fields in LISTINGS.items():
            query = RetrievalQuery.parse(fields)
            if query.offset >= namespace.visible:
                continue
            actions[op] = lambda query=query: service.search(name, query, key_id=key_id)  # type: ignore[misc]  # mypy cannot type a lambda with a default
        if self._recall is not None and service is self._service:
            recall = self._recall[0]
            actions["recall"] = lambda: recall.recall(name, RecallQuery.parse({"query": question(rng)}), key_id=key_id)
            actions["related"] = lambda: recall.related.related(name, rng.choice(reads), RelatedQuery(), key_id)
            actions["create_related"] = lambda: created_with_related(
                service, recall.related, name, NewMemory.parse(memory_body(rng)), key_id
            )
        if self._warm is not None and service is self._service:
            actions.update(self._warm_actions(name, key_id, reads))
        return actions

    def _warm_actions(self, name: str, key_id: str | None, reads: list[int]) -> dict[str, Callable[[], object]]:
        """WARM's reads, and (in `_between`) the changes written before each of the `_changed` ones."""
        assert self._warm is not None
        memories, recall = self._warm
        service, rng, searched = self._service, self._rng, RetrievalQuery.parse(LISTINGS["search_q"])

        def search() -> object:
            return memories.search(name, searched, key_id=key_id)

        def recalled() -> object:
            return recall.recall(name, RecallQuery.parse({"query": question(rng)}), key_id=key_id)

        def changes() -> None:
            for n in range(CHANGES):
                if n % 2:
                    service.update(
                        name, rng.choice(reads), MemoryChanges.parse({"content": memory_body(rng)["content"]})
                    )
                else:
                    service.create(name, NewMemory.parse(memory_body(rng)))

        self._between.update({"recall_warm_changed": changes, "search_q_warm_changed": changes})
        return {
            "recall_warm": recalled,
            "search_q_warm": search,
            "recall_warm_changed": recalled,
            "search_q_warm_changed": search,
        }

    def run(
        self, namespace: Namespace, reps: int, capacity_reps: int, only: tuple[str, ...] | None = None
    ) -> dict[str, Any]:
        """Each operation's figures (`only`: these operations alone, none of today's)."""
        self._setup: dict[str, Callable[[], object]] = {}
        self._between: dict[str, Callable[[], object]] = {}
        actions = self._actions(namespace, reps + capacity_reps)
        if self._today is not None:
            setup, self._setup = self._setup, {}
            today = self._actions(namespace, reps + capacity_reps, self._today)
            self._setup = setup  # only the measured service's restores and purges need deleted memories
            actions.update({f"{op}@today": today[op] for op in TODAY if op in today})
        results: dict[str, Any] = {}
        partition: dict[str, Any] | None = None
        for op in [*OPERATIONS, *(f"{op}@today" for op in TODAY)]:
            if op not in actions or (only is not None and op not in only):
                continue
            entry, last = self._measure(op, actions[op], reps, capacity_reps)
            if op == "get":
                partition = self._partition_of(last)
            results[op] = entry
        if partition is not None:
            results["naive"] = self._naive(partition, reps)
        return results

    def _measure(
        self, op: str, action: Callable[[], object], reps: int, capacity_reps: int
    ) -> tuple[dict[str, Any], Recording]:
        """Time `reps` counted runs, then cost `capacity_reps` more; the figures and the last costed recording."""
        counted: list[Recording] = []
        embeds: list[int] = []  # the embedder's calls in each counted run: Bedrock requests, deployed
        embedder = self._recall[1] if self._recall is not None else None

        def counting() -> None:
            before = embedder.total() if embedder else 0
            with self._recorder.recording() as recording:
                action()
            counted.append(recording)
            embeds.append(embedder.total() - before if embedder else 0)

        if op in self._setup:
            self._setup.pop(op)()
        if op.removesuffix("@today") in LISTINGS or op in ("recall", *RELATED, *WARM):
            # DynamoDB Local runs on a JVM: a statement kind it has not run yet (PartiQL batches, say) is slow
            # until compiled, which AWS's fleet never is. Both ways of a listing are timed warm. A warm copy is made
            # by the first of these reads.
            for _ in range(WARMUP):
                action()
        between = self._between.get(op)
        timing = timed(counting, reps, before=between)
        costed: list[Recording] = []
        for _ in range(capacity_reps):
            if between is not None:
                between()
            with self._recorder.recording(self._shadow) as recording:
                action()
            costed.append(recording)
        entry = self._entry(op, timing, counted, costed, reps)
        if embedder is not None:
            entry["embed_calls"] = statistics.median(embeds)
        return entry, costed[-1]

    def _entry(
        self, op: str, timing: Timing, counted: list[Recording], costed: list[Recording], reps: int
    ) -> dict[str, Any]:
        """One operation's figures: timing from the counted runs, units and items from the costed ones, and for a
        listing its stamps and its bounds."""
        entry = {
            **timing.summary(),
            "calls": statistics.median(rec.count() for rec in counted),
            "read_calls": statistics.median(rec.count(*READS) for rec in counted),
            "read_rounds": statistics.median(rec.sequential(*READS) for rec in counted),
            "rounds": statistics.median(rec.sequential() for rec in counted),
            "write_calls": statistics.median(rec.count(*WRITES) for rec in counted),
            "rcu": statistics.median(rec.rcu for rec in costed),
            "wcu": statistics.median(rec.wcu for rec in costed),
            "items_read": statistics.median(
                sum(call.evaluated for call in rec.calls if call.operation in READS) for rec in costed
            ),
            "items_returned": statistics.median(
                sum(call.returned for call in rec.calls if call.operation in READS) for rec in costed
            ),
            "operations": sorted({call.operation for rec in costed for call in rec.calls}),
            # What the read fence adds (within the figures above): the targets judge a read's plan without it.
            "fence_reads": statistics.median(len(fence_reads(rec, self._shape)) for rec in counted),
            "fence_rcu": statistics.median(sum(call.rcu for call in fence_reads(rec, self._shape)) for rec in costed),
            # What the units are made of (by index, or kind of item), in the costed run of the median units.
            "reads_by_kind": sorted(costed, key=lambda rec: rec.rcu)[(len(costed) - 1) // 2].read_by_kind(),
        }
        listing = op.removesuffix("@today")
        if listing in LISTINGS:
            stamp_wcu = sum(call.wcu for rec in costed for call in rec.calls if call.operation in WRITES)
            rows = sum(stamped_rows(rec) for rec in costed)
            entry["stamps"] = statistics.median(stamped_rows(rec) for rec in costed)
            entry["wcu_per_stamp"] = stamp_wcu / rows if rows else 0.0
            entry["stamp_threads"] = max(
                len({call.thread for call in rec.calls if call.operation in WRITES}) for rec in costed
            )
            query = RetrievalQuery.parse(LISTINGS[listing])
            entry["lower_bound"] = self._lower_bound(costed[-1], query.offset + query.limit, reps)
            entry["pages_needed"] = self._pages_needed(costed[-1], listing, query.offset + query.limit)
        return entry

    def _first_read(self, recording: Recording) -> dict[str, Any] | None:
        for call in recording.calls:
            if call.operation in ("Query", "Scan") and call.params is not None:
                return call.params
        return None

    def _lower_bound(self, recording: Recording, limit: int, reps: int) -> dict[str, Any] | None:
        """One Query on the index the listing read first, same key condition, Limit = the rows it must reach
        (offset + limit), no filter, eventually consistent."""
        first = self._first_read(recording)
        if first is None:
            return None
        params = shadow_read_params(first)
        params.pop("ExclusiveStartKey", None)
        params["Limit"] = limit
        items = self._shadow.query(**params).get("Items", [])
        timing = timed(lambda: self._shadow.query(**params), reps)
        return {
            "index": params.get("IndexName", "table"),
            "limit": limit,
            "items": len(items),
            "rcu": read_units(sum(item_size(item) for item in items), consistent=False),
            **timing.summary(),
        }

    def _pages_needed(self, recording: Recording, op: str, rows: int) -> int:
        """Index pages a listing needs: those holding the first offset+limit rows, or for q/tag (matched in
        content the index cannot see) every page of the namespace; a page holds at most 1 MB."""
        first = self._first_read(recording)
        if first is None:
            return 1
        params = shadow_read_params(first)
        params.pop("ExclusiveStartKey", None)
        params.pop("Limit", None)
        if op not in ("search_q", "search_tag"):
            params["Limit"] = rows
        pages = 0
        while True:
            response = self._shadow.query(**params)
            pages += 1
            if "LastEvaluatedKey" not in response or op not in ("search_q", "search_tag"):
                return pages
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def _partition_of(self, recording: Recording) -> dict[str, Any] | None:
        """The namespace's partition key, as the service addressed it in its first keyed call of a get."""
        hash_key = self._shape.keys[0]
        for call in recording.calls:
            key = (call.params or {}).get("Key")
            if key and hash_key in key:
                return {hash_key: key[hash_key], "__table": call.params["TableName"]}  # type: ignore[index]  # params is set: it held the Key
        return None

    def _naive(self, partition: dict[str, Any], reps: int) -> dict[str, Any]:
        """Read every item of the namespace's partition (one paginated Query) and parse each into a record."""
        from boto3.dynamodb.types import TypeDeserializer

        hash_key = self._shape.keys[0]
        deserializer = TypeDeserializer()
        fields = set(Memory.model_fields)
        pages: list[float] = []

        def read_all() -> int:
            query: dict[str, Any] = {
                "TableName": partition["__table"],
                "KeyConditionExpression": "#h = :h",
                "ExpressionAttributeNames": {"#h": hash_key},
                "ExpressionAttributeValues": {":h": partition[hash_key]},
                **({"Limit": self._page_items} if self._page_items else {}),  # 1 MB pages, as the service's
            }
            records: list[Memory | dict[str, Any]] = []
            pages.clear()
            while True:
                response = self._shadow.query(**query)
                items = response.get("Items", [])
                pages.append(read_units(sum(item_size(item) for item in items), consistent=False))
                for item in items:
                    data = {name: plain(deserializer.deserialize(value)) for name, value in item.items()}
                    if fields <= data.keys() | {"last_accessed_at"}:
                        data.setdefault("last_accessed_at", None)
                        records.append(Memory.model_construct(**{name: data[name] for name in fields}))
                    else:
                        records.append(data)
                if "LastEvaluatedKey" not in response:
                    return len(records)
                query["ExclusiveStartKey"] = response["LastEvaluatedKey"]

        items = read_all()
        timing = timed(read_all, reps)
        return {"items_read": items, "pages": len(pages), "rcu": sum(pages), **timing.summary()}
