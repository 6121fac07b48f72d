"""Session notes over the pool (NoteRepository), sealed at rest."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import note_statements as sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.sql_statements import for_psycopg
from intake.domain.sealing import SealingError
from intake.ports.sealer import Sealer

_DROP_EXPIRED = for_psycopg(sql.DROP_EXPIRED)
_KEEP = for_psycopg(sql.KEEP)
_TAKE = for_psycopg(sql.TAKE)


class PostgresNotes:
    def __init__(self, db: Database, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer

    async def keep(
        self, session_id: str, note: str, *, now: datetime, expires_at: datetime
    ) -> None:
        sealed = self._sealer.seal_text(note, sql.note_place(session_id))
        async with self._db.connection() as conn, conn.transaction():
            await conn.execute(_DROP_EXPIRED, (mapping.moment(now),))
            await conn.execute(_KEEP, (session_id, sealed, mapping.moment(expires_at)))

    async def take(self, session_id: str, now: datetime) -> str | None:
        row = await self._db.fetch_one(_TAKE, (session_id,))
        if row is None or mapping.utc(row["expires_at"]) <= now:
            return None
        try:
            return self._sealer.open_text(row["note"], sql.note_place(session_id))
        except SealingError:
            return None
