"""The contract suite runs every test against each store: SQLite and PostgreSQL, and
the in-memory pipeline (InMemoryPipelineStore) for the modules of the pipeline's
ports. A backend knows how to open its store and how to make its commits fail; adding a
store is adding one class and one name to BACKENDS.

PostgreSQL: the session creates a database of its own on the server at
INTAKE_TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres, used
only to create and drop it), migrates it once, and each test starts from emptied
tables. No server there: the PostgreSQL tests skip, or fail under
INTAKE_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from pathlib import Path
from typing import Protocol, cast
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import anyio
import psycopg
import pytest
from psycopg import sql

from intake.adapters.memory import InMemoryPipelineStore
from intake.adapters.postgres import PostgresStore, open_postgres_store
from intake.adapters.postgres.migrations import TABLES
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite.key_file import key_file_beside
from intake.ports.store import Store
from tests.conftest import unavailable


class Backend(Protocol):
    async def open(self) -> Store: ...

    def failing_commits(self) -> AbstractAsyncContextManager[None]:
        """While inside, every commit of the opened store fails with StorageUnavailable."""
        ...


class MemoryBackend:
    """The in-memory pipeline (InMemoryPipelineStore): opened only for the modules of
    the pipeline's ports (PIPELINE_PORTS), whose tests reach nothing else of a store."""

    def __init__(self) -> None:
        self._store = InMemoryPipelineStore()

    async def open(self) -> Store:
        return cast(Store, self._store)

    @asynccontextmanager
    async def failing_commits(self) -> AsyncIterator[None]:
        self._store.submissions.fail_commits = 1_000_000
        try:
            yield
        finally:
            self._store.submissions.fail_commits = 0


class SqliteBackend:
    """A SQLite file in the test's directory. Given `template`, the file starts as a copy
    of that migrated empty database, without the cost of migrating it each time (a few
    dozen statements, each transaction synced to disk), and commits are not synced
    (`without_syncs`); without, the first open migrates it, as the store comes."""

    def __init__(self, tmp_path: Path, template: Path | None = None) -> None:
        self.path = tmp_path / "intake.db"
        self.url = f"sqlite:///{self.path}"  # an absolute path: sqlite:////tmp/...
        self._template = template

    async def open(self) -> Store:
        if self._template is None:
            return await open_sqlite_store(self.url)
        if not self.path.exists():
            copy_database(self._template, self.path)
        return await without_syncs(await open_sqlite_store(self.url))

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

    def execute(self, sql_text: str) -> None:
        with closing(sqlite3.connect(self.path, timeout=5)) as conn, conn:
            conn.execute(sql_text)


def copy_database(template: Path, path: Path) -> None:
    """A new file at `path` holding the database at `template`, and its key file beside
    it, each its owner's only as the store makes its files (it warns of, and tightens, a
    file others may read). The key comes with it: the copy is a store that has opened
    once, not one that must make and sync a key file of its own."""
    for source, copy in (
        (template, path),
        (key_file_beside(str(template)), key_file_beside(str(path))),
    ):
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "wb") as written, source.open("rb") as read:
            shutil.copyfileobj(read, written)


def _no_syncs(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA synchronous = OFF")


async def without_syncs(store: SqliteStore) -> SqliteStore:
    """`store`, whose commits no longer wait for the disk (PRAGMA synchronous, FULL as the
    store opens). What a power cut could lose no test here needs, and on a loaded
    machine each sync takes milliseconds, a dozen times in an HTTP test; the harness's
    PostgreSQL database turns off synchronous_commit for the same reason. The tests of
    what survives a killed process run the real `intake serve` (tests/faults)."""
    try:
        await store._worker.run(_no_syncs)
    except BaseException:
        await store.close()
        raise
    return store


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite database at the latest schema, made once per test process."""
    path = tmp_path_factory.mktemp("sqlite-template") / "intake.db"

    async def migrate() -> None:
        # Opening migrates it; closing checkpoints the journal into the one file.
        store = await open_sqlite_store(f"sqlite:///{path}")
        await store.close()

    anyio.run(migrate)
    return path


# PostgreSQL

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
_MIGRATED: set[str] = set()  # the session databases already migrated


def admin_url() -> str:
    return os.environ.get("INTAKE_TEST_DATABASE_URL") or DEFAULT_ADMIN_URL


def database_url(url: str, database: str | None = None, **query: str) -> str:
    """`url` with another database name, or more query parameters (application_name...)."""
    parts = urlsplit(url)
    joined = "&".join(part for part in (parts.query, urlencode(query, quote_via=quote)) if part)
    path = parts.path if database is None else f"/{database}"
    return urlunsplit(parts._replace(path=path, query=joined))


def _where(url: str) -> str:
    # Host and port only: the URL may carry a password.
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}"


def create_database(admin: str) -> str:
    """A new empty database on the server, UTF-8 whatever the server's default; its name."""
    name = f"intake_test_{secrets.token_hex(6)}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                sql.Identifier(name)
            )
        )
    return name


