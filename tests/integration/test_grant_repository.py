"""OAuth grants (core.grants) on every store (in memory, DynamoDB Local): a code is redeemed once, a refresh token
rotates once, a reused one revokes its grant, and on DynamoDB every item expires by TTL and stays out of every
index and every namespace's memories."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from core.access import hash_key
from core.clientdocs.document import DocumentUrl, Fetched
from core.clientdocs.service import ClientDocuments
from core.consent import ConsentRefusedError
from core.contract import RetrievalQuery
from core.errors import AuthenticationError
from core.grant_terms import ACCESS_TTL, REFRESH_TTL, UNUSED_CLIENT_TTL, GrantError, Tokens
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from core.repository import KeyRepository
from tests.conftest import Engine, FakeClock

RESOURCE = "https://memory.example.com/mcp"
REDIRECT = "http://127.0.0.1:53682/callback"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
CALLER = "203.0.113.7"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime.now(UTC))


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


@pytest.fixture
def key_store(engine: Engine, table: str) -> KeyRepository:
    return engine.keys(table)


@pytest.fixture
def keys(key_store: KeyRepository, clock: FakeClock) -> KeyService:
    return KeyService(key_store, clock)


@pytest.fixture
def grants(engine: Engine, table: str, keys: KeyService, clock: FakeClock) -> GrantService:
    return GrantService(engine.grants(table), keys, clock)


@pytest.fixture
def client_id(grants: GrantService) -> str:
    grants.register("client-1", '{"client_name":"Test","redirect_uris":["' + REDIRECT + '"]}', [REDIRECT], CALLER)
    return "client-1"


def approve(grants: GrantService, keys: KeyService, client_id: str, scopes: tuple[str, ...] = ("read", "write")) -> str:
    _, key = keys.create("alice")
    return grants.approve(
        client_id=client_id,
        redirect_uri=REDIRECT,
        code_challenge=CHALLENGE,
        resource=RESOURCE,
        scopes=scopes,
        namespace="alice",
        api_key=key,
    )


def redeemed(grants: GrantService, keys: KeyService, client_id: str) -> Tokens:
    code = approve(grants, keys, client_id)
    grant = grants.pending_code(code, client_id)
    assert grant is not None
    return grants.redeem(grant)


def test_a_registered_client_reads_back_until_its_unused_window_ends(
    grants: GrantService, client_id: str, clock: FakeClock
) -> None:
    client = grants.client(client_id)
    assert client is not None
    assert '"client_name":"Test"' in client.metadata
    clock.advance(seconds=UNUSED_CLIENT_TTL.total_seconds())

    assert grants.client(client_id) is None


def test_a_code_redeems_once_into_tokens_for_its_namespace(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, client_id: str
) -> None:
    code = approve(grants, keys, client_id)
    grant = grants.pending_code(code, client_id)
    assert grant is not None

    tokens = grants.redeem(grant)
    principal = grants.verify(tokens.access_token, RESOURCE)

    assert (principal.namespace, principal.scopes) == ("alice", frozenset({"read", "write"}))
    assert principal.key_id == grant.key_id
    assert tokens.expires_in == ACCESS_TTL.total_seconds()
    with pytest.raises(GrantError):
        grants.redeem(grant)  # the same pending grant again: the code is spent
    assert grants.pending_code(code, client_id) is None  # and presenting it again revokes the grant
    with pytest.raises(AuthenticationError):
        GrantService(engine.grants(table), keys).verify(tokens.access_token, RESOURCE)  # a process without a cache


def test_after_forget_verified_a_token_whose_grant_was_revoked_elsewhere_is_refused_at_once(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, client_id: str
) -> None:
    # What a process restored from a SnapStart snapshot does: its cached verifications are as old as the snapshot.
    tokens = redeemed(grants, keys, client_id)
    grants.verify(tokens.access_token, RESOURCE)  # verified and cached here
    GrantService(engine.grants(table), keys).revoke(tokens.access_token, client_id)  # by another process

    grants.verify(tokens.access_token, RESOURCE)  # this cache cannot know
    grants.forget_verified()

    with pytest.raises(AuthenticationError):
        grants.verify(tokens.access_token, RESOURCE)


def test_two_redemptions_racing_give_one_set_of_tokens(grants: GrantService, keys: KeyService, client_id: str) -> None:
    code = approve(grants, keys, client_id)
    grant = grants.pending_code(code, client_id)
    assert grant is not None
    outcomes: list[Any] = []
    start = threading.Barrier(4)

    def redeem() -> None:
        start.wait()
        try:
            outcomes.append(grants.redeem(grant))
        except GrantError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=redeem) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len([outcome for outcome in outcomes if isinstance(outcome, Tokens)]) == 1
    assert len([outcome for outcome in outcomes if isinstance(outcome, GrantError)]) == 3


def test_a_refresh_token_rotates_once_and_its_reuse_revokes_the_grant(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, client_id: str
) -> None:
    tokens = redeemed(grants, keys, client_id)
    grant = grants.refreshable(tokens.refresh_token, client_id)
    assert grant is not None
    rotated = grants.rotate(grant, ["read"])

    assert grants.verify(rotated.access_token, RESOURCE).scopes == frozenset({"read"})
    assert grants.refreshable(tokens.refresh_token, client_id) is None  # reuse...
    assert grants.refreshable(rotated.refresh_token, client_id) is None  # ...ended the grant
    with pytest.raises(AuthenticationError):
        GrantService(engine.grants(table), keys).verify(rotated.access_token, RESOURCE)


def test_a_forged_refresh_token_naming_a_real_grant_changes_nothing(
    grants: GrantService, keys: KeyService, client_id: str
) -> None:
    tokens = redeemed(grants, keys, client_id)
    grant_id = tokens.refresh_token.split("_")[1]

    assert grants.refreshable(f"amr_{grant_id}_" + "x" * 43, client_id) is None
    assert grants.refreshable(tokens.refresh_token, client_id) is not None


def test_revoking_the_consenting_key_refuses_the_next_refresh_and_ends_the_grant(
    grants: GrantService, keys: KeyService, client_id: str
) -> None:
    tokens = redeemed(grants, keys, client_id)
    grant = grants.refreshable(tokens.refresh_token, client_id)
    assert grant is not None
    keys.revoke(grant.key_id)

    with pytest.raises(GrantError) as refused:
        grants.rotate(grant, ["read", "write"])

    assert refused.value.error == "invalid_grant"
    assert grants.refreshable(tokens.refresh_token, client_id) is None


def test_a_consent_with_a_key_revoked_elsewhere_after_this_process_cached_it_stores_no_grant(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, key_store: KeyRepository, client_id: str
) -> None:
    key, secret = keys.create("alice")
    keys.authenticate(secret)  # verified and cached here
    key_store.revoke(key.key_id)  # by another process (or a namespace erase deleting it): this cache cannot know

    with pytest.raises(ConsentRefusedError):
        grants.approve(
            client_id=client_id,
            redirect_uri=REDIRECT,
            code_challenge=CHALLENGE,
            resource=RESOURCE,
            scopes=("read",),
            namespace="alice",
            api_key=secret,
        )

    if engine.client is None:
        assert engine.tables[table][2].grants == {}
    else:
        items = engine.client.scan(TableName=table, ConsistentRead=True)["Items"]
        assert [item for item in items if item["pk"]["S"].startswith("OAUTH#GRANT#")] == []


def test_a_grant_ends_when_its_refresh_window_passes(
    grants: GrantService, keys: KeyService, client_id: str, clock: FakeClock
) -> None:
    tokens = redeemed(grants, keys, client_id)
    clock.advance(seconds=REFRESH_TTL.total_seconds())

    assert grants.refreshable(tokens.refresh_token, client_id) is None


def test_on_dynamodb_every_oauth_item_expires_by_ttl_and_is_in_no_index(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, client_id: str, clock: FakeClock
) -> None:
    if engine.client is None:
        pytest.skip("TTL and indexes are DynamoDB's")
    tokens = redeemed(grants, keys, client_id)
    grant = grants.refreshable(tokens.refresh_token, client_id)
    assert grant is not None
    grants.rotate(grant, ["read"])

    items = engine.client.scan(TableName=table, ConsistentRead=True)["Items"]
    oauth = [item for item in items if item["pk"]["S"].startswith("OAUTH#")]

    # The registration counted for its caller and in total (a WINDOW item each), beside the client and its grant.
    assert sorted(item["sk"]["S"].split("#")[0] for item in oauth) == ["CLIENT", "GRANT", "SPENT", "WINDOW", "WINDOW"]
    now = int(clock.now.timestamp())
    for item in oauth:
        assert (
            now < int(item["expires_at"]["N"]) <= now + REFRESH_TTL.total_seconds() + UNUSED_CLIENT_TTL.total_seconds()
        )
        assert not {"created_key", "updated_key", "accessed_key", "purge_shard", "deleted_at"} & set(item), item
    stored = "".join(str(item) for item in oauth)
    for secret in (tokens.access_token, tokens.refresh_token):
        assert secret not in stored  # only hashes are stored
    assert hash_key(tokens.refresh_token) in stored  # as the spent one


def test_grants_never_show_among_a_namespaces_memories(
    engine: Engine, table: str, grants: GrantService, keys: KeyService, client_id: str, clock: FakeClock
) -> None:
    redeemed(grants, keys, client_id)
    memories = MemoryService(engine.memories(table), clock)

    for status in ("active", "invalid", "deleted"):
        assert memories.search("alice", RetrievalQuery.parse({"status": status})).total == 0


DOCUMENT_URL = "https://client.example.com/oauth/client.json"


def document_of(url: DocumentUrl) -> Fetched:
    """The client's own metadata document, as its server would answer it (no network)."""
    return Fetched(json.dumps({"client_id": url.url, "redirect_uris": [REDIRECT]}).encode(), "max-age=3600")


def test_a_client_known_by_its_metadata_document_redeems_and_rotates_with_no_registration_stored(
    engine: Engine, table: str, keys: KeyService, clock: FakeClock
) -> None:
    grants = GrantService(engine.grants(table), keys, clock, documents=ClientDocuments(document_of, clock))
    tokens = redeemed(grants, keys, DOCUMENT_URL)
    grant = grants.refreshable(tokens.refresh_token, DOCUMENT_URL)
    assert grant is not None

    rotated = grants.rotate(grant, ["read"])

    assert grants.verify(rotated.access_token, RESOURCE).scopes == frozenset({"read"})
    assert engine.grants(table).get_client(DOCUMENT_URL) is None  # nothing registered, nothing extended
