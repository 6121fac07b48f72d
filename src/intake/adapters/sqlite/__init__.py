"""The SQLite adapter: every repository of the Store port over one local database file,
with the standard library's sqlite3 driven from one worker thread."""

from intake.adapters.sqlite.store import SqliteStore, open_sqlite_store

__all__ = ["SqliteStore", "open_sqlite_store"]
