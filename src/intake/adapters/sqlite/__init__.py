"""The SQLite adapter: every repository of the Store port over one local database file,
with the standard library's sqlite3 driven from one worker thread.

The store is imported when first asked for: the settings read a SQLite URL with
connection.py, and a process on PostgreSQL loads nothing more of this package."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from intake.adapters.sqlite.store import SqliteStore, open_sqlite_store

__all__ = ["SqliteStore", "open_sqlite_store"]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.store"), name)
    globals()[name] = value  # found at once the next time
    return value
