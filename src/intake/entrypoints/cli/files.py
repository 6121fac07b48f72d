"""Writing a submission's uploaded files into a directory, for `submissions export --files`.

Each file goes to `DIR/<submission_id>/<index>-<name>`. The names come from senders, so
every path is made here, never taken: the submission id must be one plain segment, the
name is cleaned and cut to what a file system takes, and every step is opened relative
to the directory above it without following symbolic links, so nothing is written
outside DIR. Files are created readable by their owner only (0600, folders 0700): they
hold what visitors sent. Each file is streamed into a temporary name, checked against
the size and hash the submission recorded, and renamed into place only when whole.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import aclosing, contextmanager, suppress
from pathlib import Path

from attrs import define, field

from intake.domain.model import Submission
from intake.domain.uploads import StoredFile, clean_file_name
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.runner import CommandError
from intake.ports.blobs import BlobNotFound, BlobStoreError, BlobStoreUnavailable
from intake.service.admin import Exports

MAX_NAME_BYTES = 255  # a file name's limit on the usual file systems
_MAX_EXTENSION = 16  # characters of an extension worth keeping when a name is cut
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,128}")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def disk_name(index: int, name: str) -> str:
    """`<index>-<name>`, within a file name's 255 bytes: a long name loses the end of its
    stem, and keeps a short extension so the file still opens with the right program."""
    prefix = f"{index}-"
    cleaned = clean_file_name(name)
    budget = MAX_NAME_BYTES - len(prefix)
    if len(cleaned.encode()) <= budget:
        return prefix + cleaned
    stem, dot, extension = cleaned.rpartition(".")
    if not dot or not stem or len(extension) > _MAX_EXTENSION:
        stem, extension = cleaned, ""
    tail = f".{extension}" if extension else ""
    room = budget - len(tail.encode())
    # Cut at a byte count, then drop a character the cut split.
    cut = stem.encode()[:room].decode("utf-8", "ignore")
    return prefix + cut + tail


@define
class FileExport:
    """The files written so far, and those that could not be (missing or damaged)."""

    root: Path
    exports: Exports
    out: Output
    root_fd: int
    written: int = 0
    failed: list[str] = field(factory=list)

    async def write(self, submission: Submission, entries: list[dict[str, object]]) -> None:
        """Writes the submission's files and sets each entry's `path` (relative to the
        root; None when the file could not be exported)."""
        if not submission.files:
            return
        folder = submission.submission_id
        if not _SEGMENT.fullmatch(folder):
            raise CommandError(f"cannot export the files of {folder!r}: not a submission id")
        directory_fd = self._folder(folder)
        try:
            for index, stored in enumerate(submission.files):
                name = disk_name(index, stored.name)
                done = await self._write_one(directory_fd, name, stored, f"{folder} file {index}")
                if index < len(entries):
                    entries[index]["path"] = f"{folder}/{name}" if done else None
        finally:
            os.close(directory_fd)

    def _folder(self, name: str) -> int:
        try:
            with suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=self.root_fd)
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=self.root_fd)
        except OSError as error:
            raise self._cannot_write(name, error) from None

    async def _write_one(
        self, directory_fd: int, name: str, stored: StoredFile, label: str
    ) -> bool:
        partial = f".partial-{secrets.token_hex(8)}"
        try:
            fd = os.open(partial, _FILE_FLAGS, 0o600, dir_fd=directory_fd)
        except OSError as error:
            raise self._cannot_write(name, error) from None
        placed = False
        try:
            problem = await self._stream(fd, stored)
            written, fd = fd, -1  # closed once, even if the close fails
            os.close(written)
            if problem is not None:
                self._fail(f"{label} {problem}")
                return False
            os.replace(partial, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
            placed = True
        except OSError as error:
            raise self._cannot_write(name, error) from None
        finally:
            if fd >= 0:
                os.close(fd)
            if not placed:
                with suppress(OSError):
                    os.unlink(partial, dir_fd=directory_fd)
        self.written += 1
        return True

    async def _stream(self, fd: int, stored: StoredFile) -> str | None:
        """Copies the blob into `fd`; what is wrong with it, or None."""
        digest = hashlib.sha256()
        size = 0
        try:
            async with aclosing(self.exports.read_file(stored)) as chunks:
                async for chunk in chunks:
                    digest.update(chunk)
                    size += len(chunk)
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
        except BlobStoreUnavailable:
            raise  # the store is down: the export stops, as for a database outage
        except BlobNotFound:
            return "is missing from the blob store"
        except BlobStoreError:
            return "is damaged in the blob store"
        if size != stored.size or digest.hexdigest() != stored.sha256:
            return "does not match the size and hash the submission recorded"
        return None

    def _fail(self, message: str) -> None:
        self.failed.append(message)
        self.out.note(f"intake: warning: {message}; not exported")

    def _cannot_write(self, name: str, error: OSError) -> CommandError:
        reason = error.strerror or type(error).__name__
        # O_NOFOLLOW: a link where a file goes fails with ELOOP, where a folder goes
        # (O_DIRECTORY too) with ENOTDIR.
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            reason = "a file or symbolic link is in the way"
        return CommandError(f"cannot write {name!r} under {str(self.root)!r}: {reason}")

    def check(self) -> None:
        """Raises when some files could not be exported, once everything else is."""
        if self.failed:
            count = len(self.failed)
            raise CommandError(
                f"{count} {'file' if count == 1 else 'files'} could not be exported "
                f"(see the warnings above); the rest are in {str(self.root)!r}"
            )


def require_blob_store(exports: Exports) -> None:
    if not exports.has_blob_store:
        raise CommandError(
            "--files needs a blob store: set INTAKE_BLOB_URL to where the uploads are kept"
        )


@contextmanager
def file_export(root: Path, exports: Exports, out: Output) -> Iterator[FileExport]:
    """The export directory, made (0700) when missing, open for the files to go in."""
    require_blob_store(exports)
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise CommandError(f"cannot write into {str(root)!r}: {error.strerror}") from None
    try:
        yield FileExport(root, exports, out, root_fd)
    finally:
        os.close(root_fd)
