"""How a relay hears that events may have been committed, so that it need not only poll."""

from __future__ import annotations

from typing import Protocol


class NewEvents(Protocol):
    async def wait(self, seconds: float) -> None:
        """Returns when new outbox rows may exist, or after `seconds` at most. May
        return early with nothing new (a relay then finds nothing to fan out), so the
        caller loops; never raises for want of a wake-up channel, the timeout is the
        fallback."""
        ...
