"""The HTTP door end to end over moto (CONTRACT.md, "Operations over HTTP" and "Retrieval").

A PATCH with an empty body is the contract's read that stamps nothing ("a PATCH that changes nothing returns the
record unchanged ... does not stamp `last_accessed_at`"); `peek` uses it to see what a search or GET left stored.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.errors import StorageUnavailableError, WriteConflictError
from core.memories import MemoryService
from core.model import Memory
from core.repository import Commit, Loaded
from core.repository.commit import StaleLoadError
from handlers.auth import open_access
from handlers.http.app import create_app
from tests.conftest import FakeClock

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
RECORD_FIELDS = {
    "id",
    "content",
    "tags",
    "created_at",
    "updated_at",
    "last_accessed_at",
    "memory_type",
    "status",
    "version",
}
PROBLEM_JSON = "application/problem+json"


def create(http: TestClient, content: str = "a memory", **fields: Any) -> dict[str, Any]:
    response = http.post("/memories", json={"content": content, **fields})
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


def peek(http: TestClient, memory_id: int) -> dict[str, Any]:
    response = http.patch(f"/memories/{memory_id}", json={})
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


def patch(http: TestClient, memory_id: int, **changes: Any) -> dict[str, Any]:
    response = http.patch(f"/memories/{memory_id}", json=changes)
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


def search(http: TestClient, **params: Any) -> dict[str, Any]:
    response = http.get("/memories", params=params)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def ids(page: dict[str, Any]) -> list[int]:
    return [item["id"] for item in page["items"]]


def delete(http: TestClient, memory_id: int) -> None:
    assert http.delete(f"/memories/{memory_id}").status_code == 204


def assert_problem(response: Any, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    body = response.json()
    assert body["status"] == status
    assert {"type", "title", "status", "detail"} <= body.keys()


# --- POST /memories ---


def test_create_answers_201_with_the_record_its_location_and_its_etag(http: TestClient) -> None:
    response = http.post("/memories", json={"content": "likes green tea"})
    assert response.status_code == 201
    record = response.json()
    assert response.headers["location"] == f"/memories/{record['id']}"
    assert response.headers["etag"] == '"1"'
    assert response.headers["content-type"] == "application/json"


def test_a_new_record_has_exactly_the_contract_fields_and_defaults(http: TestClient) -> None:
    record = create(http, "  likes green tea \n")
    assert set(record) == RECORD_FIELDS
    assert record["id"] >= 1
    assert record["content"] == "likes green tea"
    assert record["tags"] == []
    assert record["memory_type"] == "fact"
    assert record["status"] == "active"
    assert record["version"] == 1
    assert record["last_accessed_at"] is None
    assert TIMESTAMP.fullmatch(record["created_at"])
    assert record["updated_at"] == record["created_at"]


def test_create_stores_the_given_tags_type_and_status_normalised(http: TestClient) -> None:
    record = create(http, "x", tags=[" Travel", "travel", "WORK"], memory_type="preference", status="invalid")
    assert (record["tags"], record["memory_type"], record["status"]) == (["travel", "work"], "preference", "invalid")
    assert http.get(f"/memories/{record['id']}").json()["tags"] == ["travel", "work"]


def test_ids_increase_and_are_never_reused_after_a_delete(http: TestClient) -> None:
    first, second = create(http)["id"], create(http)["id"]
    delete(http, second)
    third = create(http)["id"]
    assert first < second < third


def test_each_create_takes_a_later_timestamp(http: TestClient) -> None:
    first, second = create(http), create(http)
    assert first["created_at"] < second["created_at"]


# --- GET /memories/{id} ---


def test_get_answers_200_with_the_record_and_its_etag(http: TestClient) -> None:
    created = create(http, "x", tags=["a"])
    response = http.get(f"/memories/{created['id']}")
    assert response.status_code == 200
    assert response.headers["etag"] == '"1"'
    record = response.json()
    assert set(record) == RECORD_FIELDS
    assert {k: v for k, v in record.items() if k != "last_accessed_at"} == {
        k: v for k, v in created.items() if k != "last_accessed_at"
    }


def test_get_stamps_last_accessed_at_without_touching_version_or_updated_at(http: TestClient) -> None:
    created = create(http)
    record = http.get(f"/memories/{created['id']}").json()
    assert TIMESTAMP.fullmatch(record["last_accessed_at"])
    assert record["last_accessed_at"] > created["created_at"]
    assert (record["version"], record["updated_at"]) == (1, created["updated_at"])
    assert peek(http, created["id"])["last_accessed_at"] == record["last_accessed_at"]


def test_each_get_moves_last_accessed_at_forward(http: TestClient) -> None:
    memory_id = create(http)["id"]
    first = http.get(f"/memories/{memory_id}").json()["last_accessed_at"]
    second = http.get(f"/memories/{memory_id}").json()["last_accessed_at"]
    assert first < second


def test_the_etag_follows_the_version(http: TestClient) -> None:
    memory_id = create(http)["id"]
    patch(http, memory_id, content="changed")
    assert http.get(f"/memories/{memory_id}").headers["etag"] == '"2"'


def test_get_of_a_missing_id_is_404(http: TestClient) -> None:
    create(http)
    assert_problem(http.get("/memories/999"), 404)


def test_get_of_a_deleted_memory_is_404(http: TestClient) -> None:
    memory_id = create(http)["id"]
    delete(http, memory_id)
    assert_problem(http.get(f"/memories/{memory_id}"), 404)


@pytest.mark.parametrize(
    "raw_id",
    ["abc", "1.5", "-1", "0", "00", "1e3", "0x1", "+1", "%201", "1%20", "%EF%BC%91", "99999999999", "9" * 40],
)
def test_get_of_an_id_that_cannot_exist_is_404(http: TestClient, raw_id: str) -> None:
    create(http)
    assert_problem(http.get(f"/memories/{raw_id}"), 404)


# --- PATCH /memories/{id} ---


def test_a_patch_that_changes_a_field_bumps_version_by_one_and_moves_updated_at(http: TestClient) -> None:
    created = create(http, "old", tags=["a"])
    response = http.patch(f"/memories/{created['id']}", json={"content": "new"})
    assert response.status_code == 200
    assert response.headers["etag"] == '"2"'
    record = response.json()
    assert set(record) == RECORD_FIELDS
    assert (record["content"], record["tags"], record["version"]) == ("new", ["a"], 2)
    assert record["updated_at"] > created["updated_at"]
    assert TIMESTAMP.fullmatch(record["updated_at"])
    assert record["created_at"] == created["created_at"]


def test_a_patch_changing_every_editable_field_still_bumps_version_by_exactly_one(http: TestClient) -> None:
    memory_id = create(http)["id"]
    record = patch(http, memory_id, content="c", tags=["t"], memory_type="event", status="invalid")
    assert (record["content"], record["tags"], record["memory_type"], record["status"]) == (
        "c",
        ["t"],
        "event",
        "invalid",
    )
    assert record["version"] == 2


def test_successive_changing_patches_count_up_the_version(http: TestClient) -> None:
    memory_id = create(http)["id"]
    assert [patch(http, memory_id, content=f"v{n}")["version"] for n in range(2, 5)] == [2, 3, 4]


def test_a_patch_with_an_empty_body_returns_the_record_unchanged(http: TestClient) -> None:
    created = create(http)
    response = http.patch(f"/memories/{created['id']}", json={})
    assert response.status_code == 200
    assert response.headers["etag"] == '"1"'
    assert response.json() == created


def test_a_patch_with_identical_values_keeps_version_and_updated_at(http: TestClient) -> None:
    created = create(http, "same", tags=["a", "b"], memory_type="event", status="invalid")
    record = patch(http, created["id"], content="  same ", tags=["A", " b", "a"], memory_type="event", status="invalid")
    assert record == created


def test_a_no_op_patch_after_a_change_keeps_the_changed_version(http: TestClient) -> None:
    memory_id = create(http)["id"]
    changed = patch(http, memory_id, content="new")
    assert patch(http, memory_id, content="new") == changed


def test_a_patch_does_not_stamp_last_accessed_at(http: TestClient) -> None:
    memory_id = create(http)["id"]
    assert patch(http, memory_id, content="changed")["last_accessed_at"] is None
    stamped = http.get(f"/memories/{memory_id}").json()["last_accessed_at"]
    assert patch(http, memory_id, content="again")["last_accessed_at"] == stamped
    assert peek(http, memory_id)["last_accessed_at"] == stamped


def test_a_patch_with_if_match_naming_the_current_version_is_applied(http: TestClient) -> None:
    memory_id = create(http)["id"]
    response = http.patch(f"/memories/{memory_id}", json={"content": "new"}, headers={"If-Match": '"1"'})
    assert response.status_code == 200
    assert (response.json()["content"], response.headers["etag"]) == ("new", '"2"')


def test_a_patch_with_a_stale_if_match_is_412_and_changes_nothing(http: TestClient) -> None:
    memory_id = create(http)["id"]
    current = patch(http, memory_id, content="v2")
    response = http.patch(f"/memories/{memory_id}", json={"content": "lost"}, headers={"If-Match": '"1"'})
    assert_problem(response, 412)
    assert peek(http, memory_id) == current


def test_a_no_op_patch_with_a_stale_if_match_is_still_412(http: TestClient) -> None:
    memory_id = create(http)["id"]
    patch(http, memory_id, content="v2")
    assert_problem(http.patch(f"/memories/{memory_id}", json={}, headers={"If-Match": '"1"'}), 412)


def test_if_match_for_a_future_version_is_412(http: TestClient) -> None:
    memory_id = create(http)["id"]
    assert_problem(http.patch(f"/memories/{memory_id}", json={"content": "x"}, headers={"If-Match": '"2"'}), 412)


def test_if_match_star_matches_any_version(http: TestClient) -> None:
    memory_id = create(http)["id"]
    patch(http, memory_id, content="v2")
    response = http.patch(f"/memories/{memory_id}", json={"content": "v3"}, headers={"If-Match": "*"})
    assert response.status_code == 200
    assert response.json()["version"] == 3


@pytest.mark.parametrize("if_match", ["1", 'W/"1"', '"abc"', '""', '"1', '1"', '"01x"', "garbage", '"-1"', '"1.0"'])
def test_a_malformed_if_match_is_412_and_changes_nothing(http: TestClient, if_match: str) -> None:
    created = create(http)
    response = http.patch(f"/memories/{created['id']}", json={"content": "new"}, headers={"If-Match": if_match})
    assert_problem(response, 412)
    assert peek(http, created["id"]) == created


@pytest.mark.parametrize("if_match", ['"1", "2"', '"2", "1"', 'W/"1", "1"', '"7",, "1" ,', '"x,y", "1"'])
@pytest.mark.parametrize("changes", [{"content": "new"}, {"status": "invalid"}, {}])
def test_if_match_with_a_list_is_met_when_any_strong_tag_names_the_current_version(
    http: TestClient, if_match: str, changes: dict[str, Any]
) -> None:
    created = create(http)
    response = http.patch(f"/memories/{created['id']}", json=changes, headers={"If-Match": if_match})
    assert response.status_code == 200, response.text
    expected_version = 2 if changes else 1
    assert response.json()["version"] == expected_version
    assert response.headers["etag"] == f'"{expected_version}"'


@pytest.mark.parametrize("if_match", ['W/"1"', 'W/"1", W/"2"', '"2", "3"', '"01"', '"abc"', '""'])
@pytest.mark.parametrize("changes", [{"content": "new"}, {"status": "invalid"}])
def test_if_match_whose_tags_are_weak_or_name_another_version_is_a_version_412(
    http: TestClient, if_match: str, changes: dict[str, Any]
) -> None:
    created = create(http)
    response = http.patch(f"/memories/{created['id']}", json=changes, headers={"If-Match": if_match})
    assert_problem(response, 412)
    assert response.json()["type"] == "urn:agent-memory:problem:version-mismatch"
    assert "is at version 1" in response.json()["detail"]
    assert response.headers["etag"] == '"1"'
    assert peek(http, created["id"]) == created


@pytest.mark.parametrize("if_match", ["1", ";x", '"1', '1"', "garbage", '"1" "2"', ",", 'w/"1"', '"1";"2"'])
def test_a_malformed_if_match_is_a_412_naming_the_syntax_and_changes_nothing(http: TestClient, if_match: str) -> None:
    created = create(http)
    response = http.patch(f"/memories/{created['id']}", json={"content": "new"}, headers={"If-Match": if_match})
    assert_problem(response, 412)
    body = response.json()
    assert body["type"] == "urn:agent-memory:problem:malformed-if-match"
    assert body["title"] == "If-Match is malformed"
    assert body["detail"].startswith("If-Match must be * or a comma-separated list of entity tags")
    assert repr(if_match) in body["detail"]
    assert "version 1" not in body["detail"]
    assert "etag" not in response.headers
    assert peek(http, created["id"]) == created


def test_if_match_star_on_a_missing_memory_is_404(http: TestClient) -> None:
    assert_problem(http.patch("/memories/42", json={"content": "x"}, headers={"If-Match": "*"}), 404)


def test_a_patch_of_a_missing_memory_is_404(http: TestClient) -> None:
    assert_problem(http.patch("/memories/42", json={"content": "x"}), 404)


def test_a_patch_of_a_deleted_memory_is_404_even_with_a_matching_if_match(http: TestClient) -> None:
    memory_id = create(http)["id"]
    delete(http, memory_id)
    assert_problem(http.patch(f"/memories/{memory_id}", json={"content": "x"}), 404)
    assert_problem(http.patch(f"/memories/{memory_id}", json={}, headers={"If-Match": '"1"'}), 404)


@pytest.mark.parametrize("raw_id", ["abc", "1.5", "-1", "0", "99999999999"])
def test_a_patch_of_an_id_that_cannot_exist_is_404(http: TestClient, raw_id: str) -> None:
    create(http)
    assert_problem(http.patch(f"/memories/{raw_id}", json={"content": "x"}), 404)


# --- DELETE /memories/{id} ---


def test_delete_answers_204_with_no_body(http: TestClient) -> None:
    memory_id = create(http)["id"]
    response = http.delete(f"/memories/{memory_id}")
    assert response.status_code == 204
    assert response.content == b""


def test_after_a_delete_get_patch_and_delete_are_404(http: TestClient) -> None:
    memory_id = create(http)["id"]
    delete(http, memory_id)
    assert_problem(http.get(f"/memories/{memory_id}"), 404)
    assert_problem(http.patch(f"/memories/{memory_id}", json={"content": "x"}), 404)
    assert_problem(http.delete(f"/memories/{memory_id}"), 404)


def test_delete_is_soft_keeping_version_and_updated_at(http: TestClient) -> None:
    memory_id = create(http, "keep me", tags=["t"])["id"]
    before = patch(http, memory_id, content="kept")
    delete(http, memory_id)
    (after,) = search(http, status="deleted")["items"]
    assert after["status"] == "deleted"
    assert {k: after[k] for k in ("id", "content", "tags", "created_at", "updated_at", "version", "memory_type")} == {
        k: before[k] for k in ("id", "content", "tags", "created_at", "updated_at", "version", "memory_type")
    }


def test_delete_of_a_missing_memory_is_404(http: TestClient) -> None:
    assert_problem(http.delete("/memories/7"), 404)


@pytest.mark.parametrize("raw_id", ["abc", "1.5", "-1", "0", "99999999999"])
def test_delete_of_an_id_that_cannot_exist_is_404(http: TestClient, raw_id: str) -> None:
    create(http)
    assert_problem(http.delete(f"/memories/{raw_id}"), 404)


# --- GET /memories: filters ---


def test_retrieval_without_status_leaves_out_deleted_but_keeps_active_and_invalid(http: TestClient) -> None:
    active, invalid, gone = create(http)["id"], create(http, status="invalid")["id"], create(http)["id"]
    delete(http, gone)
    assert ids(search(http)) == [active, invalid]


@pytest.mark.parametrize("status", ["active", "invalid", "deleted"])
def test_a_status_filter_returns_only_that_status(http: TestClient, status: str) -> None:
    by_status = {"active": create(http)["id"], "invalid": create(http, status="invalid")["id"]}
    by_status["deleted"] = create(http)["id"]
    delete(http, by_status["deleted"])
    page = search(http, status=status)
    assert ids(page) == [by_status[status]]
    assert page["items"][0]["status"] == status


def test_a_memory_type_filter_returns_only_that_type(http: TestClient) -> None:
    create(http, memory_type="fact")
    wanted = [create(http, memory_type="preference")["id"], create(http, memory_type="preference")["id"]]
    create(http, memory_type="event")
    assert ids(search(http, memory_type="preference")) == wanted
    assert ids(search(http, memory_type="identity")) == []


def test_a_tag_filter_matches_whole_tags_only(http: TestClient) -> None:
    exact = create(http, tags=["work", "travel"])["id"]
    create(http, tags=["travel-plans"])
    create(http, "travel is in the content only")
    assert ids(search(http, tag="travel")) == [exact]
    assert ids(search(http, tag="  TRAVEL ")) == [exact]


def test_a_q_filter_matches_content_or_any_tag_ignoring_case(http: TestClient) -> None:
    in_content = create(http, "Booked a flight to PARIS")["id"]
    in_tag = create(http, "unrelated", tags=["paris-trip"])["id"]
    create(http, "Rome", tags=["travel"])
    assert ids(search(http, q="paris")) == [in_content, in_tag]
    assert ids(search(http, q="PaRiS")) == [in_content, in_tag]


@pytest.mark.parametrize(("q", "expected"), [("%", [1]), ("_", [2]), ("\\", [3]), ("a%b", []), ("x_y", [2])])
def test_percent_underscore_and_backslash_in_q_match_only_themselves(
    http: TestClient, q: str, expected: list[int]
) -> None:
    create(http, "100% sure")
    create(http, "x_y")
    create(http, "C:\\temp")
    create(http, "aXb and xzy")
    assert ids(search(http, q=q)) == expected


@pytest.mark.parametrize("field", ["q", "tag"])
def test_an_empty_q_or_tag_is_the_same_as_leaving_it_out(http: TestClient, field: str) -> None:
    create(http, tags=["a"])
    create(http, tags=["b"])
    assert ids(search(http, **{field: ""})) == ids(search(http)) == [1, 2]


def test_filters_combine_with_and(http: TestClient) -> None:
    wanted = create(http, "Paris in May", tags=["travel"], memory_type="event", status="invalid")["id"]
    create(http, "Paris in May", tags=["travel"], memory_type="event")
    create(http, "Paris in May", tags=["travel"], memory_type="fact", status="invalid")
    create(http, "Paris in May", tags=["work"], memory_type="event", status="invalid")
    create(http, "Rome in May", tags=["travel"], memory_type="event", status="invalid")
    page = search(http, status="invalid", memory_type="event", tag="travel", q="paris")
    assert ids(page) == [wanted]
    assert page["total"] == 1


# --- GET /memories: sort ---


def test_the_default_sort_is_id_ascending(http: TestClient, clock: FakeClock) -> None:
    first = create(http)["id"]
    clock.advance(seconds=-60)
    second = create(http)["id"]
    assert ids(search(http)) == ids(search(http, sort="id")) == [first, second]


def test_created_at_sorts_newest_first_with_ties_by_id_descending(http: TestClient, clock: FakeClock) -> None:
    clock.freeze()
    a, b = create(http)["id"], create(http)["id"]
    clock.advance(seconds=1)
    c = create(http)["id"]
    clock.advance(seconds=-5)
    d = create(http)["id"]
    clock.advance(seconds=60)
    patch(http, d, content="updated last, created first")
    patch(http, a, content="updated too")
    assert ids(search(http, sort="created_at")) == [c, b, a, d]


def test_updated_at_sorts_newest_first_with_ties_by_id_descending(http: TestClient, clock: FakeClock) -> None:
    a, b, c, d = (create(http)["id"] for _ in range(4))
    clock.freeze()
    clock.advance(seconds=10)
    patch(http, a, content="changed")
    patch(http, c, content="changed")
    assert ids(search(http, sort="updated_at")) == [c, a, d, b]


def test_last_accessed_at_sorts_newest_first_then_never_accessed_by_id_descending(
    http: TestClient, clock: FakeClock
) -> None:
    one, two, three, four, five, six = (create(http)["id"] for _ in range(6))
    http.get(f"/memories/{two}")
    http.get(f"/memories/{four}")
    clock.freeze()
    clock.advance(seconds=1)
    http.get(f"/memories/{one}")
    http.get(f"/memories/{five}")
    assert ids(search(http, sort="last_accessed_at")) == [five, one, four, two, six, three]


@pytest.mark.parametrize("sort", ["id", "created_at", "updated_at"])
def test_pages_neither_overlap_nor_skip_under_ties(http: TestClient, clock: FakeClock, sort: str) -> None:
    clock.freeze()
    for _ in range(7):
        create(http)
    everything = ids(search(http, sort=sort, limit=100))
    pages = [ids(search(http, sort=sort, limit=3, offset=offset)) for offset in (0, 3, 6)]
    assert [memory_id for page in pages for memory_id in page] == everything
    assert sorted(everything) == list(range(1, 8))


def test_pages_by_last_access_cover_every_memory_once(http: TestClient, clock: FakeClock) -> None:
    clock.freeze()
    for _ in range(7):
        create(http)
    pages = [ids(search(http, sort="last_accessed_at", limit=3, offset=offset)) for offset in (0, 3, 6)]
    assert sorted(memory_id for page in pages for memory_id in page) == list(range(1, 8))


# --- GET /memories: the envelope ---


def test_the_envelope_has_items_total_limit_offset_and_has_more(http: TestClient) -> None:
    for _ in range(5):
        create(http)
    page = search(http, limit=2, offset=1)
    assert set(page) == {"items", "total", "limit", "offset", "has_more"}
    assert (ids(page), page["total"], page["limit"], page["offset"], page["has_more"]) == ([2, 3], 5, 2, 1, True)
    assert all(set(item) == RECORD_FIELDS for item in page["items"])


def test_the_default_envelope_serves_limit_ten_from_offset_zero(http: TestClient) -> None:
    for _ in range(12):
        create(http)
    page = search(http)
    assert (len(page["items"]), page["total"], page["limit"], page["offset"], page["has_more"]) == (10, 12, 10, 0, True)


@pytest.mark.parametrize(
    ("limit", "offset", "expected"),
    [
        (2, 0, ([1, 2], True)),
        (2, 3, ([4, 5], False)),
        (2, 4, ([5], False)),
        (5, 0, ([1, 2, 3, 4, 5], False)),
        (3, 5, ([], False)),
        (3, 50, ([], False)),
    ],
)
def test_has_more_is_offset_plus_items_below_total(
    http: TestClient, limit: int, offset: int, expected: tuple[list[int], bool]
) -> None:
    for _ in range(5):
        create(http)
    page = search(http, limit=limit, offset=offset)
    assert (ids(page), page["has_more"]) == expected
    assert (page["total"], page["limit"], page["offset"]) == (5, limit, offset)
    assert page["has_more"] == (page["offset"] + len(page["items"]) < page["total"])


def test_a_limit_over_one_hundred_is_served_and_reported_as_one_hundred(http: TestClient) -> None:
    for _ in range(101):
        create(http)
    page = search(http, limit=1000)
    assert (len(page["items"]), page["limit"], page["total"], page["has_more"]) == (100, 100, 101, True)


def test_an_empty_store_answers_an_empty_envelope(http: TestClient) -> None:
    assert search(http) == {"items": [], "total": 0, "limit": 10, "offset": 0, "has_more": False}


def test_total_counts_every_match_before_paging(http: TestClient) -> None:
    for n in range(6):
        create(http, tags=["even"] if n % 2 == 0 else ["odd"])
    page = search(http, tag="even", limit=1)
    assert (ids(page), page["total"], page["has_more"]) == ([1], 3, True)


# --- GET /memories: access stamping ---


def test_a_search_stamps_every_returned_item_with_one_new_timestamp(http: TestClient) -> None:
    for _ in range(3):
        create(http)
    earlier = http.get("/memories/2").json()["last_accessed_at"]
    page = search(http)
    stamps = {item["last_accessed_at"] for item in page["items"]}
    assert len(stamps) == 1
    (stamp,) = stamps
    assert TIMESTAMP.fullmatch(stamp)
    assert stamp > earlier
    assert [peek(http, memory_id)["last_accessed_at"] for memory_id in (1, 2, 3)] == [stamp] * 3


def test_a_search_leaves_rows_outside_the_page_untouched(http: TestClient) -> None:
    for _ in range(5):
        create(http)
    page = search(http, limit=2, offset=1)
    assert ids(page) == [2, 3]
    assert [peek(http, memory_id)["last_accessed_at"] for memory_id in (1, 4, 5)] == [None] * 3


def test_a_search_leaves_filtered_out_rows_untouched(http: TestClient) -> None:
    wanted = create(http, tags=["x"])["id"]
    other = create(http, tags=["y"])["id"]
    other_type = create(http, tags=["x"], memory_type="event")["id"]
    assert ids(search(http, tag="x", memory_type="fact")) == [wanted]
    assert peek(http, other)["last_accessed_at"] is None
    assert peek(http, other_type)["last_accessed_at"] is None


def test_a_search_with_no_matches_stamps_nothing(http: TestClient) -> None:
    memory_id = create(http, "tea")["id"]
    assert ids(search(http, q="coffee")) == []
    assert peek(http, memory_id)["last_accessed_at"] is None


def test_a_stamp_never_changes_version_or_updated_at(http: TestClient) -> None:
    memory_id = create(http)["id"]
    changed = patch(http, memory_id, content="v2")
    (item,) = search(http)["items"]
    assert (item["version"], item["updated_at"]) == (2, changed["updated_at"])
    stored = peek(http, memory_id)
    assert (stored["version"], stored["updated_at"]) == (2, changed["updated_at"])
    assert stored["last_accessed_at"] == item["last_accessed_at"]


def test_a_stamp_never_revives_a_deleted_memory(http: TestClient) -> None:
    kept = create(http)["id"]
    gone = create(http)["id"]
    delete(http, gone)
    assert ids(search(http)) == [kept]
    (item,) = search(http, status="deleted")["items"]
    assert (item["id"], item["status"]) == (gone, "deleted")
    assert_problem(http.get(f"/memories/{gone}"), 404)
    assert_problem(http.patch(f"/memories/{gone}", json={}), 404)
    assert ids(search(http)) == [kept]
    (again,) = search(http, status="deleted")["items"]
    assert (again["status"], again["version"], again["updated_at"]) == ("deleted", 1, item["updated_at"])


def test_a_stamp_never_moves_last_accessed_at_backwards(http: TestClient, clock: FakeClock) -> None:
    memory_id = create(http)["id"]
    clock.advance(seconds=60)
    latest = http.get(f"/memories/{memory_id}").json()["last_accessed_at"]
    clock.advance(seconds=-120)
    search(http)
    assert peek(http, memory_id)["last_accessed_at"] == latest
    assert http.get(f"/memories/{memory_id}").json()["last_accessed_at"] == latest


def test_a_search_for_deleted_memories_stores_the_stamp_it_shows(http: TestClient, clock: FakeClock) -> None:
    accessed, never = create(http)["id"], create(http)["id"]
    http.get(f"/memories/{accessed}")
    delete(http, accessed)
    delete(http, never)
    clock.advance(seconds=10)
    (shown,) = search(http, status="deleted", offset=1, limit=1)["items"]
    assert shown["id"] == never
    assert ids(search(http, status="deleted", sort="last_accessed_at")) == [never, accessed]


# --- storage trouble and colliding writes ---


class UnavailableRepository:
    """A store that is briefly unavailable for every call."""

    def __getattr__(self, operation: str) -> Any:
        def unavailable(*args: Any, **kwargs: Any) -> Any:
            raise StorageUnavailableError(f"storage is busy ({operation}); retry shortly", retry_after_seconds=2)

        return unavailable


class CollidingRepository:
    """A store where every conditional write loses to a concurrent writer."""

    stored = Memory(
        id=1,
        content="stored",
        tags=[],
        created_at="2026-04-06T14:12:00.000001Z",
        updated_at="2026-04-06T14:12:00.000001Z",
        last_accessed_at=None,
        memory_type="fact",
        status="active",
        version=1,
    )

    def next_id(self, namespace: str, live_key: object = None) -> int:
        return 1

    def load(self, namespace: str, memory_id: int) -> Loaded:
        return Loaded(self.stored, 1, None, purging=False, token=None)

    def commit(self, commit: Commit) -> None:
        (change,) = commit.changes
        if change.before is None:
            raise WriteConflictError("id 1 is already taken; retry the create")
        raise StaleLoadError(change.after.id)  # a concurrent writer got in first, every time


def client_over(repository: object, clock: FakeClock) -> TestClient:
    service = MemoryService(repository, clock)  # type: ignore[arg-type]  # a stand-in for the port
    return TestClient(create_app(service, open_access(), version="test"))


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/memories", {"content": "x"}),
        ("GET", "/memories/1", None),
        ("PATCH", "/memories/1", {"content": "x"}),
        ("DELETE", "/memories/1", None),
        ("GET", "/memories", None),
    ],
)
def test_storage_briefly_unavailable_is_503_with_retry_after(
    clock: FakeClock, method: str, path: str, body: dict[str, str] | None
) -> None:
    with client_over(UnavailableRepository(), clock) as client:
        response = client.request(method, path, json=body)
    assert_problem(response, 503)
    assert response.headers["retry-after"] == "2"


def test_a_create_colliding_with_a_write_in_flight_is_409_with_retry_after(clock: FakeClock) -> None:
    with client_over(CollidingRepository(), clock) as client:
        response = client.post("/memories", json={"content": "x"})
    assert_problem(response, 409)
    assert response.headers["retry-after"] == "1"


def test_a_status_patch_that_keeps_losing_to_concurrent_writers_is_409(clock: FakeClock) -> None:
    # The store retries a PATCH whose conditional write loses, then gives up with a conflict; one that changes
    # nothing writes nothing, so it cannot lose.
    with client_over(CollidingRepository(), clock) as client:
        assert_problem(client.patch("/memories/1", json={"status": "invalid"}), 409)
        assert client.patch("/memories/1", json={"status": "active"}).json()["version"] == 1


# --- health ---


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_an_unknown_route_is_a_404_problem_naming_the_routes_that_exist(http: TestClient, method: str) -> None:
    response = http.request(method, "/foo/bar")
    assert_problem(response, 404)
    assert response.json()["detail"] == (
        f"no route {method} /foo/bar; the routes are /changes, /console, /console/{{name}}, /healthz, /key, "
        "/keys, /keys/{key_id}, /memories, /memories/{memory_id}, "
        "/memories/{memory_id}/history, /memories/{memory_id}/related, /memories/{memory_id}/restore, "
        "/memories/{memory_id}/supersede, /openapi.json, /recall"
    )


def test_healthz_answers_200(http: TestClient) -> None:
    response = http.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


# --- Idempotency-Key ---


def test_a_create_retried_with_its_idempotency_key_answers_the_first_response_and_stores_nothing(
    http: TestClient,
) -> None:
    headers = {"Idempotency-Key": "5b0c9a3e-retry-me"}
    first = http.post("/memories", json={"content": "Prefers tea", "tags": ["food"]}, headers=headers)
    http.get(first.headers["location"])
    again = http.post("/memories", json={"tags": ["FOOD"], "content": " Prefers tea "}, headers=headers)

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.json()["last_accessed_at"] is None
    assert (again.headers["location"], again.headers["etag"]) == (first.headers["location"], first.headers["etag"])
    assert http.get("/memories").json()["total"] == 1


def test_an_idempotency_key_reused_with_another_body_is_422_naming_the_header(http: TestClient) -> None:
    headers = {"Idempotency-Key": "k-1"}
    http.post("/memories", json={"content": "Prefers tea"}, headers=headers)
    response = http.post("/memories", json={"content": "Prefers coffee"}, headers=headers)

    assert_problem(response, 422)
    assert [error["field"] for error in response.json()["errors"]] == ["Idempotency-Key"]
    assert http.get("/memories").json()["total"] == 1


@pytest.mark.parametrize("key", ["", "two words", "k" * 256])
def test_a_malformed_idempotency_key_is_422_and_creates_nothing(http: TestClient, key: str) -> None:
    response = http.post("/memories", json={"content": "x"}, headers={"Idempotency-Key": key})

    assert_problem(response, 422)
    assert [error["field"] for error in response.json()["errors"]] == ["Idempotency-Key"]
    assert http.get("/memories").json()["total"] == 0


def test_the_openapi_document_declares_the_idempotency_key_header(http: TestClient) -> None:
    parameters = http.get("/openapi.json").json()["paths"]["/memories"]["post"]["parameters"]
    assert [p["name"] for p in parameters if p["in"] == "header"] == ["Idempotency-Key"]


def test_the_etag_is_the_version_in_quotes() -> None:
    from handlers.http.input import etag

    assert (
        etag(
            Memory(
                id=1,
                content="x",
                tags=[],
                created_at="t",
                updated_at="t",
                last_accessed_at=None,
                memory_type="fact",
                status="active",
                version=3,
            )
        )
        == '"3"'
    )
