"""An in-memory blob store for tests and library users, held by the contract suite to the
behaviour of the real stores. `unavailable = True` makes every operation fail as a store
that cannot be reached would."""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator
from datetime import datetime

from anyio.lowlevel import checkpoint

from intake.adapters.blobs.common import WriterBase
from intake.adapters.system import SystemClock
from intake.ports.blobs import (
    DEFAULT_CHUNK_SIZE,
    INCOMING_PREFIX,
    BlobInfo,
    BlobNotFound,
    BlobStoreUnavailable,
    InvalidBlobKey,
    conflicting_keys,
    validate_content_type,
    validate_deletable_key,
    validate_key,
    validate_max_size,
    validate_prefix,
)
from intake.ports.clock import Clock


class _Incoming:
    def __init__(self, touched_at: datetime) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.touched_at = touched_at


class InMemoryBlobWriter(WriterBase):
    def __init__(
        self, store: InMemoryBlobStore, key: str, *, content_type: str, max_size: int
    ) -> None:
        super().__init__(key, content_type=content_type, max_size=max_size, clock=store.clock)
        self._store = store
        self._token = secrets.token_hex(16)
        store.incoming[self._token] = _Incoming(store.clock.now())

    async def _accept(self, chunk: bytes) -> None:
        await self._store.checkpoint()
        incoming = self._current()
        incoming.chunks.append(bytes(chunk))
        incoming.size += len(chunk)
        incoming.touched_at = self._store.clock.now()

    async def _publish(self, info: BlobInfo) -> None:
        await self._store.checkpoint()
        incoming = self._current()
        self._store.check_no_conflict(info.key)
        self._store.blobs[info.key] = (info, b"".join(incoming.chunks))
        del self._store.incoming[self._token]

    async def _discard(self) -> None:
        await checkpoint()
        self._store.incoming.pop(self._token, None)

    def _current(self) -> _Incoming:
        incoming = self._store.incoming.get(self._token)
        if incoming is None:
            raise BlobStoreUnavailable(f"the unfinished write of {self.key!r} was swept away")
        return incoming


class InMemoryBlobStore:
    def __init__(self, *, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.blobs: dict[str, tuple[BlobInfo, bytes]] = {}
        self.incoming: dict[str, _Incoming] = {}  # by token: writes not committed or aborted
        self.unavailable = False

    async def checkpoint(self) -> None:
        await checkpoint()
        if self.unavailable:
            raise BlobStoreUnavailable("the in-memory blob store is switched to unavailable")

    def check_no_conflict(self, key: str) -> None:
        for existing in self.blobs:
            if conflicting_keys(key, existing):
                raise InvalidBlobKey(f"{key!r} and the blob {existing!r} cannot both exist")

    async def writer(self, key: str, *, content_type: str, max_size: int) -> InMemoryBlobWriter:
        validate_key(key)
        validate_content_type(content_type)
        validate_max_size(max_size)
        await self.checkpoint()
        self.check_no_conflict(key)
        return InMemoryBlobWriter(self, key, content_type=content_type, max_size=max_size)

    async def read(
        self, key: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE
    ) -> AsyncGenerator[bytes, None]:
        validate_key(key)
        await self.checkpoint()
        found = self.blobs.get(key)
        if found is None:
            raise BlobNotFound(key)
        content = memoryview(found[1])
        for start in range(0, len(content), chunk_size):
            yield bytes(content[start : start + chunk_size])
            await self.checkpoint()

    async def stat(self, key: str) -> BlobInfo | None:
        validate_key(key)
        await self.checkpoint()
        found = self.blobs.get(key)
        return None if found is None else found[0]

    async def delete(self, key: str) -> None:
        validate_deletable_key(key)
        await self.checkpoint()
        if key.startswith(INCOMING_PREFIX):
            self.incoming.pop(key.removeprefix(INCOMING_PREFIX), None)
        else:
            self.blobs.pop(key, None)

    async def list(
        self, prefix: str = "", *, older_than: datetime | None = None
    ) -> AsyncGenerator[BlobInfo, None]:
        validate_prefix(prefix)
        await self.checkpoint()
        infos = [info for info, _ in self.blobs.values() if info.key.startswith(prefix)]
        if older_than is not None:
            infos = [info for info in infos if info.created_at < older_than]
            infos.extend(
                BlobInfo(
                    key=INCOMING_PREFIX + token,
                    size=incoming.size,
                    sha256="",
                    content_type="",
                    created_at=incoming.touched_at,
                )
                for token, incoming in list(self.incoming.items())
                if incoming.touched_at < older_than and (INCOMING_PREFIX + token).startswith(prefix)
            )
        for info in infos:
            yield info

    async def ping(self) -> None:
        await self.checkpoint()

    async def aclose(self) -> None:
        await checkpoint()
