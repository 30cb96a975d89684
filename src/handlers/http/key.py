"""`GET /key`: the key a request is made with (its id, name, namespace and scopes), so a person's console can say
whose memories it shows and offer only what the key may do. Any valid key may ask; the answer never holds its secret.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from core.access import ALL_SCOPES, Scope
from handlers.http.dependencies import Anyone

router = APIRouter()


class KeyDescription(BaseModel):
    """The caller's key as the service knows it, never its secret."""

    model_config = ConfigDict(frozen=True)

    key_id: str | None = Field(description="The public key id (the 12 characters after `am_`); null on an open server.")
    name: str | None = Field(description="What a person called the key (`keys create --name`); null when unnamed.")
    namespace: str = Field(description="The only namespace the key reaches.")
    scopes: list[Scope] = Field(
        description="What the key may do: `read` (GET routes), `write` (the others), `keys` (revoke other keys)."
    )


@router.get(
    "/key",
    response_model=KeyDescription,
    summary="The API key this request is made with",
    description="Its id, name, namespace and scopes, for any valid key whatever its scopes; never its secret. Not "
    "cached (`Cache-Control: no-store`): the answer is the caller's own.",
)
async def describe_key(caller: Anyone, response: Response) -> KeyDescription:
    response.headers["Cache-Control"] = "no-store"
    scopes = [scope for scope in ALL_SCOPES if scope in caller.scopes]
    return KeyDescription(key_id=caller.key_id, name=caller.key_name, namespace=caller.namespace, scopes=scopes)
