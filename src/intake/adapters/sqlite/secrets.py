"""Secrets the processes of a deployment share (SecretRepository), in the database file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from intake.adapters.sql_rows import check_secret
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.worker import Worker

_STORE_IF_ABSENT = """
    INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
    ON CONFLICT (name) DO NOTHING
"""
_READ_STORED = "SELECT value FROM secrets WHERE name = ?"


def _get_or_create(conn: sqlite3.Connection, name: str, candidate: bytes) -> bytes:
    # Under the write lock (BEGIN IMMEDIATE): another process's insert is either
    # committed before, and kept, or waits for this one to end.
    with transaction(conn):
        conn.execute(_STORE_IF_ABSENT, (name, candidate, mapping.time_text(datetime.now(UTC))))
        row = conn.execute(_READ_STORED, (name,)).fetchone()
    return bytes(row["value"])


class SqliteSecrets:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        return await self._worker.run(_get_or_create, name, bytes(candidate))
