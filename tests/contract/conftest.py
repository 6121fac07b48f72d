"""The contract suite runs every test against each store: the in-memory fake and the
real adapters. A backend knows how to open its store and how to make its commits fail;
adding PostgreSQL is adding one class and one name to BACKENDS."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from pathlib import Path
from typing import Protocol

import pytest

from intake.adapters.memory import InMemoryStore
from intake.adapters.sqlite import open_sqlite_store
from intake.ports.store import Store


class Backend(Protocol):
    async def open(self) -> Store: ...

    def failing_commits(self) -> AbstractAsyncContextManager[None]:
        """While inside, every commit of the opened store fails with StorageUnavailable."""
        ...


class MemoryBackend:
    def __init__(self, tmp_path: Path) -> None:
        self._store = InMemoryStore()

    async def open(self) -> Store:
        return self._store

    @asynccontextmanager
    async def failing_commits(self) -> AsyncIterator[None]:
        self._store.submissions.fail_commits = 1_000_000
        try:
            yield
        finally:
            self._store.submissions.fail_commits = 0


class SqliteBackend:
    def __init__(self, tmp_path: Path) -> None:
        self.path = tmp_path / "intake.db"
        self.url = f"sqlite:///{self.path}"  # an absolute path: sqlite:////tmp/...

    async def open(self) -> Store:
        return await open_sqlite_store(self.url)

    @asynccontextmanager
    async def failing_commits(self) -> AsyncIterator[None]:
        # A trigger fails the outbox insert, the second write of a commit: the submission
        # (and the usage count) are already written and must be rolled back. Installed
        # from a second connection, as another process could.
        self.execute(
            "CREATE TRIGGER contract_fail_outbox BEFORE INSERT ON outbox"
            " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
        try:
            yield
        finally:
            self.execute("DROP TRIGGER contract_fail_outbox")

    def execute(self, sql: str) -> None:
        with closing(sqlite3.connect(self.path, timeout=5)) as conn, conn:
            conn.execute(sql)


BACKENDS: dict[str, Callable[[Path], Backend]] = {
    "memory": MemoryBackend,
    "sqlite": SqliteBackend,
}


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return BACKENDS[request.param](tmp_path)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.close()
