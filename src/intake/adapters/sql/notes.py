"""Session notes (NoteRepository), for both SQL stores, sealed at rest."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import note_statements as sql
from intake.adapters.sql.executor import Executor, Transaction
from intake.domain.sealing import SealingError
from intake.ports.sealer import Sealer


class SqlNotes:
    def __init__(self, ex: Executor, sealer: Sealer) -> None:
        self._ex = ex
        self._sealer = sealer

    async def keep(
        self, session_id: str, note: str, *, now: datetime, expires_at: datetime
    ) -> None:
        sealed = self._sealer.seal_text(note, sql.note_place(session_id))
        time = self._ex.rows.codec.time

        async def steps(tx: Transaction) -> None:
            await tx.execute(sql.DROP_EXPIRED, (time(now),))
            await tx.execute(sql.KEEP, (session_id, sealed, time(expires_at)))

        await self._ex.transaction(steps)

    async def take(self, session_id: str, now: datetime) -> str | None:
        # Read and deleted in one statement: two pages at once cannot both have it.
        row = await self._ex.fetch_one(sql.TAKE, (session_id,))
        if row is None or self._ex.rows.codec.read_time(row["expires_at"]) <= now:
            return None
        try:
            return self._sealer.open_text(row["note"], sql.note_place(session_id))
        except SealingError:
            return None
