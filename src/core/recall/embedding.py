"""Recall's semantic part behind a port: an embedding model turns texts into vectors. Deployed it is a model on
Amazon Bedrock, locally one that runs offline from an installed package, and in fast tests a stand-in
(core.recall.standin), which is no model at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from core.digest import Vector

Kind = Literal["query", "passage"]


class EmbedderUnavailableError(Exception):
    """The model could not embed now (unreachable, throttled, timed out, refused, or failed in any other way: the
    port's guard, core.recall.guard, makes every failure this one): the caller goes on without a vector (a memory is
    embedded later; a recall ranks without its semantic part)."""


class Embedder(Protocol):
    """An embedding model. `model` names it (recall's answer says which model ranked it); `floor` is the cosine
    similarity at or below which this model's vectors say two texts are unrelated (the semantic part is the similarity
    above it, scaled to [0, 1]: models differ widely in where unrelated texts land); `related_floor` is the cosine
    similarity above which two memories' vectors are taken as versions or repeats of one fact (related memories,
    core.recall.related; measured per model on eval/related, docs/operations.md); `dimensions` is the length of every
    vector it gives (an answer of any other length is no vector of this model: core.recall.guard)."""

    @property
    def model(self) -> str: ...

    @property
    def floor(self) -> float: ...

    @property
    def related_floor(self) -> float: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        """One vector per text, in order: `passage` for what is stored, `query` for what is asked.
        EmbedderUnavailableError when it cannot now."""
        ...


def passage_text(content: str, tags: Sequence[str]) -> str:
    """What a memory's vector embeds: its content, then its tags."""
    return f"{content}\n{' '.join(tags)}" if tags else content
