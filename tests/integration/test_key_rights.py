"""Who may revoke which key, and when a key was last used, on every store (in memory, DynamoDB Local): what GET /keys
and DELETE /keys/{key_id} stand on (core.keys)."""

from __future__ import annotations

import pytest

from core.errors import AuthenticationError, KeyNotFoundError, PermissionDeniedError, StorageUnavailableError
from core.keys import KeyService
from core.repository import KeyRepository
from tests.conftest import Engine, FakeClock


@pytest.fixture
def store(engine: Engine) -> KeyRepository:
    return engine.keys(engine.new_table())


def last_used(store: KeyRepository, key_id: str) -> str | None:
    key = store.get(key_id)
    assert key is not None
    return key.last_used_at


@pytest.fixture
def keys(store: KeyRepository, clock: FakeClock) -> KeyService:
    return KeyService(store, clock)


def test_a_key_with_the_keys_scope_revokes_another_key_of_its_namespace(keys: KeyService) -> None:
    _, person_token = keys.create("alice", ["read", "write", "keys"], name="person")
    agent, agent_token = keys.create("alice", ["read", "write"], name="agent")

    keys.revoke_as(keys.authenticate(person_token), agent.key_id)

    assert [key.revoked for key in keys.list("alice")] == [False, True]
    with pytest.raises(AuthenticationError, match="revoked"):
        keys.authenticate(agent_token)


def test_an_agents_read_write_key_never_revokes_the_persons_key(keys: KeyService) -> None:
    person, _ = keys.create("alice", ["read", "write", "keys"], name="person")
    _, agent_token = keys.create("alice", ["read", "write"], name="agent")

    with pytest.raises(PermissionDeniedError, match="lacks the 'keys' scope"):
        keys.revoke_as(keys.authenticate(agent_token), person.key_id)

    assert not any(key.revoked for key in keys.list("alice"))


def test_any_key_may_revoke_itself_whatever_its_scopes(keys: KeyService) -> None:
    agent, agent_token = keys.create("alice", ["write"])

    assert keys.revoke_as(keys.authenticate(agent_token), agent.key_id).revoked is True


@pytest.mark.parametrize("key_id", ["000000000000", "not-a-key-id", "", "0123456789AB"])
def test_an_unknown_or_malformed_key_id_is_key_not_found_for_a_key_that_may_revoke(
    keys: KeyService, key_id: str
) -> None:
    _, token = keys.create("alice", ["keys"])

    with pytest.raises(KeyNotFoundError):
        keys.revoke_as(keys.authenticate(token), key_id)


def test_another_namespaces_key_is_not_found_never_revoked(keys: KeyService) -> None:
    _, alice_token = keys.create("alice", ["read", "keys"])
    bob, _ = keys.create("bob", ["read", "write"])

    with pytest.raises(KeyNotFoundError, match=f"API key {bob.key_id} does not exist"):
        keys.revoke_as(keys.authenticate(alice_token), bob.key_id)

    assert keys.list("bob")[0].revoked is False


def test_a_key_without_the_keys_scope_is_refused_before_anything_tells_whether_the_id_exists(
    keys: KeyService,
) -> None:
    _, token = keys.create("alice", ["read", "write"])
    bob, _ = keys.create("bob", ["read"])
    refusals = []
    for key_id in (bob.key_id, "000000000000", "junk"):
        with pytest.raises(PermissionDeniedError) as refused:
            keys.revoke_as(keys.authenticate(token), key_id)
        refusals.append(str(refused.value))

    assert len(set(refusals)) == 1


def test_a_keys_first_use_is_recorded_and_a_new_one_never_before_the_hour_is_out(
    keys: KeyService, store: KeyRepository, clock: FakeClock
) -> None:
    key, token = keys.create("alice")
    assert last_used(store, key.key_id) is None

    keys.authenticate(token)
    first = last_used(store, key.key_id)
    clock.advance(minutes=59)
    keys.forget_verified()  # a cache miss reads the key again: its use is fresh, so nothing is written
    keys.authenticate(token)
    unchanged = last_used(store, key.key_id)
    clock.advance(minutes=2)
    keys.forget_verified()
    keys.authenticate(token)
    later = last_used(store, key.key_id)

    assert first is not None
    assert unchanged == first
    assert later is not None
    assert later > first


def test_noting_a_use_never_brings_back_an_unknown_key(store: KeyRepository) -> None:
    store.note_use("0123456789ab", "2026-04-06T14:12:00.000000Z", "2026-04-06T13:12:00.000000Z")

    assert store.get("0123456789ab") is None


def test_noting_a_use_keeps_a_fresher_one(keys: KeyService, store: KeyRepository) -> None:
    key, _ = keys.create("alice")
    store.note_use(key.key_id, "2026-04-06T15:00:00.000000Z", "2026-04-06T14:00:00.000000Z")

    store.note_use(key.key_id, "2026-04-06T15:30:00.000000Z", "2026-04-06T14:30:00.000000Z")

    assert last_used(store, key.key_id) == "2026-04-06T15:00:00.000000Z"


class BusyUses:
    """A key store whose writes of a use fail as a throttled table does; everything else works."""

    def __init__(self, inner: KeyRepository) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def note_use(self, key_id: str, at: str, stale_before: str) -> None:
        raise StorageUnavailableError("storage is busy (ThrottlingException); retry shortly")


def test_a_use_the_store_cannot_take_never_fails_the_request(store: KeyRepository, clock: FakeClock) -> None:
    keys = KeyService(BusyUses(store), clock)  # type: ignore[arg-type]  # the port, with one method failing
    key, token = keys.create("alice")

    assert keys.authenticate(token).key_id == key.key_id
    assert last_used(store, key.key_id) is None
