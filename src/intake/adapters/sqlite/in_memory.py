"""The whole store in a private SQLite database in memory: what library users and tests
run intake on without a file. It is the SQLite store itself, every query the one a file
gets, so it needs no contract of its own."""

from __future__ import annotations

import functools

from intake.adapters.sealing import process_sealer
from intake.adapters.sqlite.connection import MEMORY, connect
from intake.adapters.sqlite.migrations import migrate
from intake.adapters.sqlite.store import SqliteStore
from intake.adapters.sqlite.worker import Worker
from intake.ports.sealer import Sealer


@functools.cache
def _migrated_image() -> bytes:
    """An empty database at the latest schema, serialized: migrated once per process, so
    each new store is a copy of it rather than another few dozen statements."""
    conn = connect(MEMORY)
    try:
        migrate(conn)
        return conn.serialize()
    finally:
        conn.close()


class InMemoryStore(SqliteStore):
    """An empty, migrated store in memory, made at once (no await): gone when closed.
    `sealer` seals the secrets it keeps (None: the process's own key)."""

    def __init__(self, *, sealer: Sealer | None = None) -> None:
        super().__init__(Worker.in_memory(_migrated_image()), sealer=sealer or process_sealer())
        self._open = True

    @property
    def closed(self) -> bool:
        return not self._open

    async def close(self) -> None:
        self._open = False
        await super().close()
