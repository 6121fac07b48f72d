"""The key file of the embedded default: with no INTAKE_SECRET_KEY, a SQLite database
keeps its sealing key in a file beside it (`intake.db.key`), its owner's only (0600),
made once by whichever process opens the database first."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from intake.adapters.sealing import AeadSealer, generate_key, process_sealer
from intake.adapters.sqlite.connection import MEMORY
from intake.domain.sealing import SecretKeyError, parse_key

log = logging.getLogger("intake")

KEY_FILE_SUFFIX = ".key"
KEY_FILE_MODE = 0o600


def embedded_sealer(
    database: str, current: str | None = None, old: Sequence[str] = ()
) -> AeadSealer:
    """The sealer of a SQLite database: under `current` (INTAKE_SECRET_KEY) when given,
    the key file's key, if there is one, still opening what it sealed; else under the key
    file's key, the file made if need be. An in-memory database needs no file."""
    if database == MEMORY:
        return process_sealer() if current is None else AeadSealer.from_keys(current, old)
    path = key_file_beside(database)
    try:
        if current is None:
            return AeadSealer.from_keys(key_file_key(path), old)
        in_file = read_key_file(path)
    except SecretKeyError as error:  # the file's content is never shown
        raise SecretKeyError(f"{path}: {error}") from None
    return AeadSealer.from_keys(current, [*old, *([in_file] if in_file else [])])


def key_file_beside(database: str) -> Path:
    path = Path(database)
    return path.with_name(path.name + KEY_FILE_SUFFIX)


def read_key_file(path: Path) -> str | None:
    """The key a key file holds; None when there is no file. SecretKeyError (the file's
    name, never its content) when it holds no key."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    parse_key(text)
    return text.strip()


def key_file_key(path: Path) -> str:
    """The key in `path`, made first if there is none. Two processes racing agree: each
    writes a whole file of its own, then links it into place, and the first link wins."""
    found = read_key_file(path)
    if found is not None:
        return found
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_FILE_MODE)
    try:
        os.fchmod(fd, KEY_FILE_MODE)
        os.write(fd, (generate_key() + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(draft, path)
    except FileExistsError:
        pass  # another process's key is the key
    else:
        _sync_folder(path.parent)
        log.info("made a secret key beside the database", extra={"file": path.name})
    finally:
        draft.unlink(missing_ok=True)
    found = read_key_file(path)
    if found is None:
        raise RuntimeError(f"the key file {path} vanished as it was made")
    return found


def _sync_folder(folder: Path) -> None:
    # The link survives a power cut only once its folder is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
