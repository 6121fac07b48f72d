"""Keeps the form cache (adapters/form_cache.py) true to the database: the triggers of
migration 0005 send pg_notify('intake_forms') with every change to a form or a
workspace, by any process; each one empties the cache.

A task of its own follows the channel on a connection of its own (a ChannelListener), so the
lookups never wait for it. It starts with the first lookup that finds the cache
disconnected, so that a process that never serves (the `intake` command, a relay) never
opens it. The cache serves only while the connection is up and the database has the
triggers; it is emptied whenever the connection comes back, since what was announced
while it was down is lost.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

from intake.adapters.form_cache import FormCache
from intake.adapters.postgres.channel_listener import ChannelListener
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.migrations import schema_version
from intake.domain.errors import StorageUnavailable

log = logging.getLogger("intake.postgres")

CHANNEL = "intake_forms"
APPLICATION_NAME = "intake-forms-listen"
TRIGGERS_SINCE = 5  # the migration that installs the triggers
RETRY = 1.0  # seconds between two attempts while not listening
_QUIET = 60.0  # seconds a wait may last while listening: nothing hangs on it


class FormChangesListener:
    def __init__(self, db: Database, cache: FormCache) -> None:
        self._db = db
        self._cache = cache
        self._listener = ChannelListener(db.url, CHANNEL, APPLICATION_NAME)
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        """Starts following the channel, if not already; returns at once."""
        if self._closed or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        try:
            while not self._closed:
                try:
                    await self._step()
                except Exception:
                    # Not expected; the cache is off until the next attempt.
                    log.exception("form cache listener failed")
                    self._cache.disconnect()
                    await asyncio.sleep(RETRY)
        finally:
            self._cache.disconnect()

    async def _step(self) -> None:
        await self._listener.wait(_QUIET if self._cache.connected else RETRY)
        if self._closed:
            return
        if not self._listener.listening:
            self._cache.disconnect()
        elif self._cache.connected:
            # A notification, or a quiet while: emptying is right for the one and
            # harmless for the other.
            self._cache.clear()
        elif await self._triggers_installed():
            self._cache.connect()

    async def _triggers_installed(self) -> bool:
        """Without them (a database `intake migrate` has not brought up to date),
        changes are never announced: the cache stays off."""
        try:
            async with self._db.connection() as conn:
                return await schema_version(conn) >= TRIGGERS_SINCE
        except StorageUnavailable as error:
            log.debug("form cache: schema version unknown: %s", error)
            return False

    async def close(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
        await self._listener.close()
