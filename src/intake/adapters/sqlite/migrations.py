"""The schema, as numbered migrations applied in order, each in its own transaction: one
file each in migrations/, applied in the order of their numbers. A migration, once
released, is never edited: a change is a new migration."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from intake.adapters.sql_migrations import Migration, load_migrations
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.mapping import time_text

MIGRATIONS: tuple[Migration, ...] = load_migrations("intake.adapters.sqlite")

_CREATE_LEDGER = """
    CREATE TABLE IF NOT EXISTS schema_migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TEXT NOT NULL
    )
"""


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Applies the pending migrations; returns their names. Each one checks the ledger
    under the write lock, so two processes starting at once apply it once."""
    with transaction(conn):
        conn.execute(_CREATE_LEDGER)
    applied: list[str] = []
    for migration in MIGRATIONS:
        with transaction(conn) as tx:
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
            ).fetchone()
            if done is not None:
                tx.discard()
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time_text(datetime.now(UTC))),
            )
        applied.append(migration.name)
    return applied
