"""Every row of every table of a SQLite database, as text: where a value that must not
be kept would show."""

from __future__ import annotations

import sqlite3

from intake.adapters.sqlite import SqliteStore


def rows_text(conn: sqlite3.Connection) -> str:
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    return "\n".join(
        f"{name}: {tuple(row)!r}" for name in names for row in conn.execute(f"SELECT * FROM {name}")
    )


async def stored_text(store: SqliteStore) -> str:
    """`rows_text` of the store's database, read on its own connection (an in-memory
    database has no other)."""
    return await store._worker.run(rows_text)
