"""What every blob writer shares: the size limit, the hash, and the life cycle
open → committed | aborted, with abort on leaving an `async with` block uncommitted."""

from __future__ import annotations

import enum
import hashlib
from datetime import UTC
from types import TracebackType
from typing import Self

import anyio

from intake.ports.blobs import BlobInfo, BlobStoreError, BlobTooLarge
from intake.ports.clock import Clock


class _State(enum.Enum):
    OPEN = "open"
    FAILED = "failed"  # a write or commit failed: only abort() is left
    COMMITTED = "committed"
    ABORTED = "aborted"


class WriterBase:
    """Subclasses store the bytes: `_accept` takes each chunk, `_publish` makes the blob
    visible and durable, `_discard` removes whatever was stored."""

    def __init__(self, key: str, *, content_type: str, max_size: int, clock: Clock) -> None:
        self._key = key
        self._content_type = content_type
        self._max_size = max_size
        self._clock = clock
        self._size = 0
        self._hash = hashlib.sha256()
        self._state = _State.OPEN

    @property
    def key(self) -> str:
        return self._key

    @property
    def size(self) -> int:
        return self._size

    async def write(self, chunk: bytes) -> None:
        self._check_open()
        if not chunk:
            return
        if self._size + len(chunk) > self._max_size:
            self._state = _State.FAILED
            raise BlobTooLarge(self._max_size)
        self._state = _State.FAILED  # until the chunk is taken
        self._hash.update(chunk)
        self._size += len(chunk)
        await self._accept(chunk)
        self._state = _State.OPEN

    async def commit(self) -> BlobInfo:
        self._check_open()
        self._state = _State.FAILED  # until published
        info = BlobInfo(
            key=self._key,
            size=self._size,
            sha256=self._hash.hexdigest(),
            content_type=self._content_type,
            created_at=self._clock.now().astimezone(UTC),
        )
        await self._publish(info)
        self._state = _State.COMMITTED
        return info

    async def abort(self) -> None:
        if self._state in (_State.COMMITTED, _State.ABORTED):
            return
        self._state = _State.ABORTED
        # Shielded: an abort that a cancellation interrupted would leave the bytes behind.
        with anyio.CancelScope(shield=True):
            await self._discard()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.abort()

    def _check_open(self) -> None:
        if self._state is not _State.OPEN:
            raise BlobStoreError(f"the writer for {self._key!r} is {self._state.value}")

    async def _accept(self, chunk: bytes) -> None:
        raise NotImplementedError

    async def _publish(self, info: BlobInfo) -> None:
        raise NotImplementedError

    async def _discard(self) -> None:
        raise NotImplementedError
