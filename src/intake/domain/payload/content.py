"""What a body is: its content type, and the fields read from it."""

from __future__ import annotations

import codecs
import enum

from attrs import frozen
from python_multipart.multipart import parse_options_header

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.model import FieldData
from intake.domain.payload.budget import malformed


class ContentKind(enum.Enum):
    URLENCODED = "application/x-www-form-urlencoded"
    MULTIPART = "multipart/form-data"
    JSON = "application/json"


@frozen
class ContentType:
    kind: ContentKind
    charset: str
    boundary: bytes | None = None


@frozen
class ParsedBody:
    """Fields in wire order, before the control-field split. `file_fields`: the fields
    that carried a file to a form that takes none."""

    data: FieldData
    file_fields: tuple[str, ...] = ()


# The types already read, by their header: a client sends the same one every time. A
# multipart type's boundary differs from one request to the next: those are not kept.
_KNOWN_TYPES: dict[str, ContentType] = {}
_KNOWN_TYPES_MAX = 64


def parse_content_type(header: str | None) -> ContentType:
    if not header:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    known = _KNOWN_TYPES.get(header)
    if known is not None:
        return known
    content_type = _parse_content_type(header)
    if content_type.kind is not ContentKind.MULTIPART:
        if len(_KNOWN_TYPES) >= _KNOWN_TYPES_MAX:
            _KNOWN_TYPES.clear()
        _KNOWN_TYPES[header] = content_type
    return content_type


def _parse_content_type(header: str) -> ContentType:
    try:
        mime, options = parse_options_header(header)
    except UnicodeEncodeError:
        # Starlette hands headers over as latin-1 text; anything else cannot be a type.
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    try:
        kind = ContentKind(mime.decode("latin-1").strip().lower())
    except ValueError:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    raw_charset = options.get(b"charset", b"utf-8").decode("latin-1") or "utf-8"
    try:
        codec = codecs.lookup(raw_charset)
    except (LookupError, ValueError):
        # A charset intake cannot read is a content type it does not support (step 5);
        # a name holding NUL is a ValueError, not a LookupError.
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE) from None
    # `base64` and `rot13` are codecs but not text encodings; `bytes.decode` refuses them
    # by this same flag, so it is checked here, before any callback meets it.
    if not codec._is_text_encoding:
        raise IntakeError.of(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    # A multipart type without a boundary is a body that cannot be read: the reader
    # refuses it when parsing starts (step 6).
    return ContentType(kind=kind, charset=codec.name, boundary=options.get(b"boundary"))


def decode_text(raw: bytes, charset: str) -> str:
    try:
        return raw.decode(charset)
    except (UnicodeError, LookupError):
        raise malformed() from None
