"""The KeyRepository contract on every store (in memory, DynamoDB Local): keys live beside memories in one
table and never mix with them."""

from __future__ import annotations

import pytest

from core.access import SCOPES, ApiKey
from core.contract import RetrievalQuery
from core.errors import WriteConflictError
from core.memories import MemoryService
from core.model import NewMemory
from core.repository import KeyRepository
from tests.conftest import Engine, FakeClock


def a_key(key_id: str = "0123456789ab", namespace: str = "alice", **fields: object) -> ApiKey:
    values: dict[str, object] = {
        "key_id": key_id,
        "namespace": namespace,
        "scopes": SCOPES,
        "created_at": "2026-04-06T14:12:00.000001Z",
        "expires_at": None,
        "revoked": False,
        "secret_hash": "ab" * 32,
        **fields,
    }
    return ApiKey(**values)  # type: ignore[arg-type]  # the fields above, with their types


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


@pytest.fixture
def keys(engine: Engine, table: str) -> KeyRepository:
    return engine.keys(table)


def test_a_stored_key_reads_back_field_for_field(keys: KeyRepository) -> None:
    stored = a_key(scopes=("read",), expires_at="2026-05-06T14:12:00.000001Z")

    keys.add(stored)

    assert keys.get(stored.key_id) == stored


def test_a_keys_name_reads_back_and_a_nameless_key_reads_as_none(keys: KeyRepository) -> None:
    named, nameless = a_key("0123456789ab", name="Ana's laptop · café"), a_key("ba9876543210")

    keys.add(named)
    keys.add(nameless)

    assert (keys.get(named.key_id), keys.get(nameless.key_id)) == (named, nameless)
    assert {key.key_id: key.name for key in keys.find("alice")} == {named.key_id: named.name, nameless.key_id: None}


def test_an_unknown_key_id_reads_as_none(keys: KeyRepository) -> None:
    assert keys.get("0123456789ab") is None


def test_adding_a_key_never_overwrites_one_with_the_same_id(keys: KeyRepository) -> None:
    first = a_key(namespace="alice")
    keys.add(first)

    with pytest.raises(WriteConflictError):
        keys.add(a_key(namespace="mallory"))

    assert keys.get(first.key_id) == first


def test_find_lists_every_key_or_one_namespaces(keys: KeyRepository) -> None:
    for key_id, namespace in [("000000000001", "alice"), ("000000000002", "bob"), ("000000000003", "alice")]:
        keys.add(a_key(key_id, namespace))

    assert sorted(key.key_id for key in keys.find(None)) == ["000000000001", "000000000002", "000000000003"]
    assert sorted(key.key_id for key in keys.find("alice")) == ["000000000001", "000000000003"]
    assert list(keys.find("carol")) == []


def test_revoke_marks_the_key_revoked_and_returns_it(keys: KeyRepository) -> None:
    keys.add(a_key())

    revoked = keys.revoke("0123456789ab")

    assert revoked == a_key(revoked=True)
    assert keys.get("0123456789ab") == revoked


def test_revoking_an_unknown_key_id_creates_nothing(keys: KeyRepository) -> None:
    assert keys.revoke("0123456789ab") is None
    assert list(keys.find(None)) == []


@pytest.mark.parametrize("namespace", ["alice", "KEYS", "keys"])
def test_keys_and_memories_share_the_table_without_seeing_each_other(
    engine: Engine, table: str, keys: KeyRepository, namespace: str
) -> None:
    memories = MemoryService(engine.memories(table), FakeClock())
    keys.add(a_key(namespace=namespace))
    memories.create(namespace, NewMemory.parse({"content": "The user keeps bees"}))

    found = memories.search(namespace, RetrievalQuery.parse({"sort": "updated_at"}))

    assert [memory.content for memory in found.items] == ["The user keeps bees"]
    assert [key.namespace for key in keys.find(None)] == [namespace]
