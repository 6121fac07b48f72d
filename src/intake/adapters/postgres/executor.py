"""The statements of the `sql` repositories over the pool: each on a connection taken
and given back at once, or, in a transaction, all on one connection held to its end.
Statements are written in sqlite3's placeholder styles and rendered for psycopg once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Concatenate, ParamSpec, TypeVar

import psycopg

from intake.adapters.postgres.database import Connection, Database
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sql.executor import Params, Transaction
from intake.adapters.sql_rows import Row, RowMapper
from intake.adapters.sql_statements import for_psycopg

P = ParamSpec("P")
T = TypeVar("T")

# The statements are the code's own, a few hundred; bounded all the same, so that a
# statement built from data by mistake could not grow a process without end.
_rendered = functools.lru_cache(maxsize=1024)(for_psycopg)


def _checked(params: Params) -> Params:
    """PostgreSQL text cannot hold NUL: ValueError, never a storage error."""
    for value in params.values() if isinstance(params, Mapping) else params:
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("PostgreSQL text cannot hold NUL (U+0000)")
    return params


async def _fetch_one(conn: Connection, statement: str, params: Params) -> Row | None:
    cursor = await conn.execute(_rendered(statement), _checked(params))
    return await cursor.fetchone()


async def _fetch_all(conn: Connection, statement: str, params: Params) -> list[Row]:
    cursor = await conn.execute(_rendered(statement), _checked(params))
    return list(await cursor.fetchall())


async def _execute(conn: Connection, statement: str, params: Params) -> int:
    cursor = await conn.execute(_rendered(statement), _checked(params))
    return cursor.rowcount


async def _execute_many(conn: Connection, statement: str, batch: Iterable[Params]) -> int:
    checked = [_checked(params) for params in batch]
    if not checked:
        return 0
    cursor = conn.cursor()
    await cursor.executemany(_rendered(statement), checked)
    return cursor.rowcount  # summed over the batch


class PostgresExecutor:
    rows: RowMapper = ROW_MAPPER
    locks_rows = True

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        async with self._db.connection() as conn:
            return await _fetch_one(conn, statement, params)

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        async with self._db.connection() as conn:
            return await _fetch_all(conn, statement, params)

    async def execute(self, statement: str, params: Params = ()) -> int:
        async with self._db.connection() as conn:
            return await _execute(conn, statement, params)

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        async with self._db.connection() as conn:
            return await _execute_many(conn, statement, batch)

    async def transaction(
        self,
        steps: Callable[Concatenate[Transaction, P], Coroutine[object, None, T]],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        async with self._db.connection() as conn, conn.transaction():
            tx = _Transaction(conn)
            result = await steps(tx, *args, **kwargs)
            if tx.discarded:
                raise psycopg.Rollback  # caught by conn.transaction(), which rolls back
        return result

    async def forget_erased(self) -> None:
        pass


class _Transaction:
    rows: RowMapper = ROW_MAPPER
    locks_rows = True
    discarded = False

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def discard(self) -> None:
        self.discarded = True

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        return await _fetch_one(self._conn, statement, params)

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        return await _fetch_all(self._conn, statement, params)

    async def execute(self, statement: str, params: Params = ()) -> int:
        return await _execute(self._conn, statement, params)

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        return await _execute_many(self._conn, statement, batch)
