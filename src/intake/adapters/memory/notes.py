"""Session notes in memory (NoteRepository): each call runs without an `await`, so a
note is taken once."""

from __future__ import annotations

from datetime import datetime


class InMemoryNotes:
    def __init__(self) -> None:
        self._notes: dict[str, tuple[str, datetime]] = {}

    async def keep(
        self, session_id: str, note: str, *, now: datetime, expires_at: datetime
    ) -> None:
        self._notes = {key: kept for key, kept in self._notes.items() if kept[1] > now}
        self._notes[session_id] = (note, expires_at)

    async def take(self, session_id: str, now: datetime) -> str | None:
        kept = self._notes.pop(session_id, None)
        if kept is None or kept[1] <= now:
            return None
        return kept[0]
