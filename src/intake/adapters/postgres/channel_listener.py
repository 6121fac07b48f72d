"""The relay's wake-up: LISTEN for the serving processes' pg_notify('intake_outbox')
(relay_notifier.py), sent after their commits.

On a connection of its own, not the pool's: a LISTEN belongs to one session, and a
pooled connection serves other work between waits (and is reset by the pool). The
connection is opened on the first wait and kept; notifications that arrive between two
waits queue on it, so the next wait returns at once. Nothing about it is needed to
serve: when it cannot be had, the wait falls back to its timeout, and the next wait
tries again.

The form cache's invalidation (form_changes_listener.py) follows its own channel with a
ChannelListener of its own.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.rows import TupleRow

log = logging.getLogger("intake.postgres")

OUTBOX_CHANNEL = "intake_outbox"
_APPLICATION_NAME = "intake-listen"


class ChannelListener:
    def __init__(
        self,
        conninfo: str,
        channel: str = OUTBOX_CHANNEL,
        application_name: str = _APPLICATION_NAME,
    ) -> None:
        self._conninfo = conninfo
        self._channel = channel
        self._application_name = application_name
        self._conn: AsyncConnection[TupleRow] | None = None
        # One wait at a time reads the connection; a second waits its turn (within its
        # own timeout).
        self._lock = asyncio.Lock()
        self._reader: asyncio.Task[None] | None = None  # the wait's read, for close()
        self._closed = False

    @property
    def listening(self) -> bool:
        """Whether the connection is up, as far as the last wait knows."""
        return self._conn is not None

    async def wait(self, seconds: float) -> None:
        """Returns on a notification, or after `seconds`. The wait that starts
        listening returns at once: what was committed before it was announced to no
        one, so the caller should look."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, seconds)
        try:
            async with asyncio.timeout_at(deadline):
                await self._lock.acquire()
        except TimeoutError:
            return
        try:
            if self._closed:
                await asyncio.sleep(max(0.0, deadline - loop.time()))
                return
            if self._conn is not None:
                await self._read(self._conn, max(0.0, deadline - loop.time()))
                return
            self._conn = await self._listen(deadline)
        finally:
            self._lock.release()
        if self._conn is None:
            # No connection: the timeout is the fallback (slept without the lock, so
            # close() need not wait for it).
            await asyncio.sleep(max(0.0, deadline - loop.time()))

    async def _read(self, conn: AsyncConnection[TupleRow], seconds: float) -> None:
        # In a task of its own, so that close() can stop it without cancelling the
        # caller: the caller just returns, as after a notification.
        reader = asyncio.create_task(_notified(conn, seconds))
        self._reader = reader
        try:
            await asyncio.wait({reader})
        except asyncio.CancelledError:
            reader.cancel()  # the caller gave up waiting; the connection stays
            raise
        finally:
            self._reader = None
        if reader.cancelled():
            return  # close() stopped it
        error = reader.exception()
        if isinstance(error, psycopg.Error):
            # The connection broke (a restart, a killed backend): the caller looks now,
            # and the next wait listens afresh.
            log.warning(
                "listener connection lost",
                extra={"channel": self._channel, "error": str(error)},
            )
            await self._drop()
        elif error is not None:
            raise error

    async def _listen(self, deadline: float) -> AsyncConnection[TupleRow] | None:
        conn: AsyncConnection[TupleRow] | None = None
        try:
            async with asyncio.timeout_at(deadline):
                conn = await AsyncConnection.connect(
                    self._conninfo,
                    autocommit=True,
                    fallback_application_name=self._application_name,
                )
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
        except (psycopg.Error, TimeoutError) as error:
            if conn is not None:
                await conn.close()
            log.warning(
                "listener unavailable",
                extra={"channel": self._channel, "error": str(error) or type(error).__name__},
            )
            return None
        except BaseException:
            # Cancelled half-way: a connection must not be left open behind.
            if conn is not None:
                await conn.close()
            raise
        return conn

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(psycopg.Error):
                await conn.close()

    async def close(self) -> None:
        """Ends a wait in progress (it returns), closes the connection; later waits
        only sleep."""
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
        async with self._lock:  # the wait in progress, if any, has let go of it
            await self._drop()


async def _notified(conn: AsyncConnection[TupleRow], seconds: float) -> None:
    async for _ in conn.notifies(timeout=seconds, stop_after=1):
        pass
    # Several commits since the last wait are one wake-up: the caller reads the whole
    # outbox anyway.
    async for _ in conn.notifies(timeout=0):
        pass
