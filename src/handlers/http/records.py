"""How the HTTP door answers with a record: the record and its ETag, or only the ETag for a key that may not read
records (the write routes of handlers.http.memories and handlers.http.lifecycle)."""

from __future__ import annotations

from starlette.responses import Response

from core.access import Principal, sees_records
from core.model import Memory
from handlers.http.input import etag


def with_etag(memory: Memory, response: Response) -> Memory:
    response.headers["ETag"] = etag(memory)
    return memory


def written(memory: Memory, caller: Principal, response: Response) -> Memory | Response:
    """A changed record with its ETag, or only the ETag (204) for a key that may not read records."""
    if not sees_records(caller):
        return Response(status_code=204, headers={"ETag": etag(memory)})
    return with_etag(memory, response)
