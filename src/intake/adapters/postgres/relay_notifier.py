"""The relay's wake-up after commits, sent by the serving process rather than by each
commit: a NOTIFY in the commit's transaction would hold the database's notification
lock through the commit's WAL flush, so that commits could only flush one at a time.

After a commit the notifier sends one NOTIFY at once, then waits `gap` seconds; commits
in between are announced by one more NOTIFY at the end of the wait. So the last commit
of a burst is always announced, within `gap` seconds, and a busy process sends forty
wake-ups a second at most (at 5 ms they were near half of its transactions under load,
on a database that may share the host's cores). The NOTIFY's own transaction writes
nothing that needs to outlive a crash, so it does not wait for its flush either.

A wake-up that cannot be sent (PostgreSQL down) is not retried: the relay polls.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

from intake.adapters.postgres.channel_listener import OUTBOX_CHANNEL
from intake.adapters.postgres.database import Database
from intake.domain.errors import StorageUnavailable

log = logging.getLogger("intake.postgres")

DEFAULT_GAP = 0.025  # seconds between two wake-ups of one process (a relay's delay)
_WAKE = (
    "SELECT set_config('synchronous_commit', 'off', true), pg_notify('" + OUTBOX_CHANNEL + "', '')"
)


class RelayNotifier:
    def __init__(self, db: Database, gap: float = DEFAULT_GAP) -> None:
        self._db = db
        self._gap = gap
        self._pending = False
        self._task: asyncio.Task[None] | None = None

    def ring(self) -> None:
        """After a commit: a wake-up now, or at the end of the current wait."""
        self._pending = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._pending:
            self._pending = False
            try:
                await self._db.execute(_WAKE)
            except StorageUnavailable as error:
                log.debug("relay wake-up not sent: %s", error)
            await asyncio.sleep(self._gap)

    async def close(self) -> None:
        """Sends what is pending, if it can, and stops."""
        task, self._task = self._task, None
        if task is None:
            return
        with suppress(Exception):
            await asyncio.wait_for(task, timeout=2.0)
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
