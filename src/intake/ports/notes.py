"""What a dashboard session is shown once, on the page a post leads to (a new API key,
a new webhook endpoint's signing secret): kept by the store between the post and the
page, and read once."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class NoteRepository(Protocol):
    async def keep(
        self, session_id: str, note: str, *, now: datetime, expires_at: datetime
    ) -> None:
        """Keeps `note` for the session until `expires_at`, in place of one kept before;
        the notes of any session expired at `now` go in the same step. The SQL stores keep
        it sealed, and drop it with its session."""
        ...

    async def take(self, session_id: str, now: datetime) -> str | None:
        """The session's note, deleted in the same step, so it is read once: None when
        there is none, it expired, or it cannot be opened (sealed under a key no longer
        configured)."""
        ...
