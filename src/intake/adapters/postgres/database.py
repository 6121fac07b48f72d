"""The connection pool, and the one way the repositories reach it.

Connections are in autocommit: a read is one round trip (no BEGIN, no COMMIT), and a
write that needs more than one statement says so with `conn.transaction()`. psycopg
prepares a statement on a connection once it has run it a few times, so the hot queries
are parsed and planned once per connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TypeAlias

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from intake.adapters.postgres.errors import map_postgres_errors
from intake.domain.errors import StorageUnavailable

Connection: TypeAlias = AsyncConnection[DictRow]
QueryParams: TypeAlias = Mapping[str, object] | Sequence[object] | None

_SCHEMES = ("postgresql://", "postgres://")
# Said to libpq, unless the URL names the connections itself: pg_stat_activity shows them.
_APPLICATION_NAME = "intake"
# Seconds the pool keeps re-making one lost connection before it starts over.
RECONNECT_TIMEOUT = 5.0


def check_url(url: str) -> str:
    if not url.startswith(_SCHEMES):
        raise ValueError("not a PostgreSQL URL (postgresql://user@host:port/database)")
    return url


class Database:
    def __init__(self, pool: AsyncConnectionPool[Connection], url: str) -> None:
        self._pool = pool
        # For a connection of its own outside the pool: the relay's LISTEN.
        self.url = url
        self._closed = False
        self._check: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        min_size: int,
        max_size: int,
        pool_timeout: float,
        open_timeout: float,
        wait_for_server: bool = False,
    ) -> Database:
        """With `wait_for_server`, a server that cannot be reached yet does not fail the
        open: the pool keeps trying in the background, and until it connects each use
        fails with StorageUnavailable after `pool_timeout`."""
        check_url(url)
        if not wait_for_server:
            await _probe(url, open_timeout)
        pool = AsyncConnectionPool(
            url,
            # Opened below, in the event loop: opening in the constructor is deprecated.
            open=False,
            connection_class=AsyncConnection[DictRow],
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "fallback_application_name": _APPLICATION_NAME,
            },
            min_size=min_size,
            max_size=max_size,
            # How long a request waits for a free connection: a full pool answers 503
            # at once rather than queueing requests behind it.
            timeout=pool_timeout,
            # A lost connection is re-made with a doubling back-off (1, 2, 4, ... s) for
            # this long, then given up and made afresh when a request needs one. Left at
            # the pool's 5 minutes, the back-off grows as long as the outage, and a
            # server back after a minute would wait for up to another minute.
            reconnect_timeout=RECONNECT_TIMEOUT,
            name="intake",
        )
        try:
            with map_postgres_errors():
                await pool.open(wait=not wait_for_server, timeout=open_timeout)
        except BaseException:
            await pool.close()
            raise
        return cls(pool, url)

    @property
    def pool_timeout(self) -> float:
        """Seconds a request waits for a free connection before it is answered 503."""
        return self._pool.timeout

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection of the pool, driver errors translated. The pool takes it back
        after a rollback of whatever was left open, or replaces it if it broke."""
        if self._closed:
            raise StorageUnavailable("postgres: the store is closed")
        broken = False
        try:
            with map_postgres_errors():
                async with self._pool.connection() as conn:
                    try:
                        yield conn
                    except psycopg.OperationalError as error:
                        # A terminated backend says so before it closes: the driver may
                        # not have seen the close yet when the error arrives.
                        broken = conn.broken or (error.sqlstate or "").startswith("57P")
                        raise
        finally:
            if broken:
                await self._check_idle()

    async def _check_idle(self) -> None:
        """One connection died (a restarted server, a killed backend): its idle siblings
        likely did too. Have the pool test them and replace the dead ones now, so the
        next request gets a live one rather than the next failure. One check at a time;
        shielded, so that a cancelled caller does not cut it short."""
        if self._check is None or self._check.done():
            self._check = asyncio.create_task(self._pool.check())
        with suppress(Exception):
            await asyncio.shield(self._check)

    async def fetch_one(
        self, query: str, params: QueryParams = None, *, prepare: bool | None = None
    ) -> DictRow | None:
        """`prepare=False`: planned for these values each time, never prepared (a plan
        made for any value can be far worse for the one given: a search's text)."""
        async with self.connection() as conn:
            cursor = await conn.execute(query, params, prepare=prepare)
            return await cursor.fetchone()

    async def fetch_all(
        self, query: str, params: QueryParams = None, *, prepare: bool | None = None
    ) -> list[DictRow]:
        """As fetch_one, every row."""
        async with self.connection() as conn:
            cursor = await conn.execute(query, params, prepare=prepare)
            return await cursor.fetchall()

    async def execute(self, query: str, params: QueryParams = None) -> int:
        """Runs one statement; returns the number of rows it changed."""
        async with self.connection() as conn:
            cursor = await conn.execute(query, params)
            return cursor.rowcount

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._check is not None:
            with suppress(Exception):
                await self._check
        await self._pool.close()


async def _probe(url: str, seconds: float) -> None:
    """One connection before the pool's: a wrong password, host or database name fails
    the open at once, with the server's reason. The pool itself would retry in the
    background until its timeout and then say only that it is not ready."""
    try:
        with map_postgres_errors():
            async with asyncio.timeout(seconds):
                conn = await AsyncConnection.connect(
                    url, fallback_application_name=_APPLICATION_NAME
                )
    except TimeoutError as error:
        raise StorageUnavailable(f"postgres: no connection within {seconds} s") from error
    await conn.close()
