"""The sealed secrets of the database (SealedValueRepository), for sealing them again:
read a page at a time, each written back by one statement, its own transaction."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters.postgres.database import Database
from intake.adapters.sealed_columns import SEALED_COLUMNS, SealedColumn, sealed_column
from intake.ports.sealed_values import StoredValue


def _values_query(found: SealedColumn) -> str:
    # Names from SEALED_COLUMNS only (sealed_column), never from a caller's text.
    return (
        f"SELECT {found.key} AS row_key, {found.column} AS stored FROM {found.table}"  # noqa: S608
        f" WHERE {found.column} IS NOT NULL AND {found.key} > %s"
        f' ORDER BY {found.key} COLLATE "C" LIMIT %s'
    )


def _replace_statement(found: SealedColumn) -> str:
    return (
        f"UPDATE {found.table} SET {found.column} = %s"  # noqa: S608 - listed names only
        f" WHERE {found.key} = %s AND {found.column} = %s"
    )


def _as_bytes(stored: str | bytes) -> bytes:
    return stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)


class PostgresSealedValues:
    def __init__(self, db: Database) -> None:
        self._db = db

    def columns(self) -> Sequence[tuple[str, str]]:
        return [(found.table, found.column) for found in SEALED_COLUMNS]

    async def values(
        self, table: str, column: str, after: str | None, limit: int
    ) -> list[StoredValue]:
        found = sealed_column(table, column)
        rows = await self._db.fetch_all(_values_query(found), (after or "", limit))
        return [StoredValue(found.place(row["row_key"]), _as_bytes(row["stored"])) for row in rows]

    async def replace(self, value: StoredValue, sealed: str) -> bool:
        found = sealed_column(value.place.table, value.place.column)
        new: str | bytes = sealed.encode("ascii") if found.binary else sealed
        old: str | bytes = value.stored if found.binary else value.stored.decode("utf-8")
        changed = await self._db.execute(_replace_statement(found), (new, value.place.row, old))
        return changed == 1
