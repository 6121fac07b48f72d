"""Reading a submission body into named fields: the three content types and their limits.

Pure: the caller feeds bytes in. Every refusal is an `IntakeError` with the spec's code.
"""

from __future__ import annotations

from intake.domain.limits import PayloadLimits
from intake.domain.payload.content import ContentKind, ContentType, ParsedBody, parse_content_type
from intake.domain.payload.json_body import check_fields, parse_json
from intake.domain.payload.multipart import FileEnd, FileEvent, FileStart, MultipartReader
from intake.domain.payload.urlencoded import parse_urlencoded

__all__ = [
    "ContentKind",
    "ContentType",
    "FileEnd",
    "FileEvent",
    "FileStart",
    "MultipartReader",
    "ParsedBody",
    "check_fields",
    "parse_complete",
    "parse_content_type",
    "parse_json",
    "parse_urlencoded",
]


def parse_complete(body: bytes, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    """Parses a body that is already read whole (the size limit checked by the reader)."""
    if content_type.kind is ContentKind.URLENCODED:
        return parse_urlencoded(body, content_type, limits)
    if content_type.kind is ContentKind.JSON:
        return parse_json(body, content_type, limits)
    reader = MultipartReader(content_type, limits)
    reader.feed(body)
    return reader.finish()
