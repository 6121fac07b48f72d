"""The file format of a local blob: a fixed-size header holding its metadata, then the
content (see `intake.adapters.blobs.local`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from intake.ports.blobs import BlobInfo

HEADER_SIZE = 1024
MAGIC = b"intake-blob 1\n"


class NotABlob(Exception):  # noqa: N818 - internal signal
    """A file under the root that this store did not write (or a damaged one)."""


def encode_header(info: BlobInfo) -> bytes:
    meta = json.dumps(
        {
            "size": info.size,
            "sha256": info.sha256,
            "content_type": info.content_type,
            "created_at": info.created_at.isoformat(),
        },
        separators=(",", ":"),
    ).encode("ascii")
    header = MAGIC + meta
    # The content type is at most 255 characters, so the metadata always fits.
    return header + b" " * (HEADER_SIZE - len(header) - 1) + b"\n"


def decode_header(key: str, header: bytes, file_size: int) -> BlobInfo:
    if len(header) != HEADER_SIZE or not header.startswith(MAGIC):
        raise NotABlob(key)
    try:
        meta: Any = json.loads(header[len(MAGIC) :])
        info = BlobInfo(
            key=key,
            size=int(meta["size"]),
            sha256=str(meta["sha256"]),
            content_type=str(meta["content_type"]),
            created_at=datetime.fromisoformat(meta["created_at"]).astimezone(UTC),
        )
    except (ValueError, KeyError, TypeError):
        raise NotABlob(key) from None
    if file_size != HEADER_SIZE + info.size:
        raise NotABlob(key)  # truncated or appended to
    return info
