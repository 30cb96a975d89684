"""The record's validation rules (CONTRACT.md, "The record"), checked on core.model directly."""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.clock import format_timestamp
from core.errors import FieldError, InvalidInputError, MemoryNotFoundError
from core.limits import CONTENT_MAX_CHARS, TAG_MAX_CHARS, TAGS_MAX
from core.model import (
    MEMORY_TYPES,
    READ_ONLY_FIELDS,
    Memory,
    MemoryChanges,
    NewMemory,
    parse_memory_id,
)

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TAG_FIRST = string.ascii_lowercase + string.digits
TAG_REST = TAG_FIRST + "-_.:"
WHITESPACE = " \t\n\r\f\v\u00a0\u2003"


BOTH_MODELS = [pytest.param(NewMemory, id="create"), pytest.param(MemoryChanges, id="patch")]


def refused(model: type[NewMemory] | type[MemoryChanges], body: object) -> list[FieldError]:
    with pytest.raises(InvalidInputError) as caught:
        model.parse(body)
    return list(caught.value.errors)


def named(errors: list[FieldError]) -> list[str]:
    return [error.field for error in errors]


def a_memory(**fields: Any) -> Memory:
    record: dict[str, Any] = {
        "id": 1,
        "content": "remembered",
        "tags": ["travel"],
        "created_at": "2026-04-06T14:12:00.000001Z",
        "updated_at": "2026-04-06T14:12:00.000001Z",
        "last_accessed_at": None,
        "memory_type": "fact",
        "status": "active",
        "version": 1,
    }
    return Memory(**{**record, **fields})


# --- content ---


def test_content_is_trimmed() -> None:
    assert NewMemory.parse({"content": " \n\t likes green tea \r\n "}).content == "likes green tea"


def test_content_keeps_inner_whitespace() -> None:
    assert NewMemory.parse({"content": "two  spaces\nand a line"}).content == "two  spaces\nand a line"


def test_content_of_exactly_the_maximum_length_is_accepted() -> None:
    assert len(NewMemory.parse({"content": "x" * CONTENT_MAX_CHARS}).content) == 8192


def test_content_at_the_maximum_after_trimming_is_accepted_even_when_padded() -> None:
    assert NewMemory.parse({"content": "   " + "x" * 8192 + "   "}).content == "x" * 8192


def test_content_one_character_over_the_maximum_is_refused_naming_content() -> None:
    errors = refused(NewMemory, {"content": "x" * 8193})
    assert named(errors) == ["content"]
    assert "8192" in errors[0].message


def test_content_length_counts_characters_not_bytes() -> None:
    assert len(NewMemory.parse({"content": "é" * 8192}).content) == 8192
    assert named(refused(NewMemory, {"content": "😀" * 8193})) == ["content"]


def test_a_single_character_of_content_is_accepted() -> None:
    assert NewMemory.parse({"content": " a "}).content == "a"


@pytest.mark.parametrize("blank", ["", " ", "\n\t  \r\n", "\u00a0\u2003"], ids=["empty", "space", "mixed", "unicode"])
@pytest.mark.parametrize("model", BOTH_MODELS)
def test_content_that_is_empty_or_only_whitespace_is_refused(
    model: type[NewMemory] | type[MemoryChanges], blank: str
) -> None:
    assert named(refused(model, {"content": blank})) == ["content"]


def test_content_is_required_on_create() -> None:
    errors = refused(NewMemory, {"tags": ["a"]})
    assert named(errors) == ["content"]
    assert errors[0].message == "is required"


@pytest.mark.parametrize("text", ["a\ud800b", "\udfff", "ok \ud83d"], ids=["high", "low", "half-pair"])
@pytest.mark.parametrize("model", BOTH_MODELS)
def test_content_with_a_lone_surrogate_is_refused_naming_content(
    model: type[NewMemory] | type[MemoryChanges], text: str
) -> None:
    assert named(refused(model, {"content": text})) == ["content"]


def test_a_tag_with_a_lone_surrogate_is_refused_naming_its_position() -> None:
    assert named(refused(NewMemory, {"content": "x", "tags": ["ok", "a\ud800"]})) == ["tags[1]"]


HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\U000e0000-\U000e007f]")


@given(st.text(min_size=1, max_size=200).filter(lambda s: s.strip() != "" and not HIDDEN.search(s.strip())))
def test_any_accepted_content_is_stored_trimmed_and_reparses_unchanged(raw: str) -> None:
    content = NewMemory.parse({"content": raw}).content
    assert content == raw.strip()
    assert NewMemory.parse({"content": content}).content == content


# --- tags ---


