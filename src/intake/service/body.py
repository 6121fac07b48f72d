"""Steps 5 and 6: the content type, the size limits and the parse of a streamed body."""

from __future__ import annotations

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.payload import (
    ContentKind,
    ContentType,
    MultipartReader,
    ParsedBody,
    parse_complete,
    parse_content_type,
)
from intake.service.messages import RawBody


def check_declared(body: RawBody, limits: PayloadLimits) -> ContentType:
    """Step 5 before any byte is read: the type, and a declared length over the limit."""
    content_type = parse_content_type(body.content_type)
    ceiling = limits.declared_length_ceiling(content_type.kind is ContentKind.MULTIPART)
    if body.content_length is not None and body.content_length > ceiling:
        raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
    return content_type


async def read_body(body: RawBody, content_type: ContentType, limits: PayloadLimits) -> ParsedBody:
    """Reads no more than the limit + 1 bytes, whatever the sender declared."""
    if content_type.kind is ContentKind.MULTIPART:
        reader = MultipartReader(content_type, limits)
        received = 0
        async for chunk in body.chunks:
            received += len(chunk)
            if received > limits.max_multipart_body:
                raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
            reader.feed(chunk)
        return reader.finish()
    buffer = bytearray()
    async for chunk in body.chunks:
        buffer += chunk
        if len(buffer) > limits.max_body:
            raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
    return parse_complete(bytes(buffer), content_type, limits)
