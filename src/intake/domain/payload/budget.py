"""The limits on fields and text, counted as a body is read."""

from __future__ import annotations

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData, FieldValue


def too_large() -> IntakeError:
    return IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)


def malformed() -> IntakeError:
    return IntakeError.of(ErrorCode.MALFORMED_REQUEST)


class Budget:
    """Counts fields and text against the limits as they are read."""

    __slots__ = ("fields", "limits", "total")

    def __init__(self, limits: PayloadLimits) -> None:
        self.limits = limits
        self.fields = 0
        self.total = 0

    def name(self, name: str) -> None:
        self.fields += 1
        if self.fields > self.limits.max_fields:
            raise too_large()
        if utf8_len(name) > self.limits.max_name:
            raise too_large()

    def text(self, size: int) -> None:
        if size > self.limits.max_value:
            raise too_large()
        self.total += size
        if self.total > self.limits.max_total:
            raise too_large()


def utf8_len(value: str) -> int:
    """The UTF-8 size of a name or value, refusing what no form field holds: NUL, which
    PostgreSQL cannot store either, and lone surrogates."""
    if "\x00" in value:
        raise malformed()
    # ASCII is the common case; len() is exact there and far cheaper than encoding.
    if value.isascii():
        return len(value)
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # A lone surrogate, which only a JSON `\ud800` escape can produce: not text.
        raise malformed() from None


def add_field(data: FieldData, name: str, value: FieldValue) -> None:
    """A repeated name keeps every value, in order."""
    if name not in data:
        data[name] = value
        return
    existing = data[name]
    if isinstance(existing, list):
        existing.append(value)
    else:
        data[name] = [existing, value]
