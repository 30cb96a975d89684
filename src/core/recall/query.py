"""What a recall asks: a question in natural language, the retrieval's exact filters, paging, and the moment every
time-based signal is computed at (CONTRACT.md, Recall)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema, field_validator

from core.contract import Moment, PageOffset, RetrievalQuery, cap_limit, integer
from core.limits import DEFAULT_LIMIT, RECALL_MAX_LIMIT, RECALL_QUERY_MAX_CHARS
from core.model import MemoryType, Status
from core.schema import RECALL_QUERY_SCHEMA

_FILTERS = RetrievalQuery.model_fields


def _cap_recall_limit(value: int) -> int:
    return min(cap_limit(value), RECALL_MAX_LIMIT)


RecallLimit = Annotated[
    int, WithJsonSchema({"type": "integer", "minimum": 1}), BeforeValidator(integer), AfterValidator(_cap_recall_limit)
]


class RecallQuery(RetrievalQuery.__base__):  # type: ignore[name-defined,misc]  # InputModel, as RetrievalQuery's
    """A recall, normalised: `query` trimmed, filters as the retrieval's, `limit` capped, `as_of` in the contract's
    spelling (None: the moment the request arrived, which the service fills in)."""

    model_config = RetrievalQuery.model_config

    query: Annotated[str, WithJsonSchema(RECALL_QUERY_SCHEMA)] = Field(
        description="What you want to know, in natural language (a question or a few words): the memories that best "
        f"answer it come first. Trimmed; 1 to {RECALL_QUERY_MAX_CHARS} characters.",
    )
    status: Status = Field(
        default="active",
        description="Only memories with this lifecycle status. Default active: an invalid memory is wrong or "
        "outdated, so recall returns it only when asked with status=invalid, and a deleted one only with "
        "status=deleted.",
    )
    memory_type: MemoryType | None = Field(default=None, description=_FILTERS["memory_type"].description)
    tag: Annotated[str | None, BeforeValidator(lambda value: None if value == "" else value)] = Field(
        default=None, description=_FILTERS["tag"].description
    )
    limit: RecallLimit = Field(
        default=DEFAULT_LIMIT,
        description=f"How many ranked memories to return, 1 or more; values over {RECALL_MAX_LIMIT} are served as "
        f"{RECALL_MAX_LIMIT}. The envelope's limit says what was served.",
    )
    offset: PageOffset = Field(default=0, description=_FILTERS["offset"].description)
    as_of: Moment = Field(
        default=None,
        description="The moment recency and use are computed at (default: now); give the as_of of an earlier answer "
        "to rank at that moment again (a read that stamped since changed the use of what it returned).",
    )

    @field_validator("query", mode="before")
    @classmethod
    def _trimmed(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not 1 <= len(text) <= RECALL_QUERY_MAX_CHARS:
            raise ValueError(f"must be 1 to {RECALL_QUERY_MAX_CHARS} characters after trimming")
        return text

    _normalise_tag = field_validator("tag")(RetrievalQuery._normalise_tag.__func__)  # type: ignore[attr-defined]  # a classmethod's function, reused
    matches_nothing = RetrievalQuery.matches_nothing
