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
from intake.domain.uploads import UploadPolicy
from intake.service.messages import RawBody
from intake.service.uploads import UploadSink


def _multipart_ceiling(limits: PayloadLimits, uploads: UploadPolicy | None) -> int:
    if uploads is None:
        return limits.max_multipart_body
    return limits.upload_body_ceiling(uploads.max_total_size)


def check_declared(
    body: RawBody, limits: PayloadLimits, uploads: UploadPolicy | None = None
) -> ContentType:
    """Step 5 before any byte is read: the type, and a declared length over the limit."""
    content_type = parse_content_type(body.content_type)
    multipart = content_type.kind is ContentKind.MULTIPART
    ceiling = _multipart_ceiling(limits, uploads) if multipart else limits.max_body
    if body.content_length is not None and body.content_length > ceiling:
        raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
    return content_type


async def read_body(
    body: RawBody,
    content_type: ContentType,
    limits: PayloadLimits,
    *,
    uploads: UploadPolicy | None = None,
    sink: UploadSink | None = None,
) -> ParsedBody:
    """Reads no more than the limit + 1 bytes, whatever the sender declared. With an
    upload policy, each file part goes to `sink` as it arrives."""
    if content_type.kind is ContentKind.MULTIPART:
        reader = MultipartReader(content_type, limits, uploads if sink is not None else None)
        ceiling = _multipart_ceiling(limits, uploads)
        received = 0
        async for chunk in body.chunks:
            received += len(chunk)
            if received > ceiling:
                raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
            reader.feed(chunk)
            if sink is not None:
                await sink.take(reader.take_file_events())
        parsed = reader.finish()
        if sink is not None:
            await sink.take(reader.take_file_events())
        return parsed
    buffer = bytearray()
    async for chunk in body.chunks:
        buffer += chunk
        if len(buffer) > limits.max_body:
            raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE)
    return parse_complete(bytes(buffer), content_type, limits)
