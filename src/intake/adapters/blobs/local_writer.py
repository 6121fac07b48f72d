"""Streaming one blob into the local store's incoming folder, then sealing and publishing it."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from intake.adapters.blobs.common import WriterBase
from intake.adapters.blobs.local_files import write_all
from intake.adapters.blobs.local_format import encode_header
from intake.ports.blobs import BlobInfo, BlobStoreError

if TYPE_CHECKING:
    from intake.adapters.blobs.local import LocalBlobStore

# Small chunks are gathered and written in batches of this size, to spare thread hops.
WRITE_BATCH = 1024 * 1024


class LocalBlobWriter(WriterBase):
    def __init__(
        self,
        store: LocalBlobStore,
        fd: int,
        incoming: Path,
        key: str,
        *,
        content_type: str,
        max_size: int,
    ) -> None:
        super().__init__(key, content_type=content_type, max_size=max_size, clock=store.clock)
        self._store = store
        self._fd: int | None = fd
        self._incoming = incoming
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        """Bytes held in memory, not yet handed to the file."""
        return len(self._buffer)

    async def _accept(self, chunk: bytes) -> None:
        self._buffer += chunk
        if len(self._buffer) >= WRITE_BATCH:
            await self._flush()

    async def _flush(self) -> None:
        batch, self._buffer = self._buffer, bytearray()
        await self._store.run(write_all, self._open_fd(), batch)

    async def _publish(self, info: BlobInfo) -> None:
        await self._flush()
        await self._store.run(self._seal, encode_header(info))
        await self._store.run(self._store.publish, self._incoming, info.key)

    def _seal(self, header: bytes) -> None:
        fd = self._open_fd()
        os.pwrite(fd, header, 0)
        os.fsync(fd)
        self._fd = None
        os.close(fd)

    async def _discard(self) -> None:
        self._buffer = bytearray()
        await self._store.run(self._remove)

    def _remove(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
        with suppress(FileNotFoundError):
            os.unlink(self._incoming)

    def _open_fd(self) -> int:
        if self._fd is None:
            raise BlobStoreError(f"the writer for {self.key!r} is closed")
        return self._fd
