"""Blobs as files under one root directory.

Layout: `<root>/<key>` holds one blob: a fixed 1024-byte header (a magic line, then the
metadata as JSON, padded with spaces) followed by the content. Keeping the metadata in
the file itself means one rename publishes content and metadata together, and replacing
a blob is atomic: no sidecar can be left behind or disagree with its content.

A write streams into `<root>/.incoming/<random>` (created exclusively, mode 0600); commit
writes the header, fsyncs the file, renames it into place and fsyncs the directory. The
blocking calls run in worker threads (a few at a time per store), never on the event loop.
"""

from __future__ import annotations

import builtins
import errno
import logging
import os
import secrets
import stat
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from intake.adapters.blobs.local_files import exists, fsync_dir, is_dir, os_errors, write_all
from intake.adapters.blobs.local_format import HEADER_SIZE, NotABlob, decode_header
from intake.adapters.blobs.local_writer import LocalBlobWriter
from intake.adapters.system import SystemClock
from intake.ports.blobs import (
    DEFAULT_CHUNK_SIZE,
    INCOMING_PREFIX,
    BlobInfo,
    BlobNotFound,
    BlobStoreError,
    BlobStoreUnavailable,
    InvalidBlobKey,
    validate_content_type,
    validate_deletable_key,
    validate_key,
    validate_max_size,
    validate_prefix,
)
from intake.ports.clock import Clock

INCOMING_DIR = INCOMING_PREFIX.rstrip("/")
DEFAULT_THREADS = 8

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


def _conflict(key: str) -> InvalidBlobKey:
    return InvalidBlobKey(f"{key!r} would be both a blob and a folder of other blobs")


