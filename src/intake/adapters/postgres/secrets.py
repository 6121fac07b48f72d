"""Secrets the processes of a deployment share (SecretRepository), in the database."""

from __future__ import annotations

from intake.adapters.postgres.database import Database
from intake.adapters.sealed_columns import opened_shared_secret, sealed_shared_secret
from intake.adapters.sql_rows import check_secret
from intake.ports.sealer import Sealer

# Two statements, not one: a statement reads the rows committed when it started, so a
# single INSERT ... ON CONFLICT DO NOTHING with a read of the table would not see a row
# that a concurrent insert committed while this one waited on it. The insert waits for
# such an insert to end; the SELECT, a statement of its own (autocommit), then sees it.
_STORE_IF_ABSENT = """
    INSERT INTO secrets (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING
"""
_READ_STORED = "SELECT value FROM secrets WHERE name = %s"


class PostgresSecrets:
    def __init__(self, db: Database, sealer: Sealer) -> None:
        self._db = db
        self._sealer = sealer

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        check_secret(name, candidate)
        sealed = sealed_shared_secret(name, bytes(candidate), self._sealer)
        async with self._db.connection() as conn:
            await conn.execute(_STORE_IF_ABSENT, (name, sealed))
            cursor = await conn.execute(_READ_STORED, (name,))
            row = await cursor.fetchone()
        if row is None:
            raise RuntimeError(f"secret {name!r} neither stored nor found")  # a bug
        return opened_shared_secret(name, bytes(row["value"]), self._sealer)
