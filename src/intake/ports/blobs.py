"""The blob store: where uploaded files are streamed to, and read back from.

A caller chooses each blob's key (`sub_…/0`, `incoming/<token>`). A writer streams the
content in, hashing and counting as it goes, and nothing is visible under the key until
`commit()` returns; from then on the blob is durable. `abort()`, or leaving the writer's
`async with` block without a commit, leaves nothing behind.

Unfinished writes (a process that died mid-upload) are kept under the reserved prefix
`.incoming/`, which no caller's key can use; `list(older_than=...)` reports those older
than the cut-off so that a sweep can delete them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from attrs import frozen

from intake.domain.errors import StorageUnavailable

MAX_KEY_LENGTH = 512
MAX_SEGMENT_LENGTH = 255  # a file name's limit on the usual file systems
MAX_CONTENT_TYPE_LENGTH = 255
DEFAULT_CHUNK_SIZE = 65536

# Unfinished writes are listed under this prefix; a caller's key cannot start with a dot.
INCOMING_PREFIX = ".incoming/"

_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9._-]*"
_KEY = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
_PREFIX = re.compile(r"[A-Za-z0-9._/-]*")
_CONTENT_TYPE = re.compile(r"[\x21-\x7e][\x20-\x7e]*")


@frozen
class BlobInfo:
    key: str
    size: int
    # Hex SHA-256 of the content; empty for an unfinished write listed by a sweep.
    sha256: str
    # Empty for an unfinished write listed by a sweep.
    content_type: str
    created_at: datetime  # UTC

    @property
    def incoming(self) -> bool:
        """An unfinished write's leftovers, not a blob: only `delete` applies to it."""
        return self.key.startswith(INCOMING_PREFIX)


class BlobStoreError(Exception):
    """Base of the blob store's errors."""


class InvalidBlobKey(BlobStoreError, ValueError):  # noqa: N818 - a refused argument
    """A key outside the rules (see `validate_key`), or one that would be both a blob
    and a folder of other blobs (`a` and `a/b`), which a file system cannot hold."""


class BlobNotFound(BlobStoreError, LookupError):  # noqa: N818 - a condition
    def __init__(self, key: str) -> None:
        super().__init__(f"no blob at {key!r}")
        self.key = key


class BlobTooLarge(BlobStoreError):  # noqa: N818 - a condition the caller answers with 413
    def __init__(self, max_size: int) -> None:
        super().__init__(f"the blob would exceed {max_size} bytes")
        self.max_size = max_size


class BlobStoreUnavailable(BlobStoreError, StorageUnavailable):  # noqa: N818 - a condition
    """Transient: the store cannot be reached or cannot take the write now (connection,
    timeout, server error, disk full). Being a StorageUnavailable, the service answers it
    with 503 service_unavailable."""


class BlobWriter(Protocol):
    """One blob being written. Also an async context manager: leaving the block without
    a commit (an exception, a cancellation, a forgotten commit) aborts."""

    @property
    def key(self) -> str: ...

    @property
    def size(self) -> int:
        """Bytes accepted so far."""
        ...

    async def write(self, chunk: bytes) -> None:
        """Streams a chunk in. Raises BlobTooLarge, before taking any of it, when the
        chunk would carry the blob past the writer's `max_size`; the writer then only
        accepts `abort()`."""
        ...

    async def commit(self) -> BlobInfo:
        """Publishes the blob under its key, replacing any blob there; durable once it
        returns."""
        ...

    async def abort(self) -> None:
        """Discards everything written. Idempotent, safe after a failed write or commit;
        after a successful commit it does nothing."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class BlobStore(Protocol):
    async def writer(self, key: str, *, content_type: str, max_size: int) -> BlobWriter:
        """Starts a write; raises InvalidBlobKey for a key outside the rules."""
        ...

    def read(
        self, key: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE
    ) -> AsyncGenerator[bytes, None]:
        """The content in chunks of at most `chunk_size` bytes. Raises BlobNotFound (on
        the first iteration) when there is no blob at `key`. A generator, so that a
        reader who stops early closes it (`contextlib.aclosing`) and frees the open file
        or connection at once."""
        ...

    async def stat(self, key: str) -> BlobInfo | None: ...

    async def delete(self, key: str) -> None:
        """Idempotent. Also takes an `.incoming/` key that a sweep listed."""
        ...

    def list(
        self, prefix: str = "", *, older_than: datetime | None = None
    ) -> AsyncGenerator[BlobInfo, None]:
        """The blobs whose key starts with `prefix`, in no particular order; with
        `older_than`, only those created before it, and also the unfinished writes
        begun (S3) or last written to (local, memory) before it, as `.incoming/` keys
        with an empty hash and content type."""
        ...

    async def ping(self) -> None:
        """Raises BlobStoreUnavailable when the store cannot take writes."""
        ...

    async def aclose(self) -> None: ...


def validate_key(key: str) -> str:
    """Returns `key` when it is a caller's key: 1 to 512 characters `A-Z a-z 0-9 . _ - /`,
    segments split by single slashes, none empty, longer than 255 characters or starting
    with a dot (so no `..`, no hidden names, and nothing under the store's own
    `.incoming/`)."""
    if (
        not key
        or len(key) > MAX_KEY_LENGTH
        or not _KEY.fullmatch(key)
        or any(len(segment) > MAX_SEGMENT_LENGTH for segment in key.split("/"))
    ):
        raise InvalidBlobKey(f"not a valid blob key: {key[:MAX_KEY_LENGTH]!r}")
    return key


def validate_prefix(prefix: str) -> str:
    """Returns `prefix` when some key (or `.incoming/` entry) could start with it."""
    if (
        len(prefix) > MAX_KEY_LENGTH
        or not _PREFIX.fullmatch(prefix)
        or prefix.startswith("/")
        or "//" in prefix
        or ".." in prefix.split("/")
    ):
        raise InvalidBlobKey(f"not a valid blob key prefix: {prefix[:MAX_KEY_LENGTH]!r}")
    return prefix


def validate_incoming_key(key: str) -> str:
    """Returns `key` when it names an unfinished write (`.incoming/<one segment>`)."""
    name = key.removeprefix(INCOMING_PREFIX)
    if name == key or "/" in name or not _KEY.fullmatch(name):
        raise InvalidBlobKey(f"not a valid blob key: {key[:MAX_KEY_LENGTH]!r}")
    return key


def validate_deletable_key(key: str) -> str:
    """A caller's key, or an unfinished write's `.incoming/` key."""
    if key.startswith(INCOMING_PREFIX):
        return validate_incoming_key(key)
    return validate_key(key)


def validate_content_type(content_type: str) -> str:
    """Printable ASCII, 1 to 255 characters: it goes into a file header and S3 metadata."""
    if len(content_type) > MAX_CONTENT_TYPE_LENGTH or not _CONTENT_TYPE.fullmatch(content_type):
        raise ValueError(f"not a valid content type: {content_type[:MAX_CONTENT_TYPE_LENGTH]!r}")
    return content_type


def validate_max_size(max_size: int) -> int:
    if max_size < 0:
        raise ValueError(f"max_size must not be negative: {max_size}")
    return max_size


def conflicting_keys(key: str, existing: str) -> bool:
    """Whether one of the two keys is a folder of the other (`a` and `a/b`)."""
    return existing.startswith(key + "/") or key.startswith(existing + "/")
