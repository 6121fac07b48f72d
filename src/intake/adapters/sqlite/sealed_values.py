"""The sealed secrets of the database file (SealedValueRepository), for sealing them
again: read a page at a time, each written back in a transaction of its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from intake.adapters.sealed_columns import SEALED_COLUMNS, SealedColumn, sealed_column
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.worker import Worker
from intake.ports.sealed_values import StoredValue


def _values(
    conn: sqlite3.Connection, found: SealedColumn, after: str | None, limit: int
) -> list[StoredValue]:
    # Names from SEALED_COLUMNS only (sealed_column), never from a caller's text.
    query = (
        f"SELECT {found.key} AS row_key, {found.column} AS stored FROM {found.table}"  # noqa: S608
        f" WHERE {found.column} IS NOT NULL AND {found.key} > ? ORDER BY {found.key} LIMIT ?"
    )
    return [
        StoredValue(found.place(row["row_key"]), _as_bytes(row["stored"]))
        for row in conn.execute(query, (after or "", limit))
    ]


def _replace(
    conn: sqlite3.Connection, found: SealedColumn, value: StoredValue, sealed: str
) -> bool:
    new: str | bytes = sealed.encode("ascii") if found.binary else sealed
    old: str | bytes = value.stored if found.binary else value.stored.decode("utf-8")
    statement = (
        f"UPDATE {found.table} SET {found.column} = ?"  # noqa: S608 - listed names only
        f" WHERE {found.key} = ? AND {found.column} = ?"
    )
    with transaction(conn):
        return conn.execute(statement, (new, value.place.row, old)).rowcount == 1


def _as_bytes(stored: str | bytes) -> bytes:
    return stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)


class SqliteSealedValues:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    def columns(self) -> Sequence[tuple[str, str]]:
        return [(found.table, found.column) for found in SEALED_COLUMNS]

    async def values(
        self, table: str, column: str, after: str | None, limit: int
    ) -> list[StoredValue]:
        return await self._worker.run(_values, sealed_column(table, column), after, limit)

    async def replace(self, value: StoredValue, sealed: str) -> bool:
        found = sealed_column(value.place.table, value.place.column)
        return await self._worker.run(_replace, found, value, sealed)
