"""The memory record, its vocabularies and the validation rules of CONTRACT.md's record section."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from core.errors import FieldError, InvalidInputError, MemoryNotFoundError, VersionExhaustedError
from core.limits import (
    CONTENT_MAX_CHARS,
    ID_DIGITS,
    IDEMPOTENCY_KEY_MAX_CHARS,
    MAX_MEMORY_ID,
    MAX_VERSION,
    TAG_MAX_CHARS,
    TAGS_MAX,
)
from core.schema import (
    CONTENT_SCHEMA,
    HIDDEN,
    IDEMPOTENCY_KEY_PATTERN,
    IDEMPOTENCY_KEY_SCHEMA,
    SUPERSEDES_DESCRIPTION,
    TAG_SCHEMA,
    TAGS_SCHEMA,
    SupersededIds,
)

MemoryType = Literal["preference", "fact", "identity", "event"]
Status = Literal["active", "invalid", "deleted"]
WritableStatus = Literal["active", "invalid"]

MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)

READ_ONLY_FIELDS = frozenset({"id", "created_at", "updated_at", "last_accessed_at", "version"})
# What a field left out that must be given is told, at either door.
IS_REQUIRED = "is required"
# What a body field (or a tool argument) that the request does not have is told, at both doors.
NOT_A_FIELD = "is not a field of this request"

# The controlled half of the hybrid tag vocabulary; any other well-formed tag is accepted as freeform.
STANDARD_TAGS: tuple[str, ...] = (
    "profile",
    "preference",
    "writing-style",
    "project",
    "task",
    "deadline",
    "decision",
    "person",
    "place",
    "travel",
    "health",
    "work",
    "tooling",
)

_TAG_PATTERN = re.compile(rf"[a-z0-9][a-z0-9\-_.:]{{0,{TAG_MAX_CHARS - 1}}}")
TAG_RULE = (
    f"must be 1 to {TAG_MAX_CHARS} characters of a-z 0-9 - _ . : starting with a letter or digit "
    "(after trimming and lower-casing)"
)


# Invisible to a person reading a memory, yet read by the model it is injected into: a way to hide instructions.
# core.schema lists them once, for this validator and for the content schema both doors publish.
_HIDDEN_CHARACTERS = re.compile(f"[{HIDDEN}]")


def _require_unicode(value: str) -> None:
    # JSON can carry lone surrogates ("\ud800"); they are not text and cannot be stored or sent back.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no lone surrogates)") from None


def normalize_tag(value: str) -> str:
    _require_unicode(value)
    tag = value.strip().lower()
    if not _TAG_PATTERN.fullmatch(tag):
        raise ValueError(TAG_RULE)
    return tag


def _normalize_content(value: str) -> str:
    _require_unicode(value)
    content = value.strip()
    if not 1 <= len(content) <= CONTENT_MAX_CHARS:
        raise ValueError(f"must be 1 to {CONTENT_MAX_CHARS} characters after trimming")
    hidden = _HIDDEN_CHARACTERS.search(content)
    if hidden:
        raise ValueError(
            "must not contain control characters other than tab and newline, nor Unicode tag characters "
            f"(U+E0000 to U+E007F); found U+{ord(hidden.group()):04X} at position {hidden.start()}"
        )
    return content


def _dedupe_tags(tags: list[str]) -> list[str]:
    unique = list(dict.fromkeys(tags))
    if len(unique) > TAGS_MAX:
        raise ValueError(f"must hold at most {TAGS_MAX} distinct tags")
    return unique


# Each field's rule, its JSON Schema (core.schema) and its description live on its type, here; both doors publish
# these (the OpenAPI document and the MCP tools' inputSchemas), so a bound changes in one place.
CONTENT_DESCRIPTION = (
    "The memory itself: one atomic fact in normalised, self-contained words (third person, absolute dates), "
    f"e.g. 'The user prefers metric units'. Trimmed; 1 to {CONTENT_MAX_CHARS} characters."
)
TAGS_DESCRIPTION = (
    f"Labels for filtering, at most {TAGS_MAX}. Each is trimmed and lower-cased, then 1 to {TAG_MAX_CHARS} "
    f"characters of a-z 0-9 - _ . : starting with a letter or digit; duplicates are dropped. Prefer the standard "
    f"tags: {', '.join(STANDARD_TAGS)}; add freeform ones (e.g. project:apollo) only for what they do not cover."
)
MEMORY_TYPE_DESCRIPTION = (
    "identity (who the user is: name, role, relationships, home), preference (likes, dislikes, how the user wants "
    "things done), event (happened or will happen at a known time) or fact (anything else true)."
)
STATUS_DESCRIPTION = "active (believed true) or invalid (known to be wrong or outdated, kept for the record)."


Content = Annotated[str, AfterValidator(_normalize_content), WithJsonSchema(CONTENT_SCHEMA)]
Tag = Annotated[str, AfterValidator(normalize_tag), WithJsonSchema(TAG_SCHEMA)]
Tags = Annotated[list[Tag], AfterValidator(_dedupe_tags), WithJsonSchema(TAGS_SCHEMA)]
# What a caller names a memory or a version by, and the key of an idempotent create (validated by their parsers).
MemoryId = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_MEMORY_ID})]
ExpectedVersion = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_VERSION})]
IdempotencyKey = Annotated[str, WithJsonSchema(IDEMPOTENCY_KEY_SCHEMA)]


VERSION_RULE = f"must be an integer from 1 to {MAX_VERSION}"


def parse_expected_version(value: object, field: str) -> int | None:
    """The version a caller expects a memory to be at (None: any); `field` is the door's name for it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_VERSION:
        raise InvalidInputError([FieldError(field, VERSION_RULE)])
    return value