def drop_database(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        # FORCE: a store a failed test left open must not keep the database alive.
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    """The server's admin URL, once it answers; else skip (or fail, when required)."""
    url = admin_url()
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable at {_where(url)}: {error}")
    return url


@pytest.fixture(scope="session")
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """The session's database: created empty, migrated by the first store opened on it."""
    name = create_database(postgres_admin_url)
    try:
        yield database_url(postgres_admin_url, name)
    finally:
        drop_database(postgres_admin_url, name)


async def empty_tables(store: PostgresStore) -> None:
    """DELETE, not TRUNCATE: on a few rows it is a hundred times faster (TRUNCATE makes
    new files for every table and index and syncs them to disk)."""
    async with store._db.connection() as conn, conn.transaction():
        for table in TABLES:  # those that refer to others first
            await conn.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(table)))


class PostgresBackend:
    def __init__(self, url: str) -> None:
        self.url = url
        self._emptied = False

    async def open(self) -> Store:
        return await self.open_postgres()

    async def open_postgres(
        self,
        *,
        url: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        pool_timeout: float = 30.0,
    ) -> PostgresStore:
        """A store on the session's database (`url`: the same, with other parameters).
        A request may wait long for a connection (the service's default is 2 s), as a
        loaded machine can take a while to make one; tests of a full pool pass less."""
        store = await open_postgres_store(
            url or self.url, min_size=min_size, max_size=max_size, pool_timeout=pool_timeout
        )
        try:
            if self.url not in _MIGRATED:
                await store.migrate()
                _MIGRATED.add(self.url)
            if not self._emptied:
                # Once per test: a second store of the same test sees the first's rows.
                await empty_tables(store)
                self._emptied = True
        except BaseException:
            await store.close()
            raise
        return store

    @asynccontextmanager
    async def failing_commits(self) -> AsyncIterator[None]:
        # As for SQLite: the outbox insert fails, after the usage count, the idempotency
        # record and the submission are written, which must all be rolled back.
        await self.execute(
            "CREATE FUNCTION contract_fail() RETURNS trigger LANGUAGE plpgsql"
            " AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;"
            " CREATE TRIGGER contract_fail_outbox BEFORE INSERT ON outbox"
            " FOR EACH ROW EXECUTE FUNCTION contract_fail()"
        )
        try:
            yield
        finally:
            await self.execute(
                "DROP TRIGGER contract_fail_outbox ON outbox; DROP FUNCTION contract_fail()"
            )

    async def execute(self, statements: str) -> None:
        """Runs SQL over a connection of its own, as another process would."""
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute(statements.encode())  # bytes: no parameters, no %-parsing


BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Backend]] = {
    "memory": lambda request: MemoryBackend(),
    "sqlite": lambda request: SqliteBackend(
        request.getfixturevalue("tmp_path"), request.getfixturevalue("sqlite_template")
    ),
    # The database is made only when a PostgreSQL test runs.
    "postgres": lambda request: PostgresBackend(request.getfixturevalue("postgres_url")),
}
_SERVICES = {"postgres"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test of a store runs on each SQL store; on the in-memory pipeline too when
    its module is of the pipeline's ports (PIPELINE_PORTS = True)."""
    if "backend" not in metafunc.fixturenames:
        return
    in_memory = getattr(metafunc.module, "PIPELINE_PORTS", False)
    names = [name for name in BACKENDS if name != "memory" or in_memory]
    metafunc.parametrize(
        "backend",
        [
            pytest.param(name, marks=[pytest.mark.services] if name in _SERVICES else [])
            for name in names
        ],
        indirect=True,
    )


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param](request)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    opened = await backend.open()
    try:
        yield opened
    finally:
        await opened.close()