class LocalBlobStore:
    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        threads: int = DEFAULT_THREADS,
    ) -> None:
        self.root = Path(root).absolute()
        self.clock: Clock = clock or SystemClock()
        self._incoming = self.root / INCOMING_DIR
        self._threads = threads
        # Made on first use: making it loads anyio's backend, which the `intake`
        # commands that touch no file never need.
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[..., _T], *args: Any) -> _T:
        """Runs blocking file I/O in a worker thread, with OSError mapped."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._threads)
        with os_errors(self.root):
            return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)

    def path(self, key: str) -> Path:
        # A validated key has no empty, `.` or `..` segment and no leading slash, so the
        # path stays under the root.
        return self.root / key

    # writes

    async def writer(self, key: str, *, content_type: str, max_size: int) -> LocalBlobWriter:
        validate_key(key)
        validate_content_type(content_type)
        validate_max_size(max_size)
        # Shielded: a cancellation while the file is being made would leak its descriptor.
        with anyio.CancelScope(shield=True):
            fd, incoming = await self.run(self._open_incoming, key)
        return LocalBlobWriter(
            self, fd, incoming, key, content_type=content_type, max_size=max_size
        )

    def _open_incoming(self, key: str) -> tuple[int, Path]:
        self.check_no_conflict(key)
        os.makedirs(self._incoming, mode=0o700, exist_ok=True)
        path = self._incoming / secrets.token_hex(16)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
        try:
            # Room for the header, written at commit once the size and hash are known.
            write_all(fd, b"\0" * HEADER_SIZE)
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
        return fd, path

    def check_no_conflict(self, key: str) -> None:
        """Fails fast on a key that is a folder of blobs, or lies under a blob."""
        path = self.path(key)
        if is_dir(path):
            raise _conflict(key)
        parent = path.parent
        while parent != self.root:
            if exists(parent) and not is_dir(parent):
                raise _conflict(key)
            parent = parent.parent

    def publish(self, incoming: Path, key: str) -> None:
        """Renames a synced incoming file into place, durably."""
        final = self.path(key)
        for _ in range(3):
            self._make_parents(key)
            try:
                os.rename(incoming, final)
            except IsADirectoryError:
                raise _conflict(key) from None
            except (FileNotFoundError, NotADirectoryError) as error:
                if not exists(incoming):
                    raise BlobStoreUnavailable(
                        f"the unfinished write of {key!r} was swept away"
                    ) from error
                if isinstance(error, NotADirectoryError):
                    raise _conflict(key) from None
                continue  # a delete pruned the parent folder meanwhile: make it again
            fsync_dir(final.parent)
            return
        raise BlobStoreUnavailable(f"could not place {key!r}: its folder keeps vanishing")

    def _make_parents(self, key: str) -> None:
        current = self.root
        for part in key.split("/")[:-1]:
            current = current / part
            try:
                os.mkdir(current, 0o700)
            except FileExistsError:
                if not is_dir(current):
                    raise _conflict(key) from None
                continue
            except NotADirectoryError:
                raise _conflict(key) from None
            # A new folder is durable only once its own parent is synced.
            fsync_dir(current.parent)

    # reads

    async def read(
        self, key: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE
    ) -> AsyncGenerator[bytes, None]:
        validate_key(key)
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive: {chunk_size}")
        opened = await self.run(self._open_blob, key)
        if opened is None:
            raise BlobNotFound(key)
        fd, info = opened
        try:
            remaining = info.size
            while remaining > 0:
                chunk = await self.run(os.read, fd, min(chunk_size, remaining))
                if not chunk:
                    raise BlobStoreError(f"the blob {key!r} was cut short while being read")
                remaining -= len(chunk)
                yield chunk
        finally:
            os.close(fd)

    async def stat(self, key: str) -> BlobInfo | None:
        validate_key(key)
        opened = await self.run(self._open_blob, key)
        if opened is None:
            return None
        fd, info = opened
        os.close(fd)
        return info

    def _open_blob(self, key: str) -> tuple[int, BlobInfo] | None:
        """The open file, positioned after the header, and its metadata; None if absent."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path(key), flags)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:  # a symbolic link: not something we wrote
                return None
            raise
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                os.close(fd)
                return None
            header = os.pread(fd, HEADER_SIZE, 0)
            info = decode_header(key, header, status.st_size)
            os.lseek(fd, HEADER_SIZE, os.SEEK_SET)
        except NotABlob:
            os.close(fd)
            raise BlobStoreError(f"the file for {key!r} is not an intact blob") from None
        except BaseException:
            os.close(fd)
            raise
        return fd, info

    # removal and listing

    async def delete(self, key: str) -> None:
        validate_deletable_key(key)
        await self.run(self._delete, key)

    def _delete(self, key: str) -> None:
        path = self.path(key)
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        if key.startswith(INCOMING_PREFIX):
            return
        # Empty folders go too, so that their name is free for a blob again.
        parent = path.parent
        while parent != self.root:
            try:
                os.rmdir(parent)
            except OSError:
                return
            parent = parent.parent

    async def list(
        self, prefix: str = "", *, older_than: datetime | None = None
    ) -> AsyncGenerator[BlobInfo, None]:
        validate_prefix(prefix)
        folder = prefix.rpartition("/")[0]
        pending = [] if folder.startswith(".") or "/." in folder else [folder]
        while pending:
            folder = pending.pop()
            infos, folders = await self.run(self._scan, folder, prefix, older_than)
            pending.extend(folders)
            for info in infos:
                yield info
        if older_than is not None:
            for info in await self.run(self._scan_incoming, prefix, older_than):
                yield info

    def _scan(
        self, folder: str, prefix: str, older_than: datetime | None
    ) -> tuple[builtins.list[BlobInfo], builtins.list[str]]:
        """One folder's blobs that match, and its subfolders that may hold more."""
        infos: builtins.list[BlobInfo] = []
        folders: builtins.list[str] = []
        try:
            entries = builtins.list(os.scandir(self.root / folder if folder else self.root))
        except (FileNotFoundError, NotADirectoryError):
            return infos, folders
        for entry in entries:
            if entry.name.startswith("."):
                continue  # `.incoming`, and nothing a key can name
            key = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                if (key + "/").startswith(prefix) or prefix.startswith(key + "/"):
                    folders.append(key)
                continue
            if not key.startswith(prefix) or not entry.is_file(follow_symlinks=False):
                continue
            try:
                validate_key(key)
                opened = self._open_blob(key)
            except (InvalidBlobKey, BlobStoreError):
                _log.warning("skipping a file that is not a blob", extra={"blob_key": key})
                continue
            if opened is None:
                continue  # deleted meanwhile
            fd, info = opened
            os.close(fd)
            if older_than is None or info.created_at < older_than:
                infos.append(info)
        return infos, folders

    def _scan_incoming(self, prefix: str, older_than: datetime) -> builtins.list[BlobInfo]:
        infos: builtins.list[BlobInfo] = []
        try:
            entries = builtins.list(os.scandir(self._incoming))
        except FileNotFoundError:
            return infos
        for entry in entries:
            key = INCOMING_PREFIX + entry.name
            if not key.startswith(prefix):
                continue
            try:
                status = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # committed or aborted meanwhile
            # The last write's time: a slow upload that is still going is not stale.
            touched_at = datetime.fromtimestamp(status.st_mtime, UTC)
            if touched_at < older_than:
                infos.append(
                    BlobInfo(
                        key=key,
                        size=max(0, status.st_size - HEADER_SIZE),
                        sha256="",
                        content_type="",
                        created_at=touched_at,
                    )
                )
        return infos

    async def ping(self) -> None:
        await self.run(self._ping)

    def _ping(self) -> None:
        os.makedirs(self._incoming, mode=0o700, exist_ok=True)
        if not os.access(self._incoming, os.W_OK | os.X_OK):
            raise BlobStoreUnavailable(f"blob store at {self.root}: not writable")

    async def aclose(self) -> None:
        return None
