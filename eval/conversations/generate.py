"""Writes the conversational evaluation set (this folder's *.json; README.md says what it holds) from the episodes in
episodes.py (development half) and episodes_test.py (held-out half).

Deterministic: the same script writes the same files, byte for byte (seeded by each conversation's name), and reads
nothing but itself. Run from the repository's root:

    python eval/conversations/generate.py

Each conversation is two friends chatting over nine sessions about a month apart: greetings, small talk, and
episodes (a few turns in which one of them tells the other something). It is stored three ways, one namespace each:
`turns` (each turn one memory, "Speaker: text"), `tagged` (the same turns, each tagged with its speaker) and `notes`
(short notes an agent would write instead: one per episode, and a few of each session's small talk). Every question
asks about one episode; the turns or the note that answer it are graded 2, the turns it needs besides (the question
the answer replies to) 1.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from episodes import EPISODES, FILLER
from episodes_test import TEST_EPISODES

HERE = Path(__file__).resolve().parent
AS_OF = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

# (name, split, speakers, first session, the episodes it draws from)
CONVERSATIONS: list[tuple[str, str, tuple[str, str], str, list[dict[str, Any]]]] = [
    ("priti-sam", "dev", ("Priti", "Sam"), "2026-01-10", EPISODES),
    ("elena-kofi", "dev", ("Elena", "Kofi"), "2026-01-24", EPISODES),
    ("marcus-aiko", "dev", ("Marcus", "Aiko"), "2026-02-07", EPISODES),
    ("nadia-tom", "test", ("Nadia", "Tom"), "2026-01-17", TEST_EPISODES),
    ("rosa-felix", "test", ("Rosa", "Felix"), "2026-01-31", TEST_EPISODES),
    ("ivan-leah", "test", ("Ivan", "Leah"), "2026-02-14", TEST_EPISODES),
]
FORMS = ("turns", "tagged", "notes")
SESSIONS = 9


def stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def filled(text: str, words: dict[str, str]) -> str:
    return text.format(**words)


class Talk:
    """One conversation as it is generated: its turns and notes, each with when it was said or written, and its
    questions with the indexes of their evidence."""

    def __init__(self, name: str, speakers: tuple[str, str]) -> None:
        self.rng = random.Random(name)  # noqa: S311  # a dataset generator, not a secret
        self.speakers = speakers
        self.turns: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.questions: list[dict[str, Any]] = []
        self.moment = AS_OF

    def wait(self, low: int, high: int) -> None:
        self.moment += timedelta(seconds=self.rng.randrange(low, high))

    def say(self, who: int, text: str) -> int:
        self.turns.append({"speaker": self.speakers[who], "text": text, "at": self.moment})
        return len(self.turns) - 1

    def small_talk(self, kind: str, opener: int) -> int:
        """Two lines of `kind` (open, close), taking turns from `opener`; who would speak next."""
        for line in self.rng.sample(FILLER[kind], 2):
            self.wait(20, 200)
            self.say(opener, line.format(other=self.speakers[1 - opener]))
            opener = 1 - opener
        return opener

    def episode(self, episode: dict[str, Any]) -> None:
        teller = self.rng.randrange(2)
        words = {key: self.rng.choice(options) for key, options in episode["slots"].items()}
        words.update(T=self.speakers[teller], L=self.speakers[1 - teller], month=self.moment.strftime("%B %Y"))
        indexes = []
        for role, text in episode["turns"]:
            self.wait(20, 240)
            indexes.append(self.say(teller if role == "T" else 1 - teller, filled(text, words)))
        first_note = len(self.notes)
        self.notes += [
            {"text": filled(text, words), "at": self.moment + timedelta(minutes=5)} for text in episode["notes"]
        ]
        self.questions += [
            {
                "question": filled(question, words),
                "answer": [indexes[k] for k in episode["answer"]],
                "context": [indexes[k] for k in episode.get("context", [])],
                "note": first_note,
                "topic": episode["topic"],
            }
            for question in episode["questions"]
        ]
        if self.rng.random() < 0.6:
            self.wait(20, 200)
            who = self.rng.randrange(2)
            self.say(who, self.rng.choice(FILLER["between"]))

    def session(self, start: datetime, number: int, episodes: list[dict[str, Any]]) -> None:
        self.moment = start + timedelta(days=number * self.rng.randint(26, 34), minutes=self.rng.randrange(0, 180))
        opener = self.small_talk("open", self.rng.randrange(2))
        for episode in episodes:
            self.episode(episode)
        pair = self.rng.sample(self.speakers, 2)
        for line in self.rng.sample(FILLER["notes"], 4):
            at = self.moment + timedelta(minutes=self.rng.randrange(1, 9))
            self.notes.append({"text": line.format(A=pair[0], B=pair[1]), "at": at})
        self.small_talk("close", opener)


def conversation(name: str, speakers: tuple[str, str], first: str, library: list[dict[str, Any]]) -> dict[str, Any]:
    """The turns, notes and questions of one conversation: SESSIONS sessions a month or so apart, each with small
    talk around its share of the library's episodes (all of them, in an order of its own)."""
    talk = Talk(name, speakers)
    chosen = talk.rng.sample(library, len(library))
    start = datetime.fromisoformat(first).replace(tzinfo=UTC) + timedelta(hours=19)
    per_session = -(-len(chosen) // SESSIONS)
    for number in range(SESSIONS):
        talk.session(start, number, chosen[number * per_session : (number + 1) * per_session])
    return {"turns": talk.turns, "notes": talk.notes, "questions": talk.questions}


def memories(talk: dict[str, Any], form: str, rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The namespace's memories in `form`, refs in time order, and the ref of each turn or note ("t3", "n2")."""
    if form == "notes":
        items = [("n", index, note["text"], note["at"], ["note"], "fact") for index, note in enumerate(talk["notes"])]
    else:
        items = [
            (
                "t",
                index,
                f"{turn['speaker']}: {turn['text']}",
                turn["at"],
                [f"speaker:{turn['speaker'].lower()}"] if form == "tagged" else [],
                "event",
            )
            for index, turn in enumerate(talk["turns"])
        ]
    items.sort(key=lambda item: (item[3], item[0], item[1]))
    refs: dict[str, str] = {}
    result = []
    for number, (kind, index, content, moment, tags, memory_type) in enumerate(items, start=1):
        refs[f"{kind}{index}"] = f"m{number:03d}"
        used = None if rng.random() < 0.7 else moment + (AS_OF - moment) * rng.random()
        result.append(
            {
                "ref": f"m{number:03d}",
                "content": content,
                "tags": tags,
                "memory_type": memory_type,
                "status": "active",
                "created_at": stamp(moment),
                "updated_at": stamp(moment),
                "last_accessed_at": stamp(used),
            }
        )
    return result, refs


def relevant(question: dict[str, Any], form: str, refs: dict[str, str]) -> dict[str, int]:
    if form == "notes":
        return {refs[f"n{question['note']}"]: 2}
    graded = {refs[f"t{index}"]: 1 for index in question["context"]}
    graded.update({refs[f"t{index}"]: 2 for index in question["answer"]})
    return graded


def main() -> None:
    for name, split, speakers, first, library in CONVERSATIONS:
        talk = conversation(name, speakers, first, library)
        for form in FORMS:
            rng = random.Random(f"{name}/{form}")  # noqa: S311  # a dataset generator, not a secret
            stored, refs = memories(talk, form, rng)
            data = {
                "namespace": f"{name}-{form}",
                "as_of": stamp(AS_OF),
                "split": split,
                "persona": f"{speakers[0]} and {speakers[1]}, friends, chatting over {SESSIONS} sessions; stored as "
                f"{form}.",
                "form": form,
                "memories": stored,
                "questions": [
                    {
                        "id": f"{name}-q{number:03d}",
                        "question": question["question"],
                        "kind": question["topic"],
                        "relevant": relevant(question, form, refs),
                        "note": f"{form}: the {question['topic']} episode",
                    }
                    for number, question in enumerate(talk["questions"], start=1)
                ],
            }
            path = HERE / f"{name}-{form}.json"
            path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
            print(f"{path.name}: {len(stored)} memories, {len(data['questions'])} questions")


if __name__ == "__main__":
    main()
