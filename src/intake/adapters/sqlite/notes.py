"""Session notes over the SQLite connection (NoteRepository), sealed at rest."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from intake.adapters import note_statements as sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.worker import Worker
from intake.domain.sealing import SealingError
from intake.ports.sealer import Sealer


def _keep(
    conn: sqlite3.Connection, session_id: str, sealed: str, now: datetime, expires_at: datetime
) -> None:
    with transaction(conn):
        conn.execute(sql.DROP_EXPIRED, (mapping.time_text(now),))
        conn.execute(sql.KEEP, (session_id, sealed, mapping.time_text(expires_at)))


def _take(conn: sqlite3.Connection, session_id: str) -> tuple[str, datetime] | None:
    with transaction(conn):
        row = conn.execute(sql.TAKE, (session_id,)).fetchone()
    if row is None:
        return None
    return row["note"], mapping.parse_time(row["expires_at"])


class SqliteNotes:
    def __init__(self, worker: Worker, sealer: Sealer) -> None:
        self._worker = worker
        self._sealer = sealer

    async def keep(
        self, session_id: str, note: str, *, now: datetime, expires_at: datetime
    ) -> None:
        sealed = self._sealer.seal_text(note, sql.note_place(session_id))
        await self._worker.run(_keep, session_id, sealed, now, expires_at)

    async def take(self, session_id: str, now: datetime) -> str | None:
        taken = await self._worker.run(_take, session_id)
        if taken is None or taken[1] <= now:
            return None
        try:
            return self._sealer.open_text(taken[0], sql.note_place(session_id))
        except SealingError:
            return None
