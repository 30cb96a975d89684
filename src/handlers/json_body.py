"""A request body's JSON as both doors read it: each key of an object given once (JSON leaves duplicates undefined;
last-wins would act on what a client may not have meant), no NaN or Infinity, integers bounded in length."""

from __future__ import annotations

import functools
import json
from collections import Counter

from core.errors import FieldError, InvalidInputError
from core.limits import MAX_INTEGER_DIGITS
from core.model import field_name


def parse_json(body: bytes) -> object:
    """`body` parsed; ValueError (or RecursionError, nested past the parser) when it is not JSON, InvalidInputError
    naming by its path each key an object holds twice."""
    found: list[_RepeatedKeys] = []
    parsed = json.loads(
        body,
        parse_constant=_reject_constant,
        parse_int=_parse_int,
        object_pairs_hook=functools.partial(_json_object, found),
    )
    if found:
        raise InvalidInputError(_repeated_keys(parsed))
    return parsed


def parse_json_or_none(body: bytes) -> object:
    """`body` parsed, or None when it is not JSON (for a reader that leaves that error to another);
    InvalidInputError as parse_json."""
    try:
        return parse_json(body)
    except (ValueError, RecursionError):
        return None


class _RepeatedKeys(dict[str, object]):
    """A JSON object holding some keys more than once (`repeated`), marked so the error can name each by its path."""

    repeated: tuple[str, ...] = ()


def _json_object(found: list[_RepeatedKeys], pairs: list[tuple[str, object]]) -> dict[str, object]:
    parsed = dict(pairs)
    if len(parsed) == len(pairs):
        return parsed
    marked = _RepeatedKeys(parsed)
    marked.repeated = tuple(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
    found.append(marked)
    return marked


def _repeated_keys(body: object) -> list[FieldError]:
    """Each key given twice in an object of `body`, named by its path, in document order (a loop, not recursion:
    the body may nest as deep as the parser allowed)."""
    errors: list[FieldError] = []
    pending: list[tuple[tuple[int | str, ...], object]] = [((), body)]
    while pending:
        loc, value = pending.pop()
        if isinstance(value, dict):
            for key in value.repeated if isinstance(value, _RepeatedKeys) else ():
                errors.append(FieldError(field_name((*loc, key)), "is given more than once"))
            pending += [((*loc, key), item) for key, item in reversed(value.items())]
        elif isinstance(value, list):
            pending += [((*loc, index), item) for index, item in reversed(list(enumerate(value)))]
    return errors


def _parse_int(text: str) -> object:
    # A number too long to parse as an integer: let validation name the field it was given for.
    return int(text) if len(text) <= MAX_INTEGER_DIGITS else float(text)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")
