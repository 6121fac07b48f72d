"""The schema a new SQLite file is given, held against a snapshot of its catalog: the
migrations, once released, are never edited, so what they build changes only with a
new migration (and then the snapshot with it, in the same change)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from intake.adapters.sqlite import open_sqlite_store

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).with_name("sqlite_schema.txt")


def catalog(conn: sqlite3.Connection) -> str:
    """The schema of the database, as text: one block per table, index or trigger, as
    SQLite keeps it (the blank space after a statement, which it keeps as sent, is no
    part of the schema)."""
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master"
        " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    return "\n".join(
        f"-- {kind} {name} on {table}\n{sql.rstrip()}\n" for kind, name, table, sql in rows
    )


async def test_a_new_file_is_given_the_schema_of_the_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "intake.db"
    store = await open_sqlite_store(f"sqlite:///{path}")
    await store.close()

    with closing(sqlite3.connect(path)) as conn:
        assert catalog(conn) == SNAPSHOT.read_text(encoding="utf-8")
