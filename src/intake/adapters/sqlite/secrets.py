"""Secrets the processes of a deployment share (SecretRepository), in the database file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from intake.adapters.sealed_columns import opened_shared_secret, sealed_shared_secret
from intake.adapters.sql_rows import check_secret
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.worker import Worker
from intake.ports.sealer import Sealer

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
    def __init__(self, worker: Worker, sealer: Sealer) -> None:
        self._worker = worker
        self._sealer = sealer

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        sealed = sealed_shared_secret(name, bytes(candidate), self._sealer)
        stored = await self._worker.run(_get_or_create, name, sealed)
        return opened_shared_secret(name, stored, self._sealer)
