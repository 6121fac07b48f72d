"""The file-system calls the local blob store is built from."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from intake.ports.blobs import BlobStoreUnavailable


@contextmanager
def os_errors(root: Path) -> Iterator[None]:
    """The one place where file-system errors become the port's errors."""
    try:
        yield
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise BlobStoreUnavailable(f"blob store at {root}: {reason}") from error


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True
