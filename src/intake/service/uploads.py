"""Streams a request's file parts into the blob store as the body arrives.

Each file is held only for its first SNIFF_BYTES, which tell its type; a type the form
allows is then written through to the store chunk by chunk and published when its part
ends, under `<submission_id>/<index>`. A type it does not allow is dropped, and noted
as that field's validation error. Until the submission commits, the sink can take back
everything it published (`discard`).

Only a file to keep needs the store: without one (a form set to take files where none
is configured), a body without a file part is read as any other, and the first file of
a type the form takes is a storage outage (503).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from attrs import define, field

from intake.domain.errors import ErrorCode, IntakeError, StorageUnavailable
from intake.domain.payload import FileEnd, FileEvent, FileStart
from intake.domain.sniffing import SNIFF_BYTES, sniff
from intake.domain.uploads import TYPE_NOT_ACCEPTED, StoredFile, UploadPolicy, file_key
from intake.ports.blobs import BlobStore, BlobStoreError, BlobTooLarge, BlobWriter

log = logging.getLogger("intake.uploads")


@define
class _Incoming:
    start: FileStart
    head: bytearray = field(factory=bytearray)
    writer: BlobWriter | None = None
    content_type: str = ""
    refused: bool = False


class UploadSink:
    def __init__(self, blobs: BlobStore | None, policy: UploadPolicy, submission_id: str) -> None:
        self._blobs = blobs
        self._policy = policy
        self._submission_id = submission_id
        self._files: list[StoredFile] = []
        self._refused: dict[str, str] = {}
        self._current: _Incoming | None = None

    @property
    def submission_id(self) -> str:
        return self._submission_id

    @property
    def files(self) -> tuple[StoredFile, ...]:
        return tuple(self._files)

    @property
    def refused(self) -> dict[str, str]:
        """Fields whose file is of a type the form does not take, with the message."""
        return dict(self._refused)

    async def take(self, events: Iterable[FileEvent]) -> None:
        for event in events:
            if isinstance(event, FileStart):
                self._current = _Incoming(event)
            elif isinstance(event, FileEnd):
                await self._end()
            else:
                await self._data(event)

    async def _data(self, chunk: bytes) -> None:
        incoming = self._current
        assert incoming is not None, "file bytes outside a file part"
        if incoming.refused:
            return
        if incoming.writer is None:
            incoming.head += chunk
            if len(incoming.head) >= SNIFF_BYTES:
                await self._open(incoming, complete=False)
            return
        await self._write(incoming.writer, chunk)

    async def _open(self, incoming: _Incoming, *, complete: bool) -> None:
        """Tells the type from the head and, when the form takes it, starts the write."""
        head = bytes(incoming.head)
        incoming.head = bytearray()
        content_type = sniff(head[:SNIFF_BYTES], incoming.start.declared_type, complete=complete)
        if not self._policy.allows(content_type):
            incoming.refused = True
            self._refused.setdefault(incoming.start.field, TYPE_NOT_ACCEPTED)
            return
        if self._blobs is None:
            log.error("a file arrived for a form that takes files, but no blob store is configured")
            raise StorageUnavailable("no blob store for uploads")
        incoming.content_type = content_type
        incoming.writer = await self._blobs.writer(
            file_key(self._submission_id, len(self._files)),
            content_type=content_type,
            max_size=self._policy.max_file_size,
        )
        await self._write(incoming.writer, head)

    async def _write(self, writer: BlobWriter, chunk: bytes) -> None:
        try:
            await writer.write(chunk)
        except BlobTooLarge:
            # The reader counts against the same limit first; this is the store's guard.
            raise IntakeError.of(ErrorCode.PAYLOAD_TOO_LARGE) from None

    async def _end(self) -> None:
        incoming = self._current
        assert incoming is not None, "a file part ended that never began"
        self._current = None
        if incoming.writer is None and not incoming.refused:
            await self._open(incoming, complete=True)
        if incoming.writer is None:
            return
        info = await incoming.writer.commit()
        self._files.append(
            StoredFile(
                field=incoming.start.field,
                name=incoming.start.filename,
                size=info.size,
                content_type=incoming.content_type,
                sha256=info.sha256,
                key=info.key,
            )
        )

    async def discard(self) -> None:
        """Takes back every file written for a request that was not stored. Best effort:
        what cannot be deleted now is an orphan that `intake purge` sweeps."""
        incoming, self._current = self._current, None
        if incoming is not None and incoming.writer is not None:
            try:
                await incoming.writer.abort()
            except (BlobStoreError, OSError):
                log.warning("could not abort an unfinished upload; the sweep will remove it")
        files, self._files = self._files, []
        if self._blobs is None:
            return  # nothing was written
        for stored in files:
            try:
                await self._blobs.delete(stored.key)
            except (BlobStoreError, OSError):
                log.warning(
                    "could not delete an upload of a refused request; the sweep will "
                    "remove it (submission %s)",
                    self._submission_id,
                )
