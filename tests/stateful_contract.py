"""A stateful check of both doors against one plain Python model of CONTRACT.md.

Hypothesis drives random sequences of create, get, patch (with and without `If-Match` / `expected_version`,
sometimes stale), delete, restore, purge, history reads and listing (`GET /memories`, `search_memories`,
`prime_memory_context`), each step through a door it chooses: the HTTP door (a FastAPI TestClient) or the MCP door
(the SDK's own in-process Client, driven from this synchronous machine through an anyio blocking portal); restore,
purge and history are HTTP only. Both doors sit over the same service, the same store and a FakeClock that
sometimes stands still to make ties, so one sequence interleaves them freely and proves they are one contract.
After every call the answer is compared with what the model predicts, and after every step every stored record is
compared with the model: ids, versions, `updated_at`, `last_accessed_at` stamps, soft delete, purge, every
memory's history revision by revision, and the exact order, totals and pages of every listing.

The machine takes an Engine (tests/conftest.py), so the same machine runs on the in-memory store (tests/handlers)
and on Amazon DynamoDB Local (tests/integration); each run gets its own table.
"""

from __future__ import annotations

from contextlib import ExitStack
from datetime import timedelta
from typing import Any, Literal

from anyio.from_thread import start_blocking_portal
from fastapi.testclient import TestClient
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from mcp.client import Client
from mcp.types import CallToolResult

from core.clock import format_timestamp
from core.contract import RetrievalQuery
from core.memories import MemoryService
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import NAMESPACE, Engine, FakeClock
from tests.handlers.conftest import tool_text

Record = dict[str, Any]
Door = Literal["http", "mcp"]

# Derandomized: CI explores the same bounded sequences every run, so a red build always means a code change.
SETTINGS = settings(max_examples=25, stateful_step_count=20, deadline=None, derandomize=True)
# The doors are explored widely over the in-memory store (about 0.2 s a sequence); DynamoDB Local (about 1.5 s a
# sequence) runs fewer, as the end-to-end check that the adapter keeps the same contract under the same machine.
IN_MEMORY_SETTINGS = settings(SETTINGS, max_examples=60)
DYNAMODB_LOCAL_SETTINGS = settings(SETTINGS, max_examples=10)

# Small vocabularies so that filters, no-op patches and ties happen often.
CONTENTS = st.sampled_from(["Alpha beta", "  alpha  ", "GAMMA ray", "delta_50%", "travel plans", "a\\b"])
TAG_VALUES = st.sampled_from(["travel", " Travel ", "travel-plans", "work", "WORK", "a_b", "x:1"])
TAGS = st.lists(TAG_VALUES, max_size=3)
MEMORY_TYPES = st.sampled_from(["preference", "fact", "identity", "event"])
WRITABLE_STATUSES = st.sampled_from(["active", "invalid"])
NEW_BODIES = st.fixed_dictionaries(
    {"content": CONTENTS}, optional={"tags": TAGS, "memory_type": MEMORY_TYPES, "status": WRITABLE_STATUSES}
)
SORTS = ["id", "created_at", "updated_at", "last_accessed_at"]
DOORS: st.SearchStrategy[Door] = st.sampled_from(["http", "mcp"])


def mostly_absent(values: list[Any]) -> st.SearchStrategy[Any]:
    """Leave a listing field out about four times in five, so pages often hold several rows to order."""
    return st.sampled_from([None] * (4 * len(values)) + values)


MEMORY_TYPE_FILTERS = mostly_absent(["preference", "fact", "identity", "event"])
TAG_FILTERS = mostly_absent(["", "travel", " TRAVEL ", "work", "travel-plans", "a_b", "x:1", "nope"])
Q_FILTERS = mostly_absent(["", "alpha", "A", "ph", "_", "%", "\\", "TRAV", "x:", " "])
OFFSETS = st.sampled_from([None, None, 0, 1, 2])


def normalize_tags(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(tag.strip().lower() for tag in tags))


def normalize(field: str, value: Any) -> Any:
    if field == "content":
        return value.strip()
    if field == "tags":
        return normalize_tags(value)
    return value


def sort_key(sort: str, record: Record) -> Any:
    if sort == "last_accessed_at":
        stamp = record["last_accessed_at"]
        return (stamp is not None, stamp or "", record["id"])
    return (record[sort], record["id"])


