"""Secrets the processes of a deployment share (SecretRepository), and the sealed values
of the database (SealedValueRepository), read a page at a time for sealing them again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from intake.adapters.sealed_columns import (
    SEALED_COLUMNS,
    SealedColumn,
    opened_shared_secret,
    sealed_column,
    sealed_shared_secret,
)
from intake.adapters.sql.executor import Executor, Transaction
from intake.adapters.sql_rows import Row, check_secret
from intake.ports.sealed_values import StoredValue
from intake.ports.sealer import Sealer

_STORE_IF_ABSENT = """
    INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
    ON CONFLICT (name) DO NOTHING
"""
_READ_STORED = "SELECT value FROM secrets WHERE name = ?"


class SqlSecrets:
    def __init__(self, ex: Executor, sealer: Sealer) -> None:
        self._ex = ex
        self._sealer = sealer

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        sealed = sealed_shared_secret(name, bytes(candidate), self._sealer)
        now = self._ex.rows.codec.time(datetime.now(UTC))

        # Two statements: another process's insert is kept. On SQLite the transaction
        # holds the write lock, so that insert committed before or waits for this one; on
        # PostgreSQL the insert waits for it, and the read, a statement of its own (READ
        # COMMITTED), then sees it, where one statement would read what was committed
        # when it started.
        async def steps(tx: Transaction) -> Row | None:
            await tx.execute(_STORE_IF_ABSENT, (name, sealed, now))
            return await tx.fetch_one(_READ_STORED, (name,))

        row = await self._ex.transaction(steps)
        if row is None:
            raise RuntimeError(f"secret {name!r} neither stored nor found")  # a bug
        return opened_shared_secret(name, bytes(row["value"]), self._sealer)


def _values_query(found: SealedColumn) -> str:
    # Names from SEALED_COLUMNS only (sealed_column), never from a caller's text. Every
    # key orders bytewise in both stores (PostgreSQL's are COLLATE "C").
    return (
        f"SELECT {found.key} AS row_key, {found.column} AS stored FROM {found.table}"  # noqa: S608
        f" WHERE {found.column} IS NOT NULL AND {found.key} > ? ORDER BY {found.key} LIMIT ?"
    )


def _replace_statement(found: SealedColumn) -> str:
    return (
        f"UPDATE {found.table} SET {found.column} = ?"  # noqa: S608 - listed names only
        f" WHERE {found.key} = ? AND {found.column} = ?"
    )


def _as_bytes(stored: str | bytes) -> bytes:
    return stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)


class SqlSealedValues:
    """Each value is written back by one statement, its own transaction, and only if it
    is still the one read."""

    def __init__(self, ex: Executor) -> None:
        self._ex = ex

    def columns(self) -> Sequence[tuple[str, str]]:
        return [(found.table, found.column) for found in SEALED_COLUMNS]

    async def values(
        self, table: str, column: str, after: str | None, limit: int
    ) -> list[StoredValue]:
        found = sealed_column(table, column)
        rows = await self._ex.fetch_all(_values_query(found), (after or "", limit))
        return [StoredValue(found.place(row["row_key"]), _as_bytes(row["stored"])) for row in rows]

    async def replace(self, value: StoredValue, sealed: str) -> bool:
        found = sealed_column(value.place.table, value.place.column)
        new: str | bytes = sealed.encode("ascii") if found.binary else sealed
        old: str | bytes = value.stored if found.binary else value.stored.decode("utf-8")
        changed = await self._ex.execute(_replace_statement(found), (new, value.place.row, old))
        return changed == 1
