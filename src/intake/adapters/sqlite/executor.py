"""The statements of the `sql` repositories on the worker thread: one hop each. A
transaction holds the worker's turn from its BEGIN IMMEDIATE to its end, so that no
other caller's function runs inside it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TypeVar

from intake.adapters.sql.executor import Params, Transaction
from intake.adapters.sql_rows import Row, RowMapper
from intake.adapters.sqlite.connection import truncate_wal
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker

T = TypeVar("T")
_P = TypeVar("_P", Params, list[Params])
_Call = Callable[[sqlite3.Connection, str, _P], T]


def _fetch_one(conn: sqlite3.Connection, statement: str, params: Params) -> Row | None:
    row: Row | None = conn.execute(statement, params).fetchone()
    return row


def _fetch_all(conn: sqlite3.Connection, statement: str, params: Params) -> list[Row]:
    return list(conn.execute(statement, params))


def _execute(conn: sqlite3.Connection, statement: str, params: Params) -> int:
    return conn.execute(statement, params).rowcount


def _execute_many(conn: sqlite3.Connection, statement: str, batch: list[Params]) -> int:
    return conn.executemany(statement, batch).rowcount if batch else 0


def _begin(conn: sqlite3.Connection) -> None:
    # The write lock first: what the transaction reads cannot change before it writes.
    conn.execute("BEGIN IMMEDIATE")


def _end(conn: sqlite3.Connection, commit: bool) -> None:
    try:
        if commit:
            conn.execute("COMMIT")
    finally:
        # Not committed, or a COMMIT that failed and left the transaction open. A failed
        # rollback (the disk went away) must not hide the first error; SQLite undoes the
        # unfinished transaction from its journal on next open.
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")


class _Statements:
    rows: RowMapper = ROW_MAPPER
    locks_rows = False

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def _call(self, fn: _Call[_P, T], statement: str, params: _P) -> T:
        return await self._worker.run(fn, statement, params)

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        return await self._call(_fetch_one, statement, params)

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        return await self._call(_fetch_all, statement, params)

    async def execute(self, statement: str, params: Params = ()) -> int:
        return await self._call(_execute, statement, params)

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        # Listed here: the thread reads no iterator of the caller's.
        return await self._call(_execute_many, statement, list(batch))


class _Transaction(_Statements):
    discarded = False

    async def _call(self, fn: _Call[_P, T], statement: str, params: _P) -> T:
        return await self._worker.run_in_turn(fn, statement, params)

    def discard(self) -> None:
        self.discarded = True


class SqliteExecutor(_Statements):
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        worker = self._worker
        async with worker.turn:
            worker.holder = asyncio.current_task()
            tx = _Transaction(worker)
            try:
                await worker.run_in_turn(_begin)
                yield tx
            except BaseException:
                # On the thread's queue before the turn is given up, even if this caller
                # is cancelled again meanwhile: the next caller's function runs after it.
                await worker.run_in_turn(_end, False)
                raise
            finally:
                worker.holder = None
            await worker.run_in_turn(_end, not tx.discarded)

    async def forget_erased(self) -> None:
        await self._worker.run(truncate_wal)