def test_tags_default_to_an_empty_list() -> None:
    assert NewMemory.parse({"content": "x"}).tags == []


def test_tags_are_trimmed_and_lower_cased() -> None:
    assert NewMemory.parse({"content": "x", "tags": ["  Travel ", "WORK", "\tproject:Apollo\n"]}).tags == [
        "travel",
        "work",
        "project:apollo",
    ]


def test_every_allowed_tag_character_is_accepted() -> None:
    tags = ["a-b_c.d:e", "0start", "z", "9", "a" + "-_.:" * 5]
    assert NewMemory.parse({"content": "x", "tags": tags}).tags == tags


def test_a_tag_of_exactly_64_characters_is_accepted() -> None:
    tag = "a" * TAG_MAX_CHARS
    assert NewMemory.parse({"content": "x", "tags": [tag]}).tags == [tag]


def test_a_tag_of_64_characters_after_trimming_is_accepted() -> None:
    assert NewMemory.parse({"content": "x", "tags": ["  " + "b" * 64 + "  "]}).tags == ["b" * 64]


def test_a_tag_of_65_characters_is_refused_naming_its_position() -> None:
    assert named(refused(NewMemory, {"content": "x", "tags": ["ok", "a" * 65]})) == ["tags[1]"]


@pytest.mark.parametrize(
    "bad_tag",
    [
        "",
        "   ",
        "-leading-dash",
        "_leading-underscore",
        ".leading-dot",
        ":leading-colon",
        "two words",
        "slash/tag",
        "hash#tag",
        "plus+tag",
        "café",
        "emoji😀",
        "tab\tinside",
        "comma,tag",
        "ünicode",
    ],
)
def test_a_malformed_tag_is_refused_naming_its_position(bad_tag: str) -> None:
    errors = refused(NewMemory, {"content": "x", "tags": ["fine", "also-fine", bad_tag]})
    assert named(errors) == ["tags[2]"]
    assert "a-z 0-9 - _ . :" in errors[0].message


def test_every_malformed_tag_is_named_not_only_the_first() -> None:
    assert named(refused(NewMemory, {"content": "x", "tags": ["-a", "ok", "b c", "fine", ""]})) == [
        "tags[0]",
        "tags[2]",
        "tags[4]",
    ]


def test_duplicate_tags_are_dropped_keeping_the_first_order() -> None:
    assert NewMemory.parse({"content": "x", "tags": ["b", "a", "b", "c", "a"]}).tags == ["b", "a", "c"]


def test_tags_that_differ_only_by_case_or_padding_are_duplicates() -> None:
    assert NewMemory.parse({"content": "x", "tags": ["Travel", " travel", "TRAVEL ", "work"]}).tags == [
        "travel",
        "work",
    ]


def test_twenty_distinct_tags_are_accepted() -> None:
    tags = [f"tag-{n}" for n in range(TAGS_MAX)]
    assert NewMemory.parse({"content": "x", "tags": tags}).tags == tags


def test_twenty_one_distinct_tags_are_refused_naming_tags() -> None:
    errors = refused(NewMemory, {"content": "x", "tags": [f"tag-{n}" for n in range(21)]})
    assert named(errors) == ["tags"]
    assert "20" in errors[0].message


def test_twenty_five_tags_collapsing_to_twenty_distinct_are_accepted() -> None:
    distinct = [f"tag-{n}" for n in range(20)]
    raw = [*distinct, "TAG-0", " tag-5 ", "tag-19", "Tag-3", "tag-0"]
    assert len(raw) == 25
    assert NewMemory.parse({"content": "x", "tags": raw}).tags == distinct


def test_the_tag_limit_applies_to_patch_too() -> None:
    assert named(refused(MemoryChanges, {"tags": [f"t{n}" for n in range(21)]})) == ["tags"]


def test_an_empty_tag_list_is_accepted_on_patch() -> None:
    assert MemoryChanges.parse({"tags": []}).tags == []


def _decorated(tag: str, draw: st.DrawFn) -> str:
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in tag)
    pad = st.text(alphabet=WHITESPACE, max_size=3)
    return draw(pad) + cased + draw(pad)


valid_tags = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(TAG_FIRST),
    st.text(alphabet=TAG_REST, max_size=TAG_MAX_CHARS - 1),
)


