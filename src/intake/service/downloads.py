"""Downloads: an uploaded file, found by its signed link and read from the blob store.

The signature is checked before anything is looked up, so a link that is missing,
forged, made for another file or expired tells nothing about what it names. Then the
submission and its file, then the blob. Finding and opening are two steps so that the
caller knows which form a link belongs to before the blob store answers (or fails to).
StorageUnavailable (BlobStoreUnavailable among them) is raised, not answered: the caller
says "try again later" in its own words.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncGenerator

from attrs import frozen

from intake.domain.signing import DownloadSigner
from intake.domain.uploads import StoredFile
from intake.ports.blobs import BlobNotFound, BlobStore, InvalidBlobKey
from intake.ports.clock import Clock
from intake.ports.submissions import SubmissionRepository


class DownloadRefusal(enum.Enum):
    """Why a link opens no file."""

    UNSIGNED = "unsigned"  # missing, forged, made for another file or expired
    NOT_FOUND = "not_found"  # no such submission or file, or no blob store now
    BLOB_MISSING = "blob_missing"  # the submission links a file the blob store lacks


@frozen
class LinkedFile:
    """A file a genuine link names, as its submission recorded it."""

    submission_id: str
    index: int
    form_id: str
    stored: StoredFile


@frozen
class OpenedFile:
    """A file being read: its first chunk, already read (so that a missing blob is
    known before anything is answered), and a reader of the rest, which the caller
    closes."""

    stored: StoredFile
    first: bytes
    rest: AsyncGenerator[bytes, None]


class Downloads:
    def __init__(
        self,
        signer: DownloadSigner,
        clock: Clock,
        submissions: SubmissionRepository,
        blobs: BlobStore | None,
    ) -> None:
        self._signer = signer
        self._clock = clock
        self._submissions = submissions
        self._blobs = blobs

    async def find(
        self, submission_id: str, index: int, expires: str | None, signature: str | None
    ) -> LinkedFile | DownloadRefusal:
        """The file a link names, if the link is genuine and the file was stored."""
        now = self._clock.now()
        if not self._signer.verify(submission_id, index, expires, signature, now):
            return DownloadRefusal.UNSIGNED
        submission = await self._submissions.get(submission_id)
        if submission is None or index >= len(submission.files):
            return DownloadRefusal.NOT_FOUND
        return LinkedFile(submission_id, index, submission.form_id, submission.files[index])

    async def check(self, linked: LinkedFile) -> StoredFile | DownloadRefusal:
        """The file, if the blob store holds it; nothing is read (for HEAD)."""
        if self._blobs is None:
            # Files were stored once, and no blob store is configured now.
            return DownloadRefusal.NOT_FOUND
        try:
            found = await self._blobs.stat(linked.stored.key)
        except (BlobNotFound, InvalidBlobKey):
            found = None
        return linked.stored if found is not None else DownloadRefusal.BLOB_MISSING

    async def open(self, linked: LinkedFile) -> OpenedFile | DownloadRefusal:
        """The file, streamed from the blob store as it is read, never held whole."""
        if self._blobs is None:
            return DownloadRefusal.NOT_FOUND
        try:
            reader = self._blobs.read(linked.stored.key)
            try:
                first = await _first_chunk(reader)
            except BaseException:
                await reader.aclose()
                raise
        except (BlobNotFound, InvalidBlobKey):  # gone, or a key no store could hold
            return DownloadRefusal.BLOB_MISSING
        return OpenedFile(linked.stored, first, reader)


async def _first_chunk(reader: AsyncGenerator[bytes, None]) -> bytes:
    try:
        return await anext(reader)
    except StopAsyncIteration:
        return b""  # an empty file