def not_found(tool: str, memory_id: int) -> str:
    """The MCP door's words for an unknown or deleted id: the HTTP 404's detail plus a hint."""
    return f"memory {memory_id} does not exist; find the right id with search_memories"


def version_mismatch(memory_id: int, version: int) -> str:
    """The MCP door's words for a stale `expected_version`, naming the current version like the HTTP 412."""
    return f"memory {memory_id} is at version {version}; read it again and retry with that version"


class StatefulContract(RuleBasedStateMachine):
    def __init__(self, engine: Engine) -> None:
        super().__init__()
        # Everything the run opens, closed in reverse order by teardown even when a step failed.
        self.resources = ExitStack()
        table = engine.new_table()
        if engine.client is not None:
            self.resources.callback(engine.client.delete_table, TableName=table)
        self.repository = engine.memories(table)
        self.clock = FakeClock()
        service = MemoryService(self.repository, self.clock)
        self.http = self.resources.enter_context(TestClient(create_app(service, open_access(), version="test")))
        # One MCP session for the whole run, on an event loop in the portal's thread; each tool call blocks on it.
        self.portal = self.resources.enter_context(start_blocking_portal())
        server = create_server(service, open_access(), version="test")
        self.mcp = self.resources.enter_context(self.portal.wrap_async_context_manager(Client(server)))
        self.model: dict[int, Record] = {}
        self.created = 0
        # Each memory's revisions, oldest first (as the history answers them, newest first, reversed), the status a
        # deleted memory had before its delete, and the ids purged for good.
        self.revisions: dict[int, list[Record]] = {}
        self.prior_status: dict[int, str] = {}
        self.purged: set[int] = set()

    def teardown(self) -> None:
        self.resources.close()

    # -- helpers ---------------------------------------------------------------------------------------------

    def now(self) -> str:
        """The last timestamp the service read: FakeClock keeps the latest reading in `now`."""
        return format_timestamp(self.clock.now)

    def target(self, data: st.DataObject) -> int:
        """An id that exists (live or deleted) most of the time, else one purged or never handed out."""
        known = sorted(self.model)
        return data.draw(st.sampled_from([*known, *known, *sorted(self.purged), self.created + 1]))

    def target_deleted(self, data: st.DataObject) -> int:
        """For a restore or a purge: a deleted memory most of the time, when there is one, else any target."""
        deleted = [memory_id for memory_id, record in sorted(self.model.items()) if record["status"] == "deleted"]
        live = sorted(set(self.model) - set(deleted))
        if not deleted and live and data.draw(st.booleans()) is True:
            # Deletes are one rule among many: make one here, so restores and purges often have something to act on.
            victim: int = data.draw(st.sampled_from(live))
            self.delete_one(victim, data.draw(DOORS))
            deleted = [victim]
        if deleted and data.draw(st.integers(0, 3)) > 0:
            return data.draw(st.sampled_from(deleted))
        return self.target(data)

    def revise(self, memory_id: int, change: str, changed_at: str, superseded_by: int | None = None) -> None:
        """The revision the model expects the change just made to leave."""
        record = {name: value for name, value in self.model[memory_id].items() if name != "last_accessed_at"}
        revisions = self.revisions.setdefault(memory_id, [])
        revisions.append(
            {
                "revision": len(revisions) + 1,
                "change": change,
                "changed_at": changed_at,
                "key_id": None,
                **record,
                **({} if superseded_by is None else {"superseded_by": superseded_by}),
            }
        )

    def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.mcp.call_tool, name, arguments)
        return result

    def tool_result(self, name: str, arguments: dict[str, Any]) -> Any:
        """A tool call that must succeed: its structured content."""
        result = self.call_tool(name, arguments)
        assert not result.is_error, tool_text(result)
        return result.structured_content

    def tool_error(self, name: str, arguments: dict[str, Any]) -> str:
        """A tool call that must fail: its error text."""
        result = self.call_tool(name, arguments)
        assert result.is_error, result.structured_content
        assert result.structured_content is None
        return tool_text(result)

    def assert_record(self, response: Any, expected: Record) -> None:
        assert response.json() == expected
        assert response.headers["ETag"] == f'"{expected["version"]}"'

    # -- the clock -------------------------------------------------------------------------------------------

    @rule()
    def freeze_clock(self) -> None:
        self.clock.freeze()

    @rule()
    def unfreeze_clock(self) -> None:
        self.clock.step = timedelta(milliseconds=1)

    @rule(seconds=st.integers(min_value=1, max_value=3))
    def advance_clock(self, seconds: int) -> None:
        self.clock.advance(seconds=seconds)

    # -- operations ------------------------------------------------------------------------------------------

    @initialize(bodies=st.lists(st.tuples(NEW_BODIES, DOORS), min_size=2, max_size=6), frozen=st.booleans())
    def seed(self, bodies: list[tuple[dict[str, Any], Door]], frozen: bool) -> None:
        """Start with a few records (sometimes created in the same instant) so listings have rows to order."""
        if frozen:
            self.clock.freeze()
        for body, door in bodies:
            self.create(body, door)

    @rule(body=NEW_BODIES, door=DOORS)
    def create(self, body: dict[str, Any], door: Door) -> None:
        if door == "http":
            response = self.http.post("/memories", json=body)
            assert response.status_code == 201, response.text
        else:
            created = self.tool_result("create_memory", body)
        expected = self.create_recorded(body, self.now())
        if door == "http":
            self.assert_record(response, expected)
            assert response.headers["Location"] == f"/memories/{self.created}"
        else:
            assert created == expected

    def create_recorded(self, body: dict[str, Any], now: str) -> Record:
        """The model after a create of `body` at `now`: the record it expects."""
        self.created += 1
        expected: Record = {
            "id": self.created,
            "content": body["content"].strip(),
            "tags": normalize_tags(body.get("tags", [])),
            "created_at": now,
            "updated_at": now,
            "last_accessed_at": None,
            "memory_type": body.get("memory_type", "fact"),
            "status": body.get("status", "active"),
            "version": 1,
        }
        self.model[self.created] = expected
        self.revise(self.created, "created", now)
        return expected

    @rule(data=st.data(), door=DOORS)
    def get(self, data: st.DataObject, door: Door) -> None:
        memory_id = self.target(data)
        record = self.model.get(memory_id)
        if record is None or record["status"] == "deleted":
            if door == "http":
                response = self.http.get(f"/memories/{memory_id}")
                assert response.status_code == 404, response.text
            else:
                assert self.tool_error("get_memory", {"id": memory_id}) == not_found("get_memory", memory_id)
            return
        if door == "http":
            response = self.http.get(f"/memories/{memory_id}")
            assert response.status_code == 200, response.text
        else:
            found = self.tool_result("get_memory", {"id": memory_id})
        now = self.now()
        assert record["last_accessed_at"] is None or record["last_accessed_at"] <= now
        record["last_accessed_at"] = now
        if door == "http":
            self.assert_record(response, record)
        else:
            assert found == record

    @rule(
        data=st.data(),
        changes=st.fixed_dictionaries(
            {},
            optional={"content": CONTENTS, "tags": TAGS, "memory_type": MEMORY_TYPES, "status": WRITABLE_STATUSES},
        ),
        precondition=st.sampled_from(["none", "none", "current", "current", "stale", "ahead", "star"]),
        door=DOORS,
    )
    def patch(self, data: st.DataObject, changes: dict[str, Any], precondition: str, door: Door) -> None:
        memory_id = self.target(data)
        record = self.model.get(memory_id)
        version = record["version"] if record else 1
        expected_version = {
            "none": None,
            "current": version,
            "stale": version - 1,
            "ahead": version + 1,
            "star": None,
        }[precondition]
        outcome = self.send_patch(door, memory_id, changes, precondition, expected_version)
        if outcome is None or self.patch_refused(door, outcome, memory_id, precondition, version) or record is None:
            return
        if door == "http":
            assert outcome.status_code == 200, outcome.text
        else:
            assert not outcome.is_error, tool_text(outcome)
        changed = {
            name: normalize(name, value) for name, value in changes.items() if normalize(name, value) != record[name]
        }
        if changed:
            record.update(changed)
            record["version"] += 1
            record["updated_at"] = self.now()
            self.revise(memory_id, "updated", record["updated_at"])
        # A PATCH never stamps last_accessed_at; a no-op keeps version and updated_at.
        if door == "http":
            self.assert_record(outcome, record)
        else:
            assert outcome.structured_content == record

    def send_patch(
        self, door: Door, memory_id: int, changes: dict[str, Any], precondition: str, expected_version: int | None
    ) -> Any:
        """The PATCH or update_memory call of `patch`; None when the call was bad input, refused as such here."""
        if door == "http":
            if_match = "*" if precondition == "star" else None if expected_version is None else f'"{expected_version}"'
            headers = {"If-Match": if_match} if if_match is not None else {}
            return self.http.patch(f"/memories/{memory_id}", json=changes, headers=headers)
        # MCP has no `*`: an explicit null expected_version plays it (no precondition).
        arguments: dict[str, Any] = {"id": memory_id, **changes}
        if precondition != "none":
            arguments["expected_version"] = expected_version
        if expected_version == 0:
            # Not a version at all: refused as bad input before the id is even looked up.
            text = self.tool_error("update_memory", arguments)
            assert text == "expected_version: must be an integer from 1 to 9999999999"
            return None
        return self.call_tool("update_memory", arguments)

    def patch_refused(self, door: Door, outcome: Any, memory_id: int, precondition: str, version: int) -> bool:
        """Whether the door refused the patch (no such memory, or a failed precondition), checked as it says so."""
        record = self.model.get(memory_id)
        if record is None or record["status"] == "deleted":
            if door == "http":
                assert outcome.status_code == 404, outcome.text
            else:
                assert outcome.is_error, outcome.structured_content
                assert tool_text(outcome) == not_found("update_memory", memory_id)
            return True
        if precondition in {"stale", "ahead"}:
            if door == "http":
                assert outcome.status_code == 412, outcome.text
                assert outcome.headers["ETag"] == f'"{version}"'
            else:
                assert outcome.is_error, outcome.structured_content
                assert tool_text(outcome) == version_mismatch(memory_id, version)
            return True
        return False

    @rule(data=st.data(), door=DOORS)
    def delete(self, data: st.DataObject, door: Door) -> None:
        self.delete_one(self.target(data), door)

    def delete_one(self, memory_id: int, door: Door) -> None:
        record = self.model.get(memory_id)
        gone = record is None or record["status"] == "deleted"
        if door == "http":
            response = self.http.delete(f"/memories/{memory_id}")
            if gone:
                assert response.status_code == 404, response.text
                return
            assert response.status_code == 204, response.text
            assert response.content == b""
        elif gone:
            assert self.tool_error("delete_memory", {"id": memory_id}) == not_found("delete_memory", memory_id)
            return
        else:
            assert self.tool_result("delete_memory", {"id": memory_id}) == {"id": memory_id, "status": "deleted"}
        assert record is not None
        self.prior_status[memory_id] = record["status"]
        record["status"] = "deleted"  # version and updated_at stay
        self.revise(memory_id, "deleted", self.now())
        # Gone from both doors at once.
        assert self.http.get(f"/memories/{memory_id}").status_code == 404
        assert self.tool_error("get_memory", {"id": memory_id}) == not_found("get_memory", memory_id)

    @rule(data=st.data(), door=DOORS, at_creation=st.booleans())
    def supersede(self, data: st.DataObject, door: Door, at_creation: bool) -> None:
        """Supersede 1 to 3 targets (now and then a missing, deleted or repeated one, or the superseding memory itself)
        by a new memory or by an existing one: all of them change, or (422 / a tool error naming the first bad entry)
        none of them does, nor is anything created."""
        if not at_creation and not self.model:
            return
        by = self.created + 1 if at_creation else self.target(data)
        ids = data.draw(st.lists(st.sampled_from([*sorted(self.model), by, self.created + 1]), min_size=1, max_size=3))
        field = "supersedes" if at_creation else "ids"
        # The superseding memory is checked first (404, then `id` when it is not active), then each entry.
        bad = self.supersede_refusal(ids, by, field)
        if not at_creation and (by not in self.model or self.model[by]["status"] == "deleted"):
            bad = "404"
        elif not at_creation and self.model[by]["status"] != "active":
            bad = "id"
        body = {"content": "A newer truth", "supersedes": ids}
        if door == "http":
            response = (
                self.http.post("/memories", json=body)
                if at_creation
                else self.http.post(f"/memories/{by}/supersede", json={"ids": ids})
            )
            if bad is not None:
                assert response.status_code == (404 if bad == "404" else 422), response.text
                assert bad == "404" or response.json()["errors"][0]["field"] == bad
                self.created += at_creation  # the refused create drew its id (ids may have gaps, never repeats)
                return
            assert response.status_code == (201 if at_creation else 200), response.text
        else:
            arguments = body if at_creation else {"id": by, "ids": ids}
            tool = "create_memory" if at_creation else "supersede_memories"
            if bad is not None:
                error = self.tool_error(tool, arguments)
                assert error == not_found(tool, by) if bad == "404" else f"{bad}:" in error, error
                self.created += at_creation
                return
            self.tool_result(tool, arguments)
        now = self.now()
        if at_creation:
            self.create_recorded(body, now)
        for memory_id in dict.fromkeys(ids):
            record = self.model[memory_id]
            record |= {"status": "invalid", "version": record["version"] + 1, "updated_at": now}
            self.revise(memory_id, "superseded", now, superseded_by=by)

    def supersede_refusal(self, ids: list[int], by: int, field: str) -> str | None:
        """The entry a supersede of `ids` by `by` is refused for first (repeated, itself, missing or deleted)."""
        for index, memory_id in enumerate(ids):
            if memory_id in ids[:index] or memory_id == by:
                return f"{field}[{index}]"
            if memory_id not in self.model or self.model[memory_id]["status"] == "deleted":
                return f"{field}[{index}]"
        return None

    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        memory_id = self.target_deleted(data)
        record = self.model.get(memory_id)
        response = self.http.post(f"/memories/{memory_id}/restore")
        if record is None or record["status"] != "deleted":
            assert response.status_code == 404, response.text
            return
        assert response.status_code == 200, response.text
        record["status"] = self.prior_status.pop(memory_id)  # version and updated_at stay
        self.revise(memory_id, "restored", self.now())
        self.assert_record(response, record)

    @rule(data=st.data())
    def purge(self, data: st.DataObject) -> None:
        memory_id = self.target_deleted(data)
        record = self.model.get(memory_id)
        response = self.http.delete(f"/memories/{memory_id}", params={"purge": "true"})
        if record is None or record["status"] != "deleted":
            assert response.status_code == 404, response.text
            return
        assert response.status_code == 204, response.text
        del self.model[memory_id], self.revisions[memory_id], self.prior_status[memory_id]
        self.purged.add(memory_id)
        assert self.http.get(f"/memories/{memory_id}/history").status_code == 404

    @rule(data=st.data(), limit=st.sampled_from([None, 1, 2, 150]), offset=OFFSETS)
    def history(self, data: st.DataObject, limit: int | None, offset: int | None) -> None:
        memory_id = self.target(data)
        params = {name: value for name, value in {"limit": limit, "offset": offset}.items() if value is not None}
        response = self.http.get(f"/memories/{memory_id}/history", params=params)
        if memory_id not in self.model:
            assert response.status_code == 404, response.text
            return
        assert response.status_code == 200, response.text
        newest_first = self.revisions[memory_id][::-1]
        served_limit, served_offset = min(limit or 10, 100), offset or 0
        page = newest_first[served_offset : served_offset + served_limit]
        assert response.json() == {
            "items": page,
            "total": len(newest_first),
            "limit": served_limit,
            "offset": served_offset,
            "has_more": served_offset + len(page) < len(newest_first),
        }

    @rule(
        door=st.sampled_from(["http", "search_memories"]),
        status=mostly_absent(["active", "invalid", "deleted"]),
        memory_type=MEMORY_TYPE_FILTERS,
        tag=TAG_FILTERS,
        q=Q_FILTERS,
        sort=st.sampled_from([None, *SORTS]),
        limit=st.sampled_from([None, None, 1, 2, 3, 150]),
        offset=OFFSETS,
    )
    def listing(
        self,
        door: str,
        status: str | None,
        memory_type: str | None,
        tag: str | None,
        q: str | None,
        sort: str | None,
        limit: int | None,
        offset: int | None,
    ) -> None:
        """`GET /memories` or `search_memories`: the same fields, the same defaults, the same envelope."""
        given = {"status": status, "memory_type": memory_type, "tag": tag, "q": q, "sort": sort, "limit": limit}
        params = {name: value for name, value in {**given, "offset": offset}.items() if value is not None}
        if door == "http":
            response = self.http.get("/memories", params=params)
            assert response.status_code == 200, response.text
            page = response.json()
        else:
            page = self.tool_result("search_memories", params)
        self.check_page(page, status, memory_type, tag, q, sort or "id", 10 if limit is None else limit, offset or 0)

    @rule(
        status=st.sampled_from(["default"] * 6 + ["null", "active", "invalid", "deleted"]),
        memory_type=MEMORY_TYPE_FILTERS,
        tag=TAG_FILTERS,
        q=Q_FILTERS,
        sort=st.sampled_from([None] * 4 + SORTS),
        limit=st.sampled_from([None, None, None, 1, 2, 3, 150]),
        offset=OFFSETS,
    )
    def prime(
        self,
        status: str,
        memory_type: str | None,
        tag: str | None,
        q: str | None,
        sort: str | None,
        limit: int | None,
        offset: int | None,
    ) -> None:
        """`prime_memory_context`: the retrieval fields with its own defaults (status=active, sort=updated_at,
        limit=20, offset=0); an explicit null status lifts the status filter, as its description says."""
        given = {"memory_type": memory_type, "tag": tag, "q": q, "sort": sort, "limit": limit, "offset": offset}
        params: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
        if status != "default":
            params["status"] = None if status == "null" else status
        page = self.tool_result("prime_memory_context", params)
        served_status = {"default": "active", "null": None}.get(status, status)
        served_sort = sort or "updated_at"
        self.check_page(
            page, served_status, memory_type, tag, q, served_sort, 20 if limit is None else limit, offset or 0
        )

    def check_page(
        self,
        page: Any,
        status: str | None,
        memory_type: str | None,
        tag: str | None,
        q: str | None,
        sort: str,
        limit: int,
        offset: int,
    ) -> None:
        """A listing served with these values is exactly the model's page, and stamps exactly its rows, at once."""
        wanted_tag = tag.strip().lower() if tag else None
        needle = q.casefold() if q else None

        def matches(record: Record) -> bool:
            if status is None and record["status"] == "deleted":
                return False
            if status is not None and record["status"] != status:
                return False
            if memory_type is not None and record["memory_type"] != memory_type:
                return False
            if wanted_tag and wanted_tag not in record["tags"]:
                return False
            return needle is None or (
                needle in record["content"].casefold() or any(needle in t.casefold() for t in record["tags"])
            )

        served_limit = min(limit, 100)
        hits = [record for record in self.model.values() if matches(record)]
        hits.sort(key=lambda record: sort_key(sort, record), reverse=sort != "id")
        window = hits[offset : offset + served_limit]

        if window:
            now = self.now()
            for record in window:
                assert record["last_accessed_at"] is None or record["last_accessed_at"] <= now
                record["last_accessed_at"] = now
        assert [item["id"] for item in page["items"]] == [record["id"] for record in window]
        assert page == {
            "items": window,
            "total": len(hits),
            "limit": served_limit,
            "offset": offset,
            "has_more": offset + len(window) < len(hits),
        }

    # -- invariants ------------------------------------------------------------------------------------------

    @invariant()
    def store_matches_model(self) -> None:
        """Every stored record, read straight from the repository (no stamp), is what the model says, and the
        store's listings (with their counted totals) hold exactly the model's ids."""
        stored = {memory_id: self.repository.get(NAMESPACE, memory_id) for memory_id in self.model}
        assert {mid: memory.model_dump() if memory else None for mid, memory in stored.items()} == self.model
        listed = []
        for status in (None, "deleted"):
            found = self.repository.find(NAMESPACE, RetrievalQuery.parse({"status": status, "limit": 100}))
            assert found.total == len(found.items)
            listed += [memory.id for memory in found.items]
        assert sorted(listed) == sorted(self.model)
        for memory_id in self.purged:
            assert self.repository.get(NAMESPACE, memory_id) is None

    @invariant()
    def history_matches_model(self) -> None:
        """Every memory's stored history is exactly the model's: no revision missing, doubled or extra."""
        for memory_id, revisions in self.revisions.items():
            stored = self.repository.history(NAMESPACE, memory_id, 100, 0)
            assert stored.total == len(revisions)
            assert [revision.model_dump() for revision in stored.items] == revisions[::-1]

    @invariant()
    def model_is_consistent(self) -> None:
        for memory_id, record in self.model.items():
            assert record["id"] == memory_id
            assert record["version"] >= 1
            assert record["created_at"] <= record["updated_at"]
            if record["version"] == 1:
                assert record["updated_at"] == record["created_at"]
