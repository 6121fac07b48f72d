"""Opening a SQLite database: the URL forms, the connection settings, transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

_SCHEME = "sqlite:///"
MEMORY = ":memory:"
DEFAULT_BUSY_TIMEOUT = 5.0  # seconds another writer may hold the lock before we give up


def database_path(url: str) -> str:
    """`sqlite:///relative.db`, `sqlite:////absolute.db` or `sqlite:///:memory:` to the
    path sqlite3 takes."""
    if not url.startswith(_SCHEME):
        raise ValueError(f"not a sqlite URL (sqlite:///path): {url!r}")
    path = url.removeprefix(_SCHEME)
    if not path or "?" in path or "#" in path:
        raise ValueError(f"a sqlite URL takes a file path and nothing else: {url!r}")
    return path


def connect(path: str, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> sqlite3.Connection:
    """Call on the thread that will own the connection: sqlite3 then refuses any other."""
    if path != MEMORY:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: the driver opens no transaction of its own; ours are explicit.
    conn = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout)
    try:
        conn.row_factory = sqlite3.Row
        # WAL lets readers go on while one writer commits; FULL syncs the WAL on every
        # commit, so an accepted submission survives a power cut.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    except BaseException:
        conn.close()
        raise
    return conn


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
