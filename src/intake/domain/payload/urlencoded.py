"""Reading an application/x-www-form-urlencoded body."""

from __future__ import annotations

from urllib.parse import unquote_plus, unquote_to_bytes

from intake.domain.limits import PayloadLimits
from intake.domain.model import FieldData
from intake.domain.payload.budget import Budget, add_field, malformed, utf8_len
from intake.domain.payload.content import ContentType, ParsedBody, decode_text


def parse_urlencoded(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    text = decode_text(body, content_type.charset)
    charset = content_type.charset
    budget = Budget(limits)
    data: FieldData = {}
    for pair in text.split("&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.partition("=")
        # `_unquoted`'s first case, and `add_field`'s, without a call each: most names and
        # values hold no escape, and most names come once.
        name = raw_name.replace("+", " ") if "%" not in raw_name else _unquoted(raw_name, charset)
        value = (
            raw_value.replace("+", " ") if "%" not in raw_value else _unquoted(raw_value, charset)
        )
        budget.name(name)
        budget.text(utf8_len(value))
        if name in data:
            add_field(data, name, value)
        else:
            data[name] = value
    return ParsedBody(data=data)


def _unquoted(text: str, charset: str) -> str:
    # Without an escape, unquote_plus only turns each `+` into a space: most names and
    # many values hold none, and the call costs more than the replace.
    if "%" not in text:
        return text.replace("+", " ")
    try:
        if text.isascii():
            # What unquote_plus does with ASCII text, without the layers it goes through
            # to find the ASCII runs: the whole text is one.
            return unquote_to_bytes(text.replace("+", " ")).decode(charset)
        return unquote_plus(text, encoding=charset, errors="strict")
    except UnicodeError:
        raise malformed() from None
