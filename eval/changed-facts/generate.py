"""Writes the "changed facts" evaluation set (this folder's *.json; README.md says what it holds) from the people below.

Deterministic: the same script writes the same files, byte for byte (seeded by each person's namespace), and reads
nothing but itself. Run from the repository's root:

    python eval/changed-facts/generate.py

Each person has facts that changed over 18 months, each version a memory written when the agent learned it; the
agent went on using (and stamping) the older version until the change, often after it. Questions about a changed fact
grade its newest version 2 and every older one 0.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from people import PEOPLE  # the people are plain data, kept apart from the rules that expand them

HERE = Path(__file__).resolve().parent
AS_OF = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
START = datetime(2025, 6, 1, tzinfo=UTC)

# Questions an agent asks about each kind of fact; {n} is the person's name, {s}/{o}/{p} the pronouns (she/her/her).
QUESTIONS: dict[str, list[str]] = {
    "job": [
        "Where does {n} work?",
        "What does {n} do for a living?",
        "who is {p} employer",
        "What's {n}'s job?",
        "Which company is {s} with?",
        "what does {n} work as",
    ],
    "city": [
        "Where does {n} live?",
        "Which city is {n} based in?",
        "What's {p} home address?",
        "where's {n} living these days",
        "Which neighbourhood does {s} live in?",
    ],
    "diet": [
        "What does {n} eat?",
        "Any dietary restrictions for {n}?",
        "Does {n} eat meat?",
        "what food can {s} not have",
        "Is {n} vegetarian?",
    ],
    "phone": [
        "What phone does {n} use?",
        "Is {p} phone an iPhone or an Android?",
        "Which smartphone has {s} got?",
        "what mobile does {n} have",
    ],
    "number": [
        "What's {n}'s phone number?",
        "How do I call {n}?",
        "{n} mobile number",
        "Which number should I text {o} on?",
    ],
    "car": [
        "What car does {n} drive?",
        "Does {n} have a car?",
        "what's {p} car",
        "How does {n} get around, does {s} drive?",
    ],
    "manager": [
        "Who is {n}'s manager?",
        "Who does {n} report to?",
        "who's {p} boss",
        "Who is {n}'s line manager at work?",
    ],
    "partner": [
        "Who is {n}'s partner?",
        "Is {n} seeing anyone?",
        "what's {p} relationship status",
        "Who is {n} dating?",
    ],
    "team": [
        "Which team is {n} on?",
        "What team does {s} work in?",
        "which group is {n} part of at work",
    ],
    "exercise": [
        "What does {n} do for exercise?",
        "Where does {n} work out?",
        "what sport does {s} do",
        "How does {n} keep fit?",
    ],
    "dentist": [
        "Who is {n}'s dentist?",
        "Where does {s} go for dental check-ups?",
        "which dental practice does {n} use",
    ],
    "doctor": [
        "Who is {n}'s GP?",
        "Which doctor does {n} see?",
        "where is {s} registered with a doctor",
    ],
    "commute": [
        "How does {n} get to work?",
        "What's {p} commute like?",
        "how long is {n}'s commute",
    ],
    "coffee": [
        "How does {n} take {p} coffee?",
        "What's {p} usual order at a café?",
        "what does {n} drink in the morning",
    ],
    "email": [
        "What's {n}'s email address?",
        "Which email should I use for {o}?",
        "{n} personal email",
    ],
    "school": [
        "Which school does {k} go to?",
        "Where is {k} at school?",
        "what school is {n}'s kid in",
    ],
    "bank": [
        "Which bank does {n} use?",
        "Where does {s} keep {p} money?",
        "what's {n}'s bank",
    ],
    "language": [
        "What language is {n} learning?",
        "Which language lessons is {s} taking?",
        "is {n} studying a language",
    ],
    "internet": [
        "Who is {n}'s internet provider?",
        "What broadband does {s} have at home?",
    ],
    "pet": [
        "Does {n} have a pet?",
        "What's the name of {p} pet?",
        "what animal lives with {n}",
    ],
    "hobby": [
        "What's {n}'s hobby?",
        "What does {n} do in {p} free time?",
        "what is {s} into outside work",
    ],
    "status": [
        "Is {n} married?",
        "What's {p} relationship status?",
        "is {n} engaged or married",
    ],
    "intolerance": [
        "Can {n} have dairy?",
        "Any food intolerances for {n}?",
        "is {s} lactose intolerant",
    ],
    "medication": [
        "What medication does {n} take?",
        "What dose is {s} on?",
        "which pills does {n} take every day",
    ],
}

# Memories an agent keeps about anyone, filled in with each person's own details (see Person.details).
GENERIC: list[tuple[str, str, list[str]]] = [
    ("identity", "{n} grew up in {hometown}.", ["profile"]),
    ("identity", "{n}'s birthday is {birthday}.", ["profile"]),
    ("identity", "{n}'s {rel} {sib} is a {sibjob}.", ["person"]),
    ("identity", "{n} studied {degree} at {university}.", ["profile"]),
    ("identity", "{n} speaks {languages}.", ["profile"]),
    ("preference", "{n} prefers short answers with bullet points, no small talk.", ["writing-style", "preference"]),
    ("preference", "{n} listens to {music}; favourite band lately is {band}.", ["preference"]),
    ("preference", "{n}'s favourite restaurant is {restaurant}.", ["preference"]),
    ("preference", "{n} prefers aisle seats on flights and hates early departures.", ["travel", "preference"]),
    ("preference", "{n} supports {club} and watches most of their games.", ["preference"]),
    ("preference", "{n} likes reading crime novels; currently reading {book}.", ["preference"]),
    ("preference", "{n} hates phone calls; texting is better for anything non-urgent.", ["preference"]),
    ("preference", "{n} likes to get reminders the evening before, not the same morning.", ["preference"]),
    ("event", "{n} went to {trip} for a long weekend in {tripmonth}.", ["travel"]),
    ("event", "{n} asked for help choosing a birthday present for {friend}.", ["person"]),
    ("event", "{n} had the flu for a week in {flumonth} and cancelled everything.", ["health"]),
    ("event", "{n} booked flights to {holiday} for the summer holidays.", ["travel"]),
    ("fact", "{n}'s friend {friend} has a birthday on {friendbday}.", ["person"]),
    ("fact", "{n}'s passport expires in {passport}; renew before any long trip.", ["travel"]),
    ("fact", "{n} volunteers at {volunteer} one Saturday a month.", ["profile"]),
    ("fact", "{n} is saving for {goal}.", ["profile"]),
    ("fact", "{n}'s {rel} {sib} has two children, {nephews}.", ["person"]),
    ("fact", "{n} watched {show} and wants more series like it.", ["preference"]),
    ("fact", "{n} is afraid of heights and avoids viewing platforms.", ["profile"]),
    ("fact", "{n} keeps a paper diary and writes in it most evenings.", ["profile"]),
    ("event", "Remind {n} to renew the {renewal} by {renewdate}.", ["task"]),
    ("event", "{n} wants a list of {listof} before {listdate}.", ["task"]),
    ("event", "{n} and {friend} went to a {concert} concert in {concertmonth}.", ["person"]),
    ("fact", "{n}'s neighbour {neighbour} waters the plants when {s} travels.", ["person"]),
    ("preference", "{n} likes {cuisine} food and always orders extra chilli.", ["preference"]),
    ("preference", "{n} wants summaries in English even when the source is in another language.", ["writing-style"]),
    ("preference", "{n} prefers calendar invites over email for anything with a time.", ["preference"]),
    ("preference", "{n} doesn't like surprise parties.", ["preference"]),
    ("preference", "{n} likes window seats on trains and quiet carriages.", ["travel", "preference"]),
    ("fact", "{n}'s {rel} {sib} visits every few months and stays on the sofa bed.", ["person"]),
    ("fact", "{n} is a morning person and does focused work before 10.", ["profile"]),
    ("fact", "{n} keeps spare keys with {neighbour}.", ["person"]),
    ("fact", "{n}'s favourite series of all time is {show}.", ["preference"]),
    ("event", "{n} ran a 10 km charity race in {flumonth} 2026 in just under an hour.", ["health"]),
    ("event", "{n} helped {friend} move flats in {tripmonth}.", ["person"]),
    ("event", "{n} had a job interview rehearsal with the agent before a big presentation.", ["work"]),
    ("event", "{n} lost {p} wallet on a night out and had to cancel all cards.", ["profile"]),
    ("event", "{n} asked to be reminded of {friend}'s birthday a week ahead.", ["task", "person"]),
    ("event", "Draft a thank-you note from {n} to {neighbour} for looking after the flat.", ["task"]),
    ("fact", "{n} decided not to buy a smartwatch after all; too many notifications.", ["decision"]),
    ("fact", "{n} decided to spend Christmas with {p} parents in {hometown}.", ["decision", "travel"]),
    ("fact", "{n} prefers {music} for focus playlists while working.", ["preference"]),
    ("fact", "{n} has a standing weekly video call with {p} {rel} {sib} on Sundays.", ["person"]),
    ("fact", "{n}'s favourite holiday so far was {holiday}.", ["travel"]),
    ("fact", "{n} gives to {volunteer} every month by standing order.", ["profile"]),
]


@dataclass
class Fact:
    kind: str
    tags: list[str]
    versions: list[tuple[str, str, str]]  # (date, memory_type, content), oldest first
    asked: list[str] = field(default_factory=list)  # questions of its own, besides the kind's


@dataclass
class Person:
    namespace: str
    split: str
    name: str
    pronouns: tuple[str, str, str]  # subject, object, possessive
    persona: str
    details: dict[str, str]
    facts: list[Fact]
    near: list[tuple[str, str, list[str], str]]  # (date, memory_type, tags, content): close to a fact, not a version


def parsed(data: dict[str, Any]) -> Person:
    """people.py's plain data as a Person: a fact's versions are (date, content) or (date, memory_type, content), the
    type a fact unless said."""
    facts = [
        Fact(
            kind,
            tags.split(),
            [(v[0], "fact", v[1]) if len(v) == 2 else (v[0], v[1], v[2]) for v in versions],
            list(asked),
        )
        for kind, tags, versions, *asked in data["facts"]
    ]
    near = [(day, kind, tags.split(), content) for day, kind, tags, content in data["near"]]
    return Person(
        data["namespace"],
        data["split"],
        data["name"],
        tuple(data["pronouns"].split("/")),
        data["persona"],
        data["details"],
        facts,
        near,
    )


def moment(rng: random.Random, day: str | datetime) -> datetime:
    base = day if isinstance(day, datetime) else datetime.fromisoformat(day).replace(tzinfo=UTC)
    return base + timedelta(seconds=rng.randrange(7 * 3600, 23 * 3600), microseconds=rng.randrange(1_000_000))


def between(rng: random.Random, start: datetime, end: datetime) -> datetime:
    span = max((end - start).total_seconds(), 60.0)
    return start + timedelta(seconds=rng.uniform(0, span))


def stamp(moment_: datetime | None) -> str | None:
    return None if moment_ is None else moment_.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def version_access(rng: random.Random, written: datetime, replaced: datetime | None) -> datetime | None:
    """When the agent last used a version: an older one until its change and often past it (nobody said it changed,
    and it still ranked first); the newest one maybe never, maybe lately."""
    if replaced is None:
        return None if rng.random() < 0.4 else between(rng, written, AS_OF)
    if rng.random() < 0.45:
        return between(rng, replaced, min(AS_OF, replaced + timedelta(days=rng.randrange(3, 120))))
    return between(rng, written + (replaced - written) / 2, replaced)


def person_file(person: Person) -> dict[str, object]:
    rng = random.Random(person.namespace)  # noqa: S311  # a dataset generator, not a secret
    s, o, p = person.pronouns
    words = {"n": person.name, "s": s, "o": o, "p": p, **person.details}
    entries: list[dict[str, object]] = []
    groups: list[tuple[Fact, list[int]]] = []
    for item in person.facts:
        indexes = []
        moments = [moment(rng, day) for day, _, _ in item.versions]
        for number, (_, kind, content) in enumerate(item.versions):
            replaced = moments[number + 1] if number + 1 < len(moments) else None
            tags = item.tags if rng.random() < 0.75 else [*item.tags[:1], rng.choice(["profile", "person", "update"])]
            indexes.append(len(entries))
            entries.append(memory(content, tags, kind, moments[number], version_access(rng, moments[number], replaced)))
        groups.append((item, indexes))
    for day, kind, tags, content in person.near:
        written = moment(rng, day)
        entries.append(
            memory(content, tags, kind, written, None if rng.random() < 0.5 else between(rng, written, AS_OF))
        )
    for kind, text, tags in GENERIC:
        written = between(rng, START, AS_OF - timedelta(days=3))
        used = None if rng.random() < 0.35 else between(rng, written, AS_OF)
        entries.append(memory(text.format(**words), tags, kind, written, used))
    order = sorted(range(len(entries)), key=lambda index: (entries[index]["created_at"], index))
    refs = {index: f"m{rank + 1:03d}" for rank, index in enumerate(order)}
    memories = [{"ref": refs[index], **entries[index]} for index in order]
    questions = []
    for item, indexes in groups:
        chosen = [*rng.sample(QUESTIONS[item.kind], 2), *item.asked]
        current, older = refs[indexes[-1]], [refs[index] for index in indexes[:-1]]
        for text in chosen:
            questions.append(
                {
                    "id": f"{person.namespace}-q{len(questions) + 1:03d}",
                    "question": text.format(**words),
                    "kind": item.kind,
                    "relevant": {current: 2, **dict.fromkeys(older, 0)},
                    "current": current,
                    "older": older,
                    "note": f"{item.kind}: {len(older) + 1} versions, the newest is {current}",
                }
            )
    return {
        "namespace": person.namespace,
        "as_of": stamp(AS_OF),
        "split": person.split,
        "persona": person.persona,
        "memories": memories,
        "questions": questions,
    }


def memory(content: str, tags: list[str], kind: str, written: datetime, used: datetime | None) -> dict[str, object]:
    return {
        "content": content,
        "tags": sorted(set(tags)),
        "memory_type": kind,
        "status": "active",
        "created_at": stamp(written),
        "updated_at": stamp(written),
        "last_accessed_at": stamp(used),
    }


def main() -> None:
    for entry in PEOPLE:
        data = person_file(parsed(entry))
        (HERE / f"{entry['namespace']}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(f"{entry['namespace']}: {len(data['memories'])} memories, {len(data['questions'])} questions")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
