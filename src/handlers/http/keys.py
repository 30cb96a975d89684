"""`GET /keys` and `DELETE /keys/{key_id}`: the API keys of the caller's namespace as a person's console lists them
(names, scopes, times, state; never a secret or a hash), and revoking one (core.keys.KeyService.revoke_as says who
may). A door wired without a key service (an open local server, tests of other routes) has no keys to list."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from core.access import ALL_SCOPES, ApiKey, Principal, Scope, may_revoke
from core.errors import KeyNotFoundError
from core.keys import KeyService
from handlers.http.dependencies import Anyone, Reader, ThisDoor
from handlers.http.openapi import problem_doc

router = APIRouter()


class KeyListing(BaseModel):
    """One key of the namespace, never its secret or its hash."""

    model_config = ConfigDict(frozen=True)

    key_id: str = Field(description="The public key id (the 12 characters after `am_`), as histories name the key.")
    name: str | None = Field(description="What a person called the key (`keys create --name`); null when unnamed.")
    scopes: list[Scope] = Field(
        description="What the key may do: `read` (GET routes), `write` (the others), `keys` (revoke other keys)."
    )
    created_at: str = Field(description="When the key was created.")
    expires_at: str | None = Field(description="When the key stops working; null: never.")
    state: Literal["active", "revoked", "expired"] = Field(description="Whether the key works now.")
    last_used_at: str | None = Field(
        description="When the key last proved a request, to within an hour (it is written at most hourly); null: "
        "not since it was created. An OAuth grant the key consented to counts as the key."
    )


class KeyList(BaseModel):
    model_config = ConfigDict(frozen=True)

    items: list[KeyListing] = Field(description="The namespace's keys, oldest first; revoked and expired included.")


def _listing(key: ApiKey, now: datetime) -> KeyListing:
    return KeyListing(
        key_id=key.key_id,
        name=key.name,
        scopes=[scope for scope in ALL_SCOPES if scope in key.scopes],
        created_at=key.created_at,
        expires_at=key.expires_at,
        state=key.state(now),
        last_used_at=key.last_used_at,
    )


def _listed(keys: KeyService, caller: Principal) -> KeyList:
    listed, now = keys.of_namespace(caller), keys.now()
    return KeyList(items=[_listing(key, now) for key in listed])


def _revoke(keys: KeyService | None, caller: Principal, key_id: str) -> None:
    if keys is None:
        may_revoke(caller, key_id)
        raise KeyNotFoundError(key_id)  # a door without keys holds none to revoke
    keys.revoke_as(caller, key_id)


@router.get(
    "/keys",
    response_model=KeyList,
    summary="The namespace's API keys",
    description="Every key of the caller's namespace (none of another's), oldest first, revoked and expired ones "
    "included: id, name, scopes, times and state, never a secret or a hash. OAuth grants are not listed: each acts "
    "as the key that consented to it, under that key's id and name, and ends when that key is revoked. Needs `read`. "
    "Not cached (`Cache-Control: no-store`).",
)
async def list_keys(door: ThisDoor, caller: Reader, response: Response) -> KeyList:
    response.headers["Cache-Control"] = "no-store"
    if door.keys is None:
        return KeyList(items=[])
    return await door.run_blocking(_listed, door.keys, caller)


@router.delete(
    "/keys/{key_id}",
    status_code=204,
    responses={
        204: {"description": "Revoked (or already revoked): the key proves no request from now on."},
        403: problem_doc(
            "Another key than the caller's own, and the caller lacks the `keys` scope (whether that key exists or not)."
        ),
        404: problem_doc("No key of the caller's namespace has this id (unknown, malformed, or another namespace's)."),
    },
    summary="Revoke an API key",
    description="A key may always revoke itself; revoking another key of its namespace needs the `keys` scope, so an "
    "agent's read/write key cannot revoke the person's. The key stops working at once in this process and within "
    "30 seconds everywhere; the OAuth grants it consented to end with it. Any valid key may ask (the scope rule "
    "above decides).",
)
async def revoke_key(key_id: str, door: ThisDoor, caller: Anyone) -> Response:
    await door.run_blocking(_revoke, door.keys, caller, key_id)
    return Response(status_code=204)
