"""The wake-up of a relay waiting for events, rung by the commits of the same process
(the in-memory and SQLite stores; PostgreSQL's relays hear of commits by NOTIFY)."""

from __future__ import annotations

import asyncio
from contextlib import suppress


class RelayWakeup:
    """A relay's wait for new events, rung by the commits of this process's store.

    A ring with no one waiting is kept, so the next wait returns at once: a commit
    between two waits is not missed. An event per wait, made in the waiter's loop, so
    the store is not tied to the loop it was made in."""

    def __init__(self) -> None:
        self._rung = False
        self._waiting: set[asyncio.Event] = set()

    def ring(self) -> None:
        self._rung = True
        for event in self._waiting:
            event.set()

    async def wait(self, seconds: float) -> None:
        if not self._rung:
            event = asyncio.Event()
            self._waiting.add(event)
            try:
                with suppress(TimeoutError):
                    async with asyncio.timeout(seconds):
                        await event.wait()
            finally:
                self._waiting.discard(event)
        self._rung = False