def parse_memory_id(value: object) -> int:
    """An id as a door receives it (path text or tool argument); anything that cannot be an id is not found."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= ID_DIGITS:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_MEMORY_ID:
        raise MemoryNotFoundError(str(value)[:40])
    return value


class Memory(BaseModel):
    """One memory record, exactly the fields of the contract."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int = Field(ge=1)
    content: str
    tags: list[str]
    created_at: str
    updated_at: str
    last_accessed_at: str | None
    memory_type: MemoryType
    status: Status
    version: int = Field(ge=1)


class InputModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    @classmethod
    def parse(cls, data: object) -> Self:
        """Validate untrusted input, raising InvalidInputError with every bad field named."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidInputError(field_errors(exc)) from None


class NewMemory(InputModel):
    """The body of a create: only `content` is required."""

    content: Content = Field(description=CONTENT_DESCRIPTION)
    tags: Tags = Field(default=[], description=TAGS_DESCRIPTION)
    memory_type: MemoryType = Field(default="fact", description=MEMORY_TYPE_DESCRIPTION)
    status: WritableStatus = Field(default="active", description=STATUS_DESCRIPTION)
    supersedes: SupersededIds | None = Field(default=None, description=SUPERSEDES_DESCRIPTION)


_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)


@dataclass(frozen=True)
class IdempotentCreate:
    """A create that may be retried: the caller's key (only its hash is kept) and the request it stands for.

    `field` is the name the door gave the key (a header or a tool argument), so errors name it in the door's words.
    """

    key_hash: str
    fingerprint: str
    field: str

    @classmethod
    def of(cls, key: object, new: NewMemory, field: str) -> IdempotentCreate:
        if not isinstance(key, str) or not _IDEMPOTENCY_KEY.fullmatch(key):
            message = f"must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters (no spaces)"
            raise InvalidInputError([FieldError(field, message)])
        # The validated, normalised create is the request: the same fields and values give the same fingerprint.
        canonical = json.dumps(new.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return cls(
            key_hash=hashlib.sha256(key.encode()).hexdigest(),
            fingerprint=hashlib.sha256(canonical.encode()).hexdigest(),
            field=field,
        )


class MemoryChanges(InputModel):
    """The body of a PATCH: any subset of the editable fields; an absent field is left as it is."""

    # None only as the "not given" default (never validated); a given null is refused by _no_nulls.
    content: Content = Field(default=None, description=CONTENT_DESCRIPTION)  # type: ignore[assignment]  # None: not given
    tags: Tags = Field(default=None, description=TAGS_DESCRIPTION)  # type: ignore[arg-type]  # None: not given
    memory_type: MemoryType = Field(default=None, description=MEMORY_TYPE_DESCRIPTION)  # type: ignore[arg-type]  # None: not given
    status: WritableStatus = Field(default=None, description=STATUS_DESCRIPTION)  # type: ignore[arg-type]  # None: not given

    @field_validator("*", mode="before")
    @classmethod
    def _no_nulls(cls, value: object) -> object:
        if value is None:
            raise ValueError("must not be null")
        return value

    def apply_to(self, memory: Memory, now: str) -> Memory:
        """The memory after this PATCH; the same object when no editable field actually changes.
        VersionExhaustedError when it would change a memory already at MAX_VERSION."""
        changed = {
            name: value for name in self.model_fields_set if (value := getattr(self, name)) != getattr(memory, name)
        }
        if not changed:
            return memory
        if memory.version >= MAX_VERSION:
            raise VersionExhaustedError(memory.id)
        return memory.model_copy(update={**changed, "updated_at": now, "version": memory.version + 1})


def field_errors(exc: ValidationError) -> list[FieldError]:
    """Translate pydantic's errors into the contract's field names and wording, shared by both doors."""
    return [FieldError(field_name(err["loc"]), _message(err)) for err in exc.errors()]


def field_name(loc: tuple[int | str, ...]) -> str:
    """A location in a body as the contract names a field: `tags[1]`, `a.b`; the body itself is `body`."""
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "body"


def _message(err: Any) -> str:
    kind = err["type"]
    field = err["loc"][-1] if err["loc"] else ""
    if kind == "missing":
        return IS_REQUIRED
    if kind == "extra_forbidden":
        return "is read-only" if field in READ_ONLY_FIELDS else NOT_A_FIELD
    if kind == "string_type":
        return "must be a string"
    if kind == "list_type":
        return "must be a list of strings"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "must be a JSON object"
    if kind == "literal_error":
        return f"must be one of {err['ctx']['expected']}"
    if kind == "value_error":
        return str(err["ctx"]["error"])
    message: str = err["msg"]
    return message[:1].lower() + message[1:]
