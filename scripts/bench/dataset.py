"""A realistic, seeded dataset: varied content (50-400 characters of mixed-case words), 0-5 tags from a vocabulary,
every memory type, about 10% `invalid` and some deleted; a query word and a tag planted at stated selectivities."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from core.memories import MemoryService
from core.model import NewMemory
from core.portable import ExportedMemory, parse_line

WORDS = [
    "the",
    "user",
    "likes",
    "prefers",
    "morning",
    "evening",
    "meeting",
    "notes",
    "project",
    "deadline",
    "budget",
    "review",
    "travel",
    "flight",
    "hotel",
    "Berlin",
    "Paris",
    "Tokyo",
    "Lisbon",
    "coffee",
    "tea",
    "green",
    "roast",
    "oat",
    "milk",
    "sugar",
    "allergy",
    "peanuts",
    "gluten",
    "dinner",
    "lunch",
    "breakfast",
    "daughter",
    "son",
    "partner",
    "birthday",
    "anniversary",
    "gift",
    "book",
    "novel",
    "podcast",
    "jazz",
    "piano",
    "guitar",
    "running",
    "cycling",
    "yoga",
    "swim",
    "marathon",
    "doctor",
    "dentist",
    "appointment",
    "Monday",
    "Tuesday",
    "Friday",
    "weekend",
    "quarterly",
    "report",
    "slides",
    "Python",
    "Rust",
    "TypeScript",
    "database",
    "schema",
    "migration",
    "deploy",
    "staging",
    "production",
    "incident",
    "pager",
    "rotation",
    "vacation",
    "Kyoto",
    "museum",
    "garden",
    "tomatoes",
    "basil",
    "recipe",
    "pasta",
    "risotto",
    "vegan",
    "spicy",
    "mild",
    "window",
    "seat",
    "aisle",
    "early",
    "late",
    "timezone",
    "UTC",
    "CET",
    "PST",
    "language",
    "Spanish",
    "French",
    "German",
    "lessons",
    "teacher",
    "manager",
    "reports",
    "team",
    "standup",
    "retro",
    "sprint",
    "API",
    "key",
    "rotation",
    "password",
    "vault",
    "laptop",
    "monitor",
    "keyboard",
    "ergonomic",
    "chair",
    "desk",
    "remote",
    "office",
    "commute",
    "train",
]
Q_WORD = "espresso"  # never among WORDS: only the planted occurrences match
Q_SELECTIVITY = 0.02
TAG = "travel"
TAG_SELECTIVITY = 0.10
TAG_VOCABULARY = [
    "preference",
    "food",
    "work",
    "family",
    "health",
    "project:alpha",
    "project:beta",
    "music",
    "sports",
    "finance",
    "reading",
    "kids",
    "car",
    "home",
    "garden",
    "pets",
    "language",
    "cooking",
    "fitness",
    "movies",
]
TYPES = ("preference", "fact", "identity", "event")
INVALID_SHARE = 0.10
DELETED_SHARE = 0.05


def memory_body(rng: random.Random, index: int | None = None) -> dict[str, Any]:
    """One create body; with `index`, the query word goes into exactly every 50th and the tag every 10th."""
    target = rng.randint(50, 400)
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < target:
        word = rng.choice(WORDS)
        words.append(word.upper() if rng.random() < 0.05 else word.capitalize() if rng.random() < 0.15 else word)
    if index is not None and index % round(1 / Q_SELECTIVITY) == 7:
        words.insert(rng.randrange(len(words) + 1), rng.choice((Q_WORD, Q_WORD.capitalize(), Q_WORD.upper())))
    tags = rng.sample(TAG_VOCABULARY, rng.randint(0, 4))
    if index is not None and index % round(1 / TAG_SELECTIVITY) == 3:
        tags.insert(rng.randrange(len(tags) + 1), TAG)
    return {
        "content": " ".join(words)[:400].strip(),
        "tags": tags,
        "memory_type": rng.choice(TYPES),
        "status": "invalid" if rng.random() < INVALID_SHARE else "active",
    }


@dataclass
class Namespace:
    name: str
    size: int
    active: list[int] = field(default_factory=list)  # ids created active (version 1) and not deleted
    visible: int = 0
    q_matches: int = 0
    tag_matches: int = 0
    invalid: int = 0

    def selectivity(self) -> dict[str, float]:
        """Shares of the visible memories a search matches, and (`invalid`) of every stored one that is invalid."""
        return {
            "q": self.q_matches / self.visible,
            "tag": self.tag_matches / self.visible,
            "invalid": self.invalid / self.size,
        }


def _dataset(size: int, seed: int) -> tuple[list[dict[str, Any]], set[int]]:
    """The bodies of a namespace of `size` memories, and the indexes of those deleted."""
    rng = random.Random(seed)  # noqa: S311  # a benchmark dataset, not a secret
    bodies = [memory_body(rng, index) for index in range(size)]
    return bodies, {index for index in range(size) if rng.random() < DELETED_SHARE}


def load(service: MemoryService, name: str, size: int, seed: int, workers: int = 6) -> Namespace:
    """Create `size` memories through the service (a thread pool), then soft-delete about 5% of them."""
    bodies, deleted = _dataset(size, seed)

    def create(index: int) -> tuple[int, int]:
        memory = service.create(name, NewMemory.parse(bodies[index]))
        if index in deleted:
            service.delete(name, memory.id)
        return index, memory.id

    with ThreadPoolExecutor(max_workers=workers) as pool:
        created = list(pool.map(create, range(size)))
    return _described(Namespace(name, size), bodies, deleted, created)


def exported(name: str, size: int, seed: int) -> tuple[Namespace, list[ExportedMemory]]:
    """The same memories as `load` makes of `size` and `seed`, as an export holds them (ids 1 to `size`, written a
    second apart up to now, the deleted ones with their deletion), for `agent-memory import` (Namespaces.load): an
    import writes ten times faster than creates, and its revisions carry no change key, as any import's."""
    bodies, deleted = _dataset(size, seed)
    now = datetime.now(UTC)
    memories = []
    for index, body in enumerate(bodies):
        stamp = (now - timedelta(seconds=size - index)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record = {**body, "id": index + 1, "created_at": stamp, "updated_at": stamp, "version": 1}
        revisions = [{**record, "revision": 1, "change": "created", "changed_at": stamp, "key_id": None}]
        line: dict[str, Any] = {"memory": {**record, "last_accessed_at": None}, "revisions": revisions}
        if index in deleted:
            line["memory"]["status"] = "deleted"
            revisions.append({**revisions[0], "revision": 2, "change": "deleted", "status": "deleted"})
            line |= {"prior_status": body["status"], "deleted_at": stamp}
        memories.append(parse_line(json.dumps(line), index + 2))
    created = [(index, index + 1) for index in range(size)]
    return _described(Namespace(name, size), bodies, deleted, created), memories


def _described(
    namespace: Namespace, bodies: list[dict[str, Any]], deleted: set[int], created: list[tuple[int, int]]
) -> Namespace:
    """`namespace` with what its memories (each body's index and id) hold: which are visible, active, matched."""
    for index, memory_id in sorted(created, key=lambda pair: pair[1]):
        if index in deleted:
            continue
        body = bodies[index]
        namespace.visible += 1
        namespace.q_matches += Q_WORD in body["content"].lower() or any(Q_WORD in tag for tag in body["tags"])
        namespace.tag_matches += TAG in body["tags"]
        if body["status"] == "active":
            namespace.active.append(memory_id)
        else:
            namespace.invalid += 1
    return namespace
