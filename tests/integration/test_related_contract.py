"""Related memories through the use case, on every store (in memory, Amazon DynamoDB Local): the namespace's active
memories closest in meaning to one memory, itself left out, most similar first with ties by id descending, only above
the model's related floor; bounded by `limit`; 404 for a missing or deleted memory; `waiting` for one without its
vector; nothing stamped; no other namespace's memory; and the write's own check, from the vector the write computed
(CONTRACT.md, Keeping memories true)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from core.digest import Digest, Vector
from core.errors import InvalidInputError, MemoryNotFoundError
from core.memories import MemoryService
from core.model import Memory, MemoryChanges, NewMemory
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError, Kind, passage_text
from core.recall.indexing import RecallIndexer
from core.recall.related import RelatedMemories, RelatedQuery, RelatedService
from core.recall.standin import StandInEmbedder
from core.recall.vectors import cosine
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
OTHER_NS = "bob"
STAND_IN = StandInEmbedder()
JOB = "The user works as a data analyst at Northwind Traders in Leeds"
NEW_JOB = "The user started a new job as a data engineer at Contoso, leaving Northwind Traders"
REPEAT = "User is a data analyst at Northwind Traders"
# About the same user, sharing a few words with JOB, yet below the stand-in's floor.
DENTIST = "The user has a dentist appointment on Friday"
UNRELATED = "Bob keeps bees"


class Outage(StandInEmbedder):
    """The stand-in model while it is unavailable: every call fails as an unreachable model does."""

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("the model is unreachable")


class Renamed(StandInEmbedder):
    """Another model, as far as the store can tell."""

    model = "stand-in:renamed"


def similarity(left: str, right: str) -> float:
    one, other = STAND_IN.embed([passage_text(left, []), passage_text(right, [])], "passage")
    return round(cosine(one, other), 6)


@pytest.fixture
def repository(engine: Engine) -> StoredMemories:
    return engine.memories(engine.new_table())


@pytest.fixture
def memories(repository: StoredMemories, clock: FakeClock) -> MemoryService:
    return MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))


@pytest.fixture
def related(repository: StoredMemories, clock: FakeClock) -> RelatedService:
    return RelatedService(repository, STAND_IN, clock)


def create(service: MemoryService, content: str, namespace: str = NS, **fields: Any) -> Memory:
    return service.create(namespace, NewMemory.parse({"content": content, **fields}))


def ask(related: RelatedService, memory_id: int, **fields: Any) -> RelatedMemories:
    return related.related(NS, memory_id, RelatedQuery.parse(fields))


def listed(answer: RelatedMemories) -> list[tuple[int, float]]:
    return [(item.memory.id, item.similarity) for item in answer.items]


def test_the_related_memories_are_the_active_ones_closest_in_meaning_most_similar_first_itself_left_out(
    memories: MemoryService, related: RelatedService
) -> None:
    job, new_job, dentist, repeat, _ = (create(memories, text) for text in (JOB, NEW_JOB, DENTIST, REPEAT, UNRELATED))
    assert 0 < similarity(JOB, DENTIST) <= STAND_IN.related_floor  # the premise: close, yet not close enough

    answer = ask(related, job.id)

    assert listed(answer) == [(repeat.id, similarity(JOB, REPEAT)), (new_job.id, similarity(JOB, NEW_JOB))]
    assert similarity(JOB, REPEAT) > similarity(JOB, NEW_JOB) > STAND_IN.related_floor
    assert [item.memory for item in answer.items] == [repeat, new_job]  # the records as stored
    assert (answer.model, answer.floor, answer.waiting) == (STAND_IN.model, STAND_IN.related_floor, False)
    assert dentist.id not in {item.memory.id for item in answer.items}


def test_equally_similar_memories_come_newest_id_first_and_limit_bounds_the_answer(
    memories: MemoryService, related: RelatedService
) -> None:
    repeat = create(memories, REPEAT)
    first, second = create(memories, JOB), create(memories, JOB)
    newer_job = create(memories, NEW_JOB)

    assert listed(ask(related, repeat.id)) == [
        (second.id, similarity(REPEAT, JOB)),
        (first.id, similarity(REPEAT, JOB)),
        (newer_job.id, similarity(REPEAT, NEW_JOB)),
    ]
    assert [item.memory.id for item in ask(related, repeat.id, limit=1).items] == [second.id]
    assert len(ask(related, repeat.id, limit="2").items) == 2


def test_the_default_limit_is_three_and_ten_is_the_most(memories: MemoryService, related: RelatedService) -> None:
    asked = create(memories, JOB)
    for _ in range(11):
        create(memories, REPEAT)

    assert len(ask(related, asked.id).items) == 3
    assert len(ask(related, asked.id, limit=10).items) == 10


@pytest.mark.parametrize(
    ("limit", "words"),
    [(0, "must be 1 or more"), (11, "must be at most 10"), ("ten", "must be an integer"), (-1, "must be 1 or more")],
)
def test_a_limit_outside_one_to_ten_is_refused_naming_limit(limit: object, words: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        RelatedQuery.parse({"limit": limit})

    assert str(refused.value) == f"limit: {words}"


def test_invalid_and_deleted_memories_are_never_related_and_an_invalid_memory_has_related_ones(
    memories: MemoryService, related: RelatedService
) -> None:
    job, new_job, repeat = create(memories, JOB), create(memories, NEW_JOB), create(memories, REPEAT)
    memories.update(NS, new_job.id, MemoryChanges.parse({"status": "invalid"}))
    memories.delete(NS, repeat.id)
    create(memories, JOB, status="invalid")  # stored invalid

    assert listed(ask(related, job.id)) == []
    assert [item.memory.id for item in ask(related, new_job.id).items] == [job.id]  # asked about an invalid one


def test_a_missing_deleted_or_purged_memory_is_not_found(memories: MemoryService, related: RelatedService) -> None:
    deleted, purged = create(memories, JOB), create(memories, REPEAT)
    memories.delete(NS, deleted.id)
    memories.delete(NS, purged.id)
    memories.purge(NS, purged.id)

    for memory_id in (deleted.id, purged.id, 99):
        with pytest.raises(MemoryNotFoundError, match=f"memory {memory_id} does not exist"):
            ask(related, memory_id)


def test_a_memory_waiting_for_its_vector_has_no_related_memories_and_says_so_until_it_is_embedded(
    repository: StoredMemories, memories: MemoryService, related: RelatedService, clock: FakeClock
) -> None:
    create(memories, REPEAT)
    waiting = create(MemoryService(repository, clock, indexer=RecallIndexer(Outage())), JOB)

    assert ask(related, waiting.id) == RelatedMemories(
        items=[], model=STAND_IN.model, floor=STAND_IN.related_floor, waiting=True
    )
    Backfill(repository, STAND_IN).run()
    assert not ask(related, waiting.id).waiting
    assert len(ask(related, waiting.id).items) == 1


def test_a_memory_embedded_by_another_model_is_waiting_and_never_compared(
    repository: StoredMemories, memories: MemoryService, related: RelatedService, clock: FakeClock
) -> None:
    own = create(memories, JOB)
    renamed = create(MemoryService(repository, clock, indexer=RecallIndexer(Renamed())), JOB)

    assert ask(related, renamed.id).waiting
    assert ask(related, own.id).items == []  # the other model's vector is not compared with this one's


def test_other_namespaces_are_never_related(memories: MemoryService, related: RelatedService) -> None:
    theirs = create(memories, JOB, namespace=OTHER_NS)
    create(memories, REPEAT, namespace=OTHER_NS)
    ours = create(memories, JOB)

    assert ask(related, ours.id).items == []
    assert [item.memory.content for item in related.related(OTHER_NS, theirs.id, RelatedQuery()).items] == [REPEAT]


def test_related_memories_stamp_nothing(
    repository: StoredMemories, memories: MemoryService, related: RelatedService
) -> None:
    job, repeat = create(memories, JOB), create(memories, REPEAT)
    memories.get(NS, repeat.id)  # one of them was read before
    before = {memory_id: repository.get(NS, memory_id) for memory_id in (job.id, repeat.id)}

    answer = ask(related, job.id)

    assert [item.memory for item in answer.items] == [before[repeat.id]]
    assert {memory_id: repository.get(NS, memory_id) for memory_id in before} == before


def test_a_writes_check_compares_the_vector_the_write_computed_leaving_out_what_it_names(
    memories: MemoryService, related: RelatedService
) -> None:
    job, new_job = create(memories, JOB), create(memories, NEW_JOB)
    digests: list[Digest] = []
    repeat = memories.create(NS, NewMemory.parse({"content": REPEAT}), indexed=digests.append)
    (digest,) = digests
    assert digest.vector is not None

    near = related.near(NS, digest.vector, digest.model, {repeat.id})
    left_out = related.near(NS, digest.vector, digest.model, {repeat.id, job.id})
    other_model = related.near(NS, digest.vector, Renamed.model, {repeat.id})

    assert [(item.memory.id, item.similarity) for item in near] == [
        (job.id, similarity(REPEAT, JOB)),
        (new_job.id, similarity(REPEAT, NEW_JOB)),
    ]
    assert [item.memory.id for item in left_out] == [new_job.id]
    assert other_model == []


def test_a_write_tells_the_digest_it_computed_and_an_update_only_when_its_text_changes(
    memories: MemoryService,
) -> None:
    told: list[Digest] = []
    created = memories.create(NS, NewMemory.parse({"content": JOB, "tags": ["work"]}), indexed=told.append)
    memories.update(NS, created.id, MemoryChanges.parse({"status": "invalid"}), indexed=told.append)
    memories.update(NS, created.id, MemoryChanges.parse({"content": JOB}), indexed=told.append)
    memories.update(NS, created.id, MemoryChanges.parse({"content": REPEAT}), indexed=told.append)

    (vector_of_job,) = STAND_IN.embed([passage_text(JOB, ["work"])], "passage")
    (vector_of_repeat,) = STAND_IN.embed([passage_text(REPEAT, ["work"])], "passage")
    assert [(digest.vector, digest.model) for digest in told] == [
        (vector_of_job, STAND_IN.model),
        (vector_of_repeat, STAND_IN.model),
    ]
