"""The one thread that owns the connection. Every store operation is one function run
on it: one hop from the event loop, and writes from this process are serialized."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Concatenate, ParamSpec, TypeVar

from intake.adapters.sqlite.connection import MEMORY, connect
from intake.adapters.sqlite.errors import map_sqlite_errors
from intake.domain.errors import StorageUnavailable

P = ParamSpec("P")
T = TypeVar("T")


class Worker:
    def __init__(self, executor: ThreadPoolExecutor, conn: sqlite3.Connection) -> None:
        self._executor = executor
        self._conn = conn  # touched only by functions running on the executor's thread
        self._closed = False

    @classmethod
    async def start(cls, path: str, *, busy_timeout: float, create: bool = True) -> Worker:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="intake-sqlite")
        try:
            conn = await _hop(
                executor, _mapped(connect), path, busy_timeout=busy_timeout, create=create
            )
        except BaseException:
            executor.shutdown(wait=True)
            raise
        return cls(executor, conn)

    @classmethod
    def in_memory(cls, image: bytes) -> Worker:
        """A private database in memory holding `image` (a serialized database), made
        without awaiting: on its own thread, waited for here, a millisecond or two."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="intake-sqlite")
        try:
            conn = executor.submit(_mapped(_deserialized), image).result()
        except BaseException:
            executor.shutdown(wait=True)
            raise
        return cls(executor, conn)

    async def run(
        self,
        fn: Callable[Concatenate[sqlite3.Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Runs `fn(connection, ...)` on the worker thread, driver errors translated."""
        if self._closed:
            raise StorageUnavailable("the store is closed")
        return await _hop(self._executor, _mapped(fn), self._conn, *args, **kwargs)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            # Queued behind any operation already submitted, which finishes first.
            await _hop(self._executor, _mapped(sqlite3.Connection.close), self._conn)
        finally:
            self._executor.shutdown(wait=True)


def _deserialized(image: bytes) -> sqlite3.Connection:
    conn = connect(MEMORY)
    try:
        conn.deserialize(image)
    except BaseException:
        conn.close()
        raise
    return conn


def _mapped(fn: Callable[P, T]) -> Callable[P, T]:
    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        with map_sqlite_errors():
            return fn(*args, **kwargs)

    return call


async def _hop(
    executor: ThreadPoolExecutor, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    # A cancelled caller stops waiting, but a started call runs to its end on the thread,
    # so a transaction is never left open on the connection.
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, functools.partial(fn, *args, **kwargs))
