"""A recall's answer: the retrieval envelope (core.contract.Envelope), ranked: each item's score and parts, when they
were computed and how (CONTRACT.md's recall)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.contract import Envelope
from core.model import Memory
from core.recall.ranking import PARTS_DESCRIPTION, Part


class RecallItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    memory: Memory
    score: float = Field(description="The weighted sum of the parts, rounded to 6 decimals.")
    parts: dict[Part, float] = Field(description=PARTS_DESCRIPTION)


class Ranking(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str = Field(description="The embedding model that ranked this answer.")
    weights: dict[Part, float] = Field(description="The weight of each part in the score.")
    unembedded: int = Field(description="Matches without an embedding of this model yet: ranked without meaning.")
    semantic: bool = Field(description="Whether the query itself was embedded (false: ranked without meaning).")


class RecallPage(Envelope[RecallItem]):
    """The retrieval envelope, ranked: when the scores were computed and how."""

    total: int = Field(description="Every memory the filters match, each ranked.")
    has_more: bool = Field(description="Whether matches remain after this page: offset + len(items) < total.")
    as_of: str = Field(description="The moment recency and use were computed at.")
    ranking: Ranking
