"""Reading a management request's input: typed readers over a JSON body and the query
string that collect what is wrong and refuse once, 422 validation_failed naming every bad
field or parameter."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any, TypeVar

from starlette.requests import Request

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.listing import DEFAULT_PAGE, MAX_PAGE, MIN_PAGE

MAX_CURSOR = 200

_N = TypeVar("_N", int, float)


def _refuse(fields: Mapping[str, str]) -> IntakeError:
    return IntakeError.of(ErrorCode.VALIDATION_FAILED, fields=dict(fields))


UNKNOWN_FIELD = "Unknown field."
UNSTORABLE = "Text cannot hold NUL characters or lone surrogates."


class BodyFields:
    """Typed reads of a JSON object's fields. Each reader gives None for a field that is
    absent (or null, where `nullable`), records what is wrong with a field that is there,
    and `done()` raises one 422 naming every bad field: the unknown ones (when `allowed`
    names the known), those holding text no store keeps, and those the readers found
    wrong, all in one answer. An unknown or unstorable field reads as absent."""

    def __init__(self, body: Mapping[str, Any], allowed: Collection[str] | None = None) -> None:
        self._errors: dict[str, str] = {}
        for name, value in body.items():
            if allowed is not None and name not in allowed:
                self._errors[name] = UNKNOWN_FIELD
            elif not storable(value):
                self._errors[name] = UNSTORABLE
        self._body = {name: value for name, value in body.items() if name not in self._errors}

    def has(self, name: str) -> bool:
        return name in self._body

    def fail(self, name: str, message: str) -> None:
        self._errors.setdefault(name, message)

    def done(self) -> None:
        if self._errors:
            raise _refuse(self._errors)

    def _value(self, name: str, required: bool, nullable: bool) -> Any:
        if name not in self._body:
            if required:
                self.fail(name, "Required.")
            return None
        value = self._body[name]
        if value is None and not nullable:
            self.fail(name, "Must not be null.")
        return value

    def text(
        self,
        name: str,
        *,
        required: bool = False,
        nullable: bool = False,
        max_length: int | None = None,
    ) -> str | None:
        value = self._value(name, required, nullable)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(name, "Must be a string.")
            return None
        if max_length is not None and len(value) > max_length:
            self.fail(name, f"At most {max_length} characters.")
            return None
        return value

    def boolean(self, name: str, *, required: bool = False) -> bool | None:
        value = self._value(name, required, nullable=False)
        if value is None:
            return None
        if not isinstance(value, bool):
            self.fail(name, "Must be true or false.")
            return None
        return value

    def integer(
        self,
        name: str,
        *,
        required: bool = False,
        nullable: bool = False,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        value = self._value(name, required, nullable)
        if value is None:
            return None
        # JSON's true is no number, though Python's bool is an int.
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(name, "Must be a whole number.")
            return None
        return self._in_range(name, value, minimum, maximum)

    def number(
        self,
        name: str,
        *,
        required: bool = False,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> float | None:
        value = self._value(name, required, nullable=False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(name, "Must be a number.")
            return None
        if not math.isfinite(value):
            self.fail(name, "Must be a finite number.")
            return None
        return self._in_range(name, float(value), minimum, maximum)

    def _in_range(self, name: str, value: _N, minimum: _N | None, maximum: _N | None) -> _N | None:
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(name, f"Must be between {minimum} and {maximum}.")
            return None
        return value

    def text_list(
        self, name: str, *, required: bool = False, max_items: int | None = None
    ) -> list[str] | None:
        value = self._value(name, required, nullable=False)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.fail(name, "Must be a list of strings.")
            return None
        if max_items is not None and len(value) > max_items:
            self.fail(name, f"At most {max_items} items.")
            return None
        return value

    def object_list(self, name: str, *, required: bool = False) -> list[dict[str, Any]] | None:
        value = self._value(name, required, nullable=False)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            self.fail(name, "Must be a list of objects.")
            return None
        return value

    def object(
        self, name: str, *, required: bool = False, nullable: bool = False
    ) -> dict[str, Any] | None:
        value = self._value(name, required, nullable)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.fail(name, "Must be an object.")
            return None
        return value


def storable(value: object) -> bool:
    """Text a database keeps as it is given: no NUL (PostgreSQL text cannot hold one) and
    no lone surrogate (only a JSON escape such as \\ud800 makes one), at any depth."""
    if isinstance(value, str):
        return "\x00" not in value and (value.isascii() or _encodes(value))
    if isinstance(value, list):
        return all(storable(item) for item in value)
    if isinstance(value, dict):
        return all(storable(key) and storable(item) for key, item in value.items())
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _single(request: Request, name: str) -> str | None:
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise _refuse({name: "Give it once."})
    return values[0] if values else None


def page_limit(request: Request) -> int:
    """`limit`: 1 to 200, 50 when not given."""
    text = _single(request, "limit")
    if text is None:
        return DEFAULT_PAGE
    if not text.isascii() or not text.isdigit() or not MIN_PAGE <= int(text) <= MAX_PAGE:
        raise _refuse({"limit": f"A whole number from {MIN_PAGE} to {MAX_PAGE}."})
    return int(text)


def page_cursor(request: Request) -> str | None:
    """`cursor`: a listing's own, opaque; what it gives is far shorter than the 200
    characters taken, so a longer one is refused here as no cursor of it."""
    return query_text(request, "cursor", max_length=MAX_CURSOR)


def query_time(request: Request, name: str) -> datetime | None:
    """An RFC 3339 time with its offset (`Z` or `+hh:mm`), as an aware datetime."""
    text = _single(request, name)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    # fromisoformat also takes dates alone and week dates; RFC 3339 has a 'T' (or a
    # space) between the date and a time, and an offset.
    if moment is None or moment.tzinfo is None or len(text) < 20 or text[10] not in "Tt ":
        raise _refuse({name: "An RFC 3339 time with its offset, e.g. 2026-01-31T12:00:00Z."})
    return moment


def query_choices(request: Request, name: str, allowed: Collection[str]) -> list[str]:
    """A repeatable parameter whose values are each one of `allowed`, in the order given,
    once each."""
    values = request.query_params.getlist(name)
    wrong = [value for value in values if value not in allowed]
    if wrong:
        raise _refuse({name: f"One of {', '.join(sorted(allowed))}."})
    return list(dict.fromkeys(values))


def query_text(request: Request, name: str, *, max_length: int) -> str | None:
    """A text parameter given at most once, 1 to `max_length` characters."""
    text = _single(request, name)
    if text is None:
        return None
    if not 1 <= len(text) <= max_length:
        raise _refuse({name: f"1 to {max_length} characters."})
    if not storable(text):
        raise _refuse({name: UNSTORABLE})
    return text
