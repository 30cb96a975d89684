"""The export format (core.portable) on any content the API accepts: export -> import -> export gives the same
bytes, each memory stays on one line for every line-splitting tool, and files of the first version still import."""

from __future__ import annotations

import json
import string
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from core.clock import format_timestamp
from core.errors import InvalidInputError
from core.history import Change, Revision
from core.model import Memory, NewMemory, normalize_tag
from core.portable import ExportedMemory, ExportHeader, header_line, parse_export

# What tools split lines on besides "\n" (str.splitlines, JavaScript's line terminators) and content may hold, drawn
# far more often than the whole Unicode range (controls included) would draw them; the others are whitespace to tags.
SEPARATORS = "\x85\u2028\u2029"
CHARACTER = st.characters(exclude_categories=["Cs"]) | st.sampled_from([*SEPARATORS, "\n", "\t", " ", "\ufeff"])
# A list joined, not st.text: text() folds its alphabet into one range and all but never draws the sampled ones.
CANDIDATE = st.lists(CHARACTER, min_size=1, max_size=40).map("".join)
TAG_CANDIDATE = CANDIDATE | st.text(st.sampled_from(string.ascii_letters + string.digits + "-_.: \t\x0b\x1c\u2028"))
START = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)


def _content(text: str) -> str | None:
    try:
        return NewMemory.parse({"content": text}).content
    except InvalidInputError:
        return None


def _tag(text: str) -> str | None:
    try:
        return normalize_tag(text)
    except ValueError:
        return None


CONTENT = CANDIDATE.map(_content).filter(lambda content: content is not None)
TAGS = st.lists(TAG_CANDIDATE.map(_tag), max_size=25).map(
    lambda tags: list(dict.fromkeys(tag for tag in tags if tag is not None))[:20]
)


@st.composite
def exported_memories(draw: st.DrawFn, memory_id: int, history: bool) -> ExportedMemory:
    """A memory as the service leaves it: created, maybe updated, maybe deleted, maybe read, with its history."""
    at = [
        format_timestamp(START + timedelta(seconds=s))
        for s in sorted(draw(st.lists(st.integers(0, 10**6), min_size=4, max_size=4)))
    ]
    created = Memory(
        id=memory_id,
        content=draw(CONTENT),
        tags=draw(TAGS),
        created_at=at[0],
        updated_at=at[0],
        last_accessed_at=None,
        memory_type=draw(st.sampled_from(["preference", "fact", "identity", "event"])),
        status=draw(st.sampled_from(["active", "invalid"])),
        version=1,
    )
    life: list[tuple[Change, str, Memory]] = [("created", at[0], created)]
    if draw(st.booleans()):
        changes = {"content": draw(CONTENT), "tags": draw(TAGS), "updated_at": at[1], "version": 2}
        life.append(("updated", at[1], created.model_copy(update=changes)))
    prior, deleted_at = life[-1][2].status, None
    if draw(st.booleans()):
        deleted_at = at[2]
        life.append(("deleted", at[2], life[-1][2].model_copy(update={"status": "deleted"})))
    memory = life[-1][2].model_copy(update={"last_accessed_at": draw(st.sampled_from([None, at[3]]))})
    revisions = [Revision.of(m, n, change, when, None) for n, (change, when, m) in enumerate(life, start=1)]
    deleted = memory.status == "deleted"
    return ExportedMemory.of(
        memory, prior if deleted else None, deleted_at if deleted else None, revisions if history else None
    )


@st.composite
def exports(draw: st.DrawFn) -> tuple[str, list[str]]:
    history = draw(st.booleans())
    header = ExportHeader(
        namespace=draw(CANDIDATE), exported_at=format_timestamp(START), include_deleted=True, history=history
    )
    count = draw(st.integers(1, 3))
    memories = [draw(exported_memories(memory_id, history)) for memory_id in range(1, count + 1)]
    return header_line(header), [memory.line() for memory in memories]


@settings(max_examples=150, deadline=None)
@given(exports())
def test_an_export_of_any_accepted_content_imports_and_exports_again_to_the_same_bytes(
    export: tuple[str, list[str]],
) -> None:
    header, lines = export

    imported = parse_export("\n".join([header, *lines]) + "\n")

    assert [memory.line().encode() for memory in imported] == [line.encode() for line in lines]
    # One memory, one line, for every tool: none of them sees a line break inside a line.
    assert all(len(line.splitlines()) == 1 for line in [header, *lines])


@settings(max_examples=50, deadline=None)
@given(exports())
def test_an_export_written_by_the_first_version_with_raw_line_separators_still_imports(
    export: tuple[str, list[str]],
) -> None:
    header, lines = export
    # The first version wrote every character but JSON's own escapes raw, U+2028 and its kind included.
    raw = [json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")) for line in lines]

    imported = parse_export("\n".join([header, *raw]) + "\n")

    assert [memory.line() for memory in imported] == lines


@settings(max_examples=25, deadline=None)
@given(exports())
def test_a_byte_order_mark_and_windows_line_ends_are_read_as_the_same_export(export: tuple[str, list[str]]) -> None:
    header, lines = export

    imported = parse_export("\ufeff" + "\r\n".join([header, *lines]) + "\r\n")

    assert [memory.line() for memory in imported] == lines