@st.composite
def raw_tag_lists(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A list of well-formed tags in any case and padding, with repeats, and the list it must normalise to."""
    pool = draw(st.lists(valid_tags, min_size=1, max_size=TAGS_MAX, unique=True))
    picks = draw(st.lists(st.sampled_from(pool), max_size=30))
    expected = list(dict.fromkeys(picks))
    return [_decorated(tag, draw) for tag in picks], expected


@given(raw_tag_lists())
def test_any_accepted_tag_list_normalises_in_first_order_and_is_idempotent(case: tuple[list[str], list[str]]) -> None:
    raw, expected = case
    tags = NewMemory.parse({"content": "x", "tags": raw}).tags
    assert tags == expected
    assert NewMemory.parse({"content": "x", "tags": tags}).tags == tags
    assert MemoryChanges.parse({"tags": raw}).tags == expected


@given(st.lists(valid_tags, min_size=21, max_size=30, unique=True))
def test_any_list_of_more_than_twenty_distinct_tags_is_refused(tags: list[str]) -> None:
    assert named(refused(NewMemory, {"content": "x", "tags": tags})) == ["tags"]


@given(
    valid_tags,
    st.integers(min_value=0, max_value=64),
    st.characters(exclude_characters=TAG_REST + TAG_REST.upper() + WHITESPACE, exclude_categories=["Cs"]),
)
def test_a_tag_holding_any_character_outside_the_charset_is_refused(tag: str, at: int, bad: str) -> None:
    candidate = tag[:at] + bad + tag[at:]
    # The inserted character must survive trimming and not lower-case into the charset.
    assume(candidate.strip().lower() == candidate.lower())
    assume(not re.fullmatch(r"[a-z0-9][a-z0-9\-_.:]*", candidate.lower()))
    assert named(refused(NewMemory, {"content": "x", "tags": [candidate]})) == ["tags[0]"]


# --- memory_type and status ---


def test_memory_type_defaults_to_fact_and_status_to_active() -> None:
    new = NewMemory.parse({"content": "x"})
    assert (new.memory_type, new.status) == ("fact", "active")


@pytest.mark.parametrize("memory_type", ["preference", "fact", "identity", "event"])
def test_each_memory_type_is_accepted(memory_type: str) -> None:
    assert NewMemory.parse({"content": "x", "memory_type": memory_type}).memory_type == memory_type
    assert MemoryChanges.parse({"memory_type": memory_type}).memory_type == memory_type


def test_the_memory_types_are_exactly_the_contracts_four() -> None:
    assert set(MEMORY_TYPES) == {"preference", "fact", "identity", "event"}


@pytest.mark.parametrize("memory_type", ["Fact", "FACT", "facts", "note", "", " fact"])
@pytest.mark.parametrize("model", BOTH_MODELS)
def test_any_other_memory_type_is_refused_naming_memory_type(
    model: type[NewMemory] | type[MemoryChanges], memory_type: str
) -> None:
    errors = refused(
        model, {"content": "x", "memory_type": memory_type} if model is NewMemory else {"memory_type": memory_type}
    )
    assert named(errors) == ["memory_type"]
    assert "'fact'" in errors[0].message


@pytest.mark.parametrize("status", ["active", "invalid"])
def test_active_and_invalid_are_writable_statuses(status: str) -> None:
    assert NewMemory.parse({"content": "x", "status": status}).status == status
    assert MemoryChanges.parse({"status": status}).status == status


@pytest.mark.parametrize("model", BOTH_MODELS)
def test_status_deleted_is_refused_on_create_and_patch(model: type[NewMemory] | type[MemoryChanges]) -> None:
    body: dict[str, object] = {"status": "deleted", **({"content": "x"} if model is NewMemory else {})}
    errors = refused(model, body)
    assert named(errors) == ["status"]
    assert "'active'" in errors[0].message
    assert "'invalid'" in errors[0].message


@pytest.mark.parametrize("status", ["Active", "archived", ""])
def test_any_other_status_is_refused_naming_status(status: str) -> None:
    assert named(refused(NewMemory, {"content": "x", "status": status})) == ["status"]


# --- unknown, read-only and wrongly typed fields ---


@pytest.mark.parametrize("field", sorted(READ_ONLY_FIELDS))
@pytest.mark.parametrize("model", [NewMemory, MemoryChanges], ids=["create", "patch"])
def test_a_read_only_field_is_refused_by_name(model: type[NewMemory] | type[MemoryChanges], field: str) -> None:
    errors = refused(model, {"content": "x", field: 1})
    assert named(errors) == [field]
    assert errors[0].message == "is read-only"


def test_the_read_only_fields_are_exactly_the_store_assigned_ones() -> None:
    assert {"id", "created_at", "updated_at", "last_accessed_at", "version"} == READ_ONLY_FIELDS


@pytest.mark.parametrize("field", ["namespace", "colour", "Content", "tag", "type"])
@pytest.mark.parametrize("model", [NewMemory, MemoryChanges], ids=["create", "patch"])
def test_an_unknown_field_is_refused_by_name(model: type[NewMemory] | type[MemoryChanges], field: str) -> None:
    errors = refused(model, {"content": "x", field: "anything"})
    assert named(errors) == [field]
    assert errors[0].message == "is not a field of this request"


@pytest.mark.parametrize("model", BOTH_MODELS)
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": 1}, "content"),
        ({"content": 1.5}, "content"),
        ({"content": True}, "content"),
        ({"content": ["x"]}, "content"),
        ({"content": {"text": "x"}}, "content"),
        ({"content": "x", "tags": "travel"}, "tags"),
        ({"content": "x", "tags": {"travel": True}}, "tags"),
        ({"content": "x", "tags": ["ok", 7]}, "tags[1]"),
        ({"content": "x", "tags": ["ok", "fine", ["nested"]]}, "tags[2]"),
        ({"content": "x", "tags": [None]}, "tags[0]"),
        ({"content": "x", "memory_type": 1}, "memory_type"),
        ({"content": "x", "status": False}, "status"),
    ],
)
def test_a_wrongly_typed_field_is_refused_by_name(
    model: type[NewMemory] | type[MemoryChanges], body: dict[str, object], field: str
) -> None:
    assert named(refused(model, body)) == [field]


def test_a_string_field_given_a_number_says_it_must_be_a_string() -> None:
    assert refused(NewMemory, {"content": 5})[0].message == "must be a string"


def test_tags_given_a_string_say_they_must_be_a_list_of_strings() -> None:
    assert refused(NewMemory, {"content": "x", "tags": "a"})[0].message == "must be a list of strings"


@pytest.mark.parametrize("body", [[], ["content"], "content", 3, None, True], ids=repr)
@pytest.mark.parametrize("model", [NewMemory, MemoryChanges], ids=["create", "patch"])
def test_a_body_that_is_not_an_object_is_refused_as_the_body(
    model: type[NewMemory] | type[MemoryChanges], body: object
) -> None:
    errors = refused(model, body)
    assert named(errors) == ["body"]
    assert errors[0].message == "must be a JSON object"


def test_every_bad_field_of_one_body_is_named() -> None:
    body = {"content": "", "tags": ["ok", "-bad"], "memory_type": "note", "status": "deleted", "id": 3, "extra": 1}
    assert set(named(refused(NewMemory, body))) == {"content", "tags[1]", "memory_type", "status", "id", "extra"}


# --- PATCH bodies ---


def test_an_empty_patch_is_accepted_and_sets_nothing() -> None:
    assert MemoryChanges.parse({}).model_fields_set == set()


def test_a_patch_sets_only_the_fields_it_names() -> None:
    changes = MemoryChanges.parse({"tags": [" A "]})
    assert changes.model_fields_set == {"tags"}
    assert changes.tags == ["a"]


@pytest.mark.parametrize("field", ["content", "tags", "memory_type", "status"])
def test_null_for_an_editable_field_in_a_patch_is_refused_by_name(field: str) -> None:
    errors = refused(MemoryChanges, {field: None})
    assert named(errors) == [field]
    assert errors[0].message == "must not be null"


def test_every_null_in_a_patch_is_named() -> None:
    assert set(named(refused(MemoryChanges, {"content": None, "tags": None, "memory_type": "fact"}))) == {
        "content",
        "tags",
    }


def test_a_patch_with_a_null_and_another_bad_field_names_both() -> None:
    assert set(named(refused(MemoryChanges, {"content": None, "colour": "red"}))) == {"content", "colour"}


@pytest.mark.parametrize("field", ["content", "tags", "memory_type", "status"])
def test_null_for_an_optional_field_on_create_is_refused_by_name(field: str) -> None:
    body: dict[str, object] = {"content": "x"} | {field: None}
    assert named(refused(NewMemory, body)) == [field]


def test_a_patch_changing_nothing_returns_the_same_record() -> None:
    memory = a_memory(content="same", tags=["a", "b"], memory_type="event", status="invalid")
    changes = MemoryChanges.parse({"content": "  same ", "tags": ["A", "b", "a"], "memory_type": "event"})
    assert changes.apply_to(memory, "2030-01-01T00:00:00.000000Z") is memory


def test_a_patch_changing_a_field_bumps_version_by_one_and_sets_updated_at() -> None:
    memory = a_memory(version=4)
    later = "2030-01-01T00:00:00.000000Z"
    changed = MemoryChanges.parse({"content": "new", "tags": ["x"], "status": "invalid"}).apply_to(memory, later)
    assert (changed.version, changed.updated_at, changed.created_at) == (5, later, memory.created_at)
    assert (changed.content, changed.tags, changed.status) == ("new", ["x"], "invalid")
    assert changed.last_accessed_at == memory.last_accessed_at


def test_reordering_tags_is_a_change() -> None:
    memory = a_memory(tags=["a", "b"])
    assert MemoryChanges.parse({"tags": ["b", "a"]}).apply_to(memory, "2030-01-01T00:00:00.000000Z").version == 2


# --- the record and its timestamps ---


def test_the_record_has_exactly_the_contracts_fields() -> None:
    assert set(Memory.model_fields) == {
        "id",
        "content",
        "tags",
        "created_at",
        "updated_at",
        "last_accessed_at",
        "memory_type",
        "status",
        "version",
    }


def test_format_timestamp_writes_utc_with_six_fraction_digits_and_z() -> None:
    moment = datetime(2026, 4, 6, 14, 12, 5, 7, tzinfo=UTC)
    assert format_timestamp(moment) == "2026-04-06T14:12:05.000007Z"


def test_format_timestamp_converts_other_offsets_to_utc() -> None:
    moment = datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(moment) == "2025-12-31T23:30:00.000000Z"


offsets = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59))
)
instants = st.datetimes(min_value=datetime(1001, 1, 1), max_value=datetime(9998, 12, 31), timezones=offsets)


@given(instants)
def test_format_timestamp_always_matches_the_contract_format_and_round_trips(moment: datetime) -> None:
    text = format_timestamp(moment)
    assert TIMESTAMP.fullmatch(text)
    assert datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) == moment


@given(instants, instants)
def test_timestamps_compare_as_strings_as_their_instants_compare(a: datetime, b: datetime) -> None:
    assert (format_timestamp(a) < format_timestamp(b)) == (a < b)
    assert (format_timestamp(a) == format_timestamp(b)) == (a == b)


def test_format_timestamp_pads_the_year_to_four_digits() -> None:
    assert format_timestamp(datetime(999, 1, 2, tzinfo=UTC)) == "0999-01-02T00:00:00.000000Z"


# --- hidden characters (they hide instructions from people reading memories bound for prompts) ---


@pytest.mark.parametrize(
    ("content", "code_point"),
    [
        ("stop\x00here", "U+0000"),
        ("colour\x1b[31m red", "U+001B"),
        ("line\rfeed", "U+000D"),
        ("bell\x07", "U+0007"),
        ("plain \U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 text", "U+E0049"),
        ("\U000e007f end", "U+E007F"),
        ("rub\x7fout", "U+007F"),
        ("\x80 first of C1", "U+0080"),
        ("next\x85line", "U+0085"),
        ("csi\x9b31m red", "U+009B"),
        ("last of C1 \x9f", "U+009F"),
    ],
)
def test_content_with_control_or_unicode_tag_characters_is_refused_naming_the_character(
    content: str, code_point: str
) -> None:
    with pytest.raises(InvalidInputError) as raised:
        NewMemory.parse({"content": content})
    (error,) = raised.value.errors
    assert error.field == "content"
    assert code_point in error.message
    with pytest.raises(InvalidInputError):
        MemoryChanges.parse({"content": content})


def test_tabs_newlines_and_trimmed_carriage_returns_are_kept_or_trimmed_not_refused() -> None:
    assert NewMemory.parse({"content": "\r\n one\tcolumn\ntwo \r\n"}).content == "one\tcolumn\ntwo"


def test_a_next_line_at_the_ends_is_trimmed_as_whitespace_before_the_rule_applies() -> None:
    assert NewMemory.parse({"content": "\x85 tea \x85\n"}).content == "tea"
    assert MemoryChanges.parse({"content": "\x85tea\x85"}).content == "tea"


def test_the_neighbours_of_del_and_the_c1_controls_are_ordinary_text() -> None:
    assert NewMemory.parse({"content": "non\xa0breaking \xa9 \x7e"}).content == "non\xa0breaking \xa9 \x7e"


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        ("abc", "memory abc does not exist"),
        ("0", "memory 0 does not exist"),
        ("", "memory '' does not exist"),
        ("1 2", "memory '1 2' does not exist"),
        ("\n", "memory '\\n' does not exist"),
    ],
)
def test_an_id_that_names_no_memory_is_named_readably_in_the_error(sent: str, message: str) -> None:
    with pytest.raises(MemoryNotFoundError) as raised:
        parse_memory_id(sent)
    assert str(raised.value) == message
