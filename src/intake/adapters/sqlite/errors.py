"""Driver errors become the domain's one storage error here, and nowhere else."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from intake.domain.errors import StorageUnavailable


@contextmanager
def map_sqlite_errors() -> Iterator[None]:
    """Locked, busy, full, I/O errors, a corrupt file, a broken constraint: the request
    cannot be served now, and that is all the service needs to know. The driver's error
    stays chained for the log. sqlite3.InterfaceError (a bad parameter type) is a bug in
    the adapter, not a storage condition, so it is left alone. OSError comes from making
    the database's directory."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        raise StorageUnavailable(f"sqlite: {error}") from error
    except OSError as error:
        raise StorageUnavailable(f"sqlite: {error}") from error
