"""Opening a SQLite database: the URL forms, the file's modes, the connection settings,
transactions."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from intake.domain.listing import search_text
from intake.ports.store_opening import MIGRATE_HINT, StoreNotPrepared

log = logging.getLogger("intake.sqlite")

_SCHEME = "sqlite:///"
MEMORY = ":memory:"
DEFAULT_BUSY_TIMEOUT = 5.0  # seconds another writer may hold the lock before we give up
# The database holds every submission and the deployment's secrets: its owner only.
FOLDER_MODE = 0o700
FILE_MODE = 0o600
# SQLite's companions of the database file, made with the database file's mode.
_COMPANIONS = ("-wal", "-shm", "-journal")


# What a search of submissions looks in (domain.listing.search_text), for SQL.
SEARCH_TEXT_FUNCTION = "intake_search_text"


def _search_text(data: str) -> str:
    return search_text(json.loads(data))


def database_path(url: str) -> str:
    """`sqlite:///relative.db`, `sqlite:////absolute.db` or `sqlite:///:memory:` to the
    path sqlite3 takes."""
    if not url.startswith(_SCHEME):
        raise ValueError(f"not a sqlite URL (sqlite:///path): {url!r}")
    path = url.removeprefix(_SCHEME)
    if not path or "?" in path or "#" in path:
        raise ValueError(f"a sqlite URL takes a file path and nothing else: {url!r}")
    return path


def absolute_path(path: str) -> str:
    """Where a database path leads, whatever folder it is read from: what messages name."""
    return path if path == MEMORY else os.path.abspath(path)


def connect(
    path: str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, create: bool = True
) -> sqlite3.Connection:
    """Call on the thread that will own the connection: sqlite3 then refuses any other.
    `create`: make the file (and its missing folders) if there is none; otherwise a
    missing file is StoreNotPrepared and nothing is made."""
    target: str = path
    if path != MEMORY:
        if create:
            _make_private(Path(path))
        elif not Path(path).is_file():
            raise StoreNotPrepared(
                f"the database {absolute_path(path)} does not exist: {MIGRATE_HINT}"
            )
        _tighten(Path(path))
        # mode=rw: sqlite3 itself must not make the file that was checked above.
        target = f"{Path(path).absolute().as_uri()}?mode={'rwc' if create else 'rw'}"
    # isolation_level=None: the driver opens no transaction of its own; ours are explicit.
    conn = sqlite3.connect(target, isolation_level=None, timeout=busy_timeout, uri=True)
    try:
        conn.row_factory = sqlite3.Row
        conn.create_function(SEARCH_TEXT_FUNCTION, 1, _search_text, deterministic=True)
        # WAL lets readers go on while one writer commits; FULL syncs the WAL on every
        # commit, so an accepted submission survives a power cut.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        # A deleted row's bytes are overwritten with zeros, not left in free space, so
        # what an erasure deletes is gone from the file (whatever the build's default).
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn


def _make_private(path: Path) -> None:
    """The missing folders, 0700, and an empty database file, 0600, whatever the umask
    (chmod after making: the umask only ever narrows what mkdir and open are given).
    A folder that exists is the operator's and is left as it is."""
    missing = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    for folder in reversed(missing):
        with suppress(FileExistsError):  # another process made it first
            folder.mkdir()
            folder.chmod(FOLDER_MODE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def _tighten(path: Path) -> None:
    """A database file (or its companions) that others may read is made its owner's only,
    with a warning: it holds every submission and the secrets. SQLite gives the
    companions it makes the database file's mode, so they follow."""
    for found in (path, *(path.with_name(path.name + suffix) for suffix in _COMPANIONS)):
        try:
            mode = stat.S_IMODE(found.stat().st_mode)
        except FileNotFoundError:
            continue
        if not mode & ~FILE_MODE:
            continue
        try:
            found.chmod(FILE_MODE)
        except PermissionError:  # not its owner: say so, and go on as before
            log.warning(
                "the database file is open to others and this user cannot change that",
                extra={"file": found.name, "mode": oct(mode)},
            )
            continue
        log.warning(
            "the database file was open to others; it is now its owner's only (0600)",
            extra={"file": found.name, "was": oct(mode)},
        )


def truncate_wal(conn: sqlite3.Connection) -> bool:
    """After an erasure: every page of the write-ahead log copied into the database file
    (where secure_delete has zeroed what was deleted) and the log cut to nothing, so
    that no earlier copy of an erased value stays in `-wal`. It waits, as long as the
    busy timeout, for other connections' transactions to end. False, with a warning,
    when another process still reads an older snapshot: the log is then cut by a later
    erasure's checkpoint, or when the last connection closes. The erasure is committed
    before: a checkpoint that fails is logged, never raised as the erasure's failure."""
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as failed:
        log.warning(
            "the write-ahead log could not be truncated after an erasure",
            extra={"error": type(failed).__name__},
        )
        return False
    if busy:
        log.warning("the write-ahead log could not be truncated after an erasure: busy")
    return not busy


class Transaction:
    """Handed to the body of `transaction`; `discard()` ends it with a rollback."""

    __slots__ = ("discarded",)

    def __init__(self) -> None:
        self.discarded = False

    def discard(self) -> None:
        self.discarded = True


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[Transaction]:
    """BEGIN IMMEDIATE takes the write lock first, so that what the body reads cannot be
    changed by another connection before it writes (no lost quota counts). Any exception,
    or a discard, rolls everything back."""
    conn.execute("BEGIN IMMEDIATE")
    tx = Transaction()
    try:
        yield tx
        conn.execute("ROLLBACK" if tx.discarded else "COMMIT")
    except BaseException:
        if conn.in_transaction:
            # A failed rollback (the disk went away) must not hide the first error;
            # SQLite undoes the unfinished transaction from its journal on next open.
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
