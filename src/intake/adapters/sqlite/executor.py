"""The statements of the `sql` repositories on the worker thread: a statement alone is one
hop, and so is a transaction. Its steps run on the thread from its BEGIN IMMEDIATE to its
end, each statement at once when called (their coroutine finishes at its first step), so
no other caller's function runs inside it and it costs one hop, not one a statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Coroutine, Iterable, Sequence
from contextlib import suppress
from typing import Concatenate, ParamSpec, TypeVar

from intake.adapters.sql.executor import Params, Transaction
from intake.adapters.sql_rows import Row, RowMapper
from intake.adapters.sqlite.connection import truncate_wal
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker

P = ParamSpec("P")
T = TypeVar("T")
_Steps = Callable[[Transaction], Coroutine[object, None, T]]


def _fetch_one(conn: sqlite3.Connection, statement: str, params: Params) -> Row | None:
    row: Row | None = conn.execute(statement, params).fetchone()
    return row


def _fetch_all(conn: sqlite3.Connection, statement: str, params: Params) -> list[Row]:
    return list(conn.execute(statement, params))


def _execute(conn: sqlite3.Connection, statement: str, params: Params) -> int:
    return conn.execute(statement, params).rowcount


def _execute_many(conn: sqlite3.Connection, statement: str, batch: list[Params]) -> int:
    return conn.executemany(statement, batch).rowcount if batch else 0


class _OnWorker:
    """A transaction's statements, on the worker thread: each runs when called."""

    rows: RowMapper = ROW_MAPPER
    locks_rows = False
    discarded = False

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def discard(self) -> None:
        self.discarded = True

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        return _fetch_one(self._conn, statement, params)

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        return _fetch_all(self._conn, statement, params)

    async def execute(self, statement: str, params: Params = ()) -> int:
        return _execute(self._conn, statement, params)

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        return _execute_many(self._conn, statement, list(batch))


def _in_transaction(conn: sqlite3.Connection, steps: _Steps[T]) -> T:
    tx = _OnWorker(conn)
    # The write lock first: what the transaction reads cannot change before it writes.
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = _finished(steps(tx))
        if not tx.discarded:
            conn.execute("COMMIT")
    finally:
        # Not committed, or a COMMIT that failed and left the transaction open. A failed
        # rollback (the disk went away) must not hide the first error; SQLite undoes the
        # unfinished transaction from its journal on next open.
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
    return result


def _finished(steps: Coroutine[object, None, T]) -> T:
    """What the steps return: they await nothing but statements, which run at once."""
    try:
        steps.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    steps.close()
    raise RuntimeError("a transaction's steps awaited something other than its statements")


class SqliteExecutor:
    rows: RowMapper = ROW_MAPPER
    locks_rows = False

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        return await self._worker.run(_fetch_one, statement, params)

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        return await self._worker.run(_fetch_all, statement, params)

    async def execute(self, statement: str, params: Params = ()) -> int:
        return await self._worker.run(_execute, statement, params)

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        # Listed here: the thread reads no iterator of the caller's.
        return await self._worker.run(_execute_many, statement, list(batch))

    async def transaction(
        self,
        steps: Callable[Concatenate[Transaction, P], Coroutine[object, None, T]],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        def bound(tx: Transaction) -> Coroutine[object, None, T]:
            return steps(tx, *args, **kwargs)

        return await self._worker.run(_in_transaction, bound)

    async def forget_erased(self) -> None:
        await self._worker.run(truncate_wal)
