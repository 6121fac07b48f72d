"""What only the SQLite store has: a file, URLs, migrations, locks, and other processes."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from intake.adapters import sql_statements as sql
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite import dialect as sqlite_dialect
from intake.adapters.sqlite import store as sqlite_store
from intake.adapters.sqlite.mapping import time_text
from intake.adapters.sqlite.migrations import MIGRATIONS
from intake.adapters.submission_pages import page_statement
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import RETENTION
from intake.domain.listing import SubmissionFilter, SubmissionQuery
from intake.domain.model import SubmissionStatus
from intake.ports.forms import FormContext
from intake.ports.store_opening import StoreNotPrepared
from intake.ports.submissions import Committed, OutboxRow, QuotaReached
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    WORKSPACE_ID,
    api_key,
    event_for,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
    workspace,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "intake.db"


@pytest.fixture
def url(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
async def store(url: str) -> AsyncIterator[SqliteStore]:
    opened = await open_sqlite_store(url)
    try:
        yield opened
    finally:
        await opened.close()


def _query(path: Path, sql_text: str, *params: object) -> list[tuple[object, ...]]:
    """Reads the file over a connection of its own, as another process would."""
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.execute(sql_text, params))


async def test_a_reopened_file_keeps_everything(url: str) -> None:
    sub = submission(1)
    first = await open_sqlite_store(url)
    try:
        await seed(first)
        await first.api_keys.add(api_key())
        await first.submissions.commit(plan(sub, idempotency=record(sub), charge=quota(5)))
    finally:
        await first.close()

    again = await open_sqlite_store(url)
    try:
        assert await again.migrate() == []
        assert await again.workspaces.list() == [workspace()]
        assert await again.forms.resolve_public_key(form().public_form_key) == FormContext(
            form(), workspace()
        )
        assert await again.api_keys.get("key_1") == api_key()
        assert await stored(again) == [sub]
        assert await again.submissions.outbox() == [OutboxRow(event_for(sub))]
        found = await again.submissions.find_idempotency(
            record(sub).scope, record(sub).key, sub.created_at - RETENTION
        )
        assert found == record(sub)
        assert await again.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    finally:
        await again.close()


async def test_opening_a_new_file_applies_and_records_every_migration(
    store: SqliteStore, path: Path
) -> None:
    rows = _query(path, "SELECT version, name, applied_at FROM schema_migrations")

    assert [(v, n) for v, n, _ in rows] == [(m.version, m.name) for m in MIGRATIONS]
    assert all(isinstance(at, str) and at.endswith("Z") for _, _, at in rows)


async def test_the_first_migrate_reports_what_opening_applied_and_later_ones_nothing(
    store: SqliteStore,
) -> None:
    assert await store.migrate() == [m.name for m in MIGRATIONS]
    assert await store.migrate() == []


async def test_the_file_is_in_write_ahead_log_mode(store: SqliteStore, path: Path) -> None:
    assert _query(path, "PRAGMA journal_mode") == [("wal",)]


async def test_a_missing_directory_is_created(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c" / "intake.db"

    opened = await open_sqlite_store(f"sqlite:///{deep}")
    await opened.close()

    assert deep.is_file()


async def test_a_relative_url_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    opened = await open_sqlite_store("sqlite:///.intake/intake.db")
    await opened.close()

    assert (tmp_path / ".intake" / "intake.db").is_file()


async def test_an_in_memory_url_opens_a_working_store() -> None:
    opened = await open_sqlite_store("sqlite:///:memory:")
    try:
        await seed(opened)
        assert await opened.submissions.commit(plan(submission(1), charge=quota(1))) == (
            Committed()
        )
        assert await stored(opened) == [submission(1)]
    finally:
        await opened.close()


@pytest.mark.parametrize(
    "bad_url",
    ["postgresql://localhost/intake", "sqlite://intake.db", "sqlite:///", "sqlite:///x.db?mode=ro"],
)
async def test_a_url_that_is_not_a_sqlite_file_is_refused(bad_url: str) -> None:
    with pytest.raises(ValueError, match="sqlite"):
        await open_sqlite_store(bad_url)


@pytest.fixture
def not_a_database(tmp_path: Path) -> Path:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database, " * 100)
    return garbage


async def test_a_file_that_is_not_a_database_raises_storage_unavailable(
    not_a_database: Path,
) -> None:
    with pytest.raises(StorageUnavailable):
        await open_sqlite_store(f"sqlite:///{not_a_database}")


async def test_a_directory_that_cannot_be_made_raises_storage_unavailable(
    not_a_database: Path,
) -> None:
    # A file stands where the directory would go.
    with pytest.raises(StorageUnavailable):
        await open_sqlite_store(f"sqlite:///{not_a_database / 'intake.db'}")


async def test_a_write_locked_database_raises_storage_unavailable_and_writes_nothing(
    path: Path, url: str
) -> None:
    opened = await open_sqlite_store(url, busy_timeout=0.05)
    try:
        await seed(opened)
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            with pytest.raises(StorageUnavailable, match="locked"):
                await opened.submissions.commit(plan(submission(1), charge=quota(5)))
            other.execute("ROLLBACK")

        assert await stored(opened) == []
        assert await opened.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
        assert await opened.submissions.commit(plan(submission(1), charge=quota(5))) == (
            Committed()
        )
    finally:
        await opened.close()


async def test_two_stores_on_one_file_share_the_quota_exactly(url: str) -> None:
    # Two connections, two threads: as two worker processes of `intake serve` would be.
    one = await open_sqlite_store(url)
    two = await open_sqlite_store(url)
    try:
        await seed(one)
        subs = [submission(n) for n in range(20)]
        results = await asyncio.gather(
            *(
                (one if n % 2 else two).submissions.commit(plan(sub, charge=quota(7)))
                for n, sub in enumerate(subs)
            )
        )

        assert results.count(Committed()) == 7
        assert results.count(QuotaReached()) == 13
        assert len(await stored(one)) == 7
        assert await two.workspaces.usage(WORKSPACE_ID, PERIOD) == 7
    finally:
        await one.close()
        await two.close()


async def test_two_stores_on_one_file_commit_one_key_once(url: str) -> None:
    one = await open_sqlite_store(url)
    two = await open_sqlite_store(url)
    try:
        await seed(one)
        subs = [submission(n) for n in range(10)]
        results = await asyncio.gather(
            *(
                (one if n % 2 else two).submissions.commit(plan(sub, idempotency=record(sub)))
                for n, sub in enumerate(subs)
            )
        )

        assert results.count(Committed()) == 1
        assert len(await stored(two)) == 1
    finally:
        await one.close()
        await two.close()


async def test_stored_times_sort_as_text_in_time_order(store: SqliteStore, path: Path) -> None:
    await seed(store)
    early = submission(1, created_at=datetime(2026, 1, 15, 9, 0, 0, 5, tzinfo=UTC))
    late = submission(2, created_at=datetime(2026, 1, 15, 10, 0, tzinfo=UTC))
    for sub in (late, early):
        await store.submissions.commit(plan(sub))

    rows = _query(path, "SELECT created_at FROM submissions ORDER BY created_at")

    assert rows == [("2026-01-15T09:00:00.000005Z",), ("2026-01-15T10:00:00.000000Z",)]


def _page(query: SubmissionQuery) -> tuple[str, tuple[object, ...]]:
    statement, params = page_statement(query, time_text, sqlite_dialect.SEARCH)
    return statement, tuple(params)


ONLY_SPAM = SubmissionFilter(frozenset({SubmissionStatus.SPAM}))


# Each hot query seeks with an index; listing the outbox walks its primary key in order.
HOT_QUERIES = {
    "resolve_public_key": (sql.RESOLVE_PUBLIC_KEY, ("pk",), "SEARCH"),
    "resolve_id": (sql.RESOLVE_ID, (FORM_ID,), "SEARCH"),
    "find_by_hash": (sql.FIND_API_KEY, (b"h",), "SEARCH"),
    "find_idempotency": (sql.FIND_IDEMPOTENCY, ("s", "k", "2026"), "SEARCH"),
    "usage": (sqlite_store._USAGE_STATEMENTS.usage, (WORKSPACE_ID, PERIOD), "SEARCH"),
    "iterate": (*_page(SubmissionQuery(FORM_ID, after="", limit=500, oldest_first=True)), "SEARCH"),
    "page": (*_page(SubmissionQuery(FORM_ID, after="sub_z")), "SEARCH"),
    "page_by_status": (
        *_page(SubmissionQuery(FORM_ID, ONLY_SPAM)),
        "SEARCH",
    ),
    "outbox": (sql.OUTBOX, (100,), "SCAN outbox USING INDEX"),
}


@pytest.mark.parametrize("name", list(HOT_QUERIES))
async def test_hot_queries_use_an_index_and_no_sort(
    store: SqliteStore, path: Path, name: str
) -> None:
    query, params, expected = HOT_QUERIES[name]

    steps = [str(row[-1]) for row in _query(path, "EXPLAIN QUERY PLAN " + query, *params)]

    assert steps
    for step in steps:
        assert step.startswith(expected), steps
        assert "USING" in step, steps  # an index, not the bare table
        assert "TEMP B-TREE" not in step, steps


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _modes(folder: Path) -> dict[str, int]:
    return {found.name: _mode(found) for found in folder.iterdir()}


def _open_to_others(folder: Path) -> None:
    for found in folder.iterdir():
        found.chmod(0o644)


def _empty_database(path: Path) -> None:
    path.parent.mkdir()
    path.touch()  # an empty file is an empty database


@pytest.fixture
def widest_umask() -> Iterator[None]:
    # The modes of what the store makes must not depend on the process's umask.
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("widest_umask")
async def test_a_new_database_and_its_folders_are_for_their_owner_only(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    path = shared / "data" / "intake.db"

    opened = await open_sqlite_store(f"sqlite:///{path}")
    try:
        await seed(opened)
        files = _modes(path.parent)
    finally:
        await opened.close()

    assert _mode(path.parent) == 0o700
    assert files == {
        "intake.db": 0o600,
        "intake.db-wal": 0o600,
        "intake.db-shm": 0o600,
        "intake.db.key": 0o600,  # the key that seals its secrets, made with it
    }
    assert _mode(shared) == 0o755  # a folder that was there is left as it was


@pytest.mark.usefixtures("widest_umask")
async def test_missing_parent_folders_are_made_for_their_owner_only(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "intake.db"

    opened = await open_sqlite_store(f"sqlite:///{deep}")
    await opened.close()

    assert [_mode(folder) for folder in (tmp_path / "a", tmp_path / "a" / "b")] == [0o700] * 2


@pytest.mark.usefixtures("widest_umask")
async def test_a_database_readable_by_others_is_made_the_owners_only_on_open(
    tmp_path: Path, path: Path, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    path.parent.mkdir(mode=0o755)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")  # keeps a -wal and -shm beside it while open
        _open_to_others(path.parent)

        opened = await open_sqlite_store(url)
        try:
            files = _modes(path.parent)
        finally:
            await opened.close()

    tightened = {"intake.db": 0o600, "intake.db-wal": 0o600, "intake.db-shm": 0o600}
    assert files == {**tightened, "intake.db.key": 0o600}  # the key file is made 0600
    assert _mode(path.parent) == 0o755  # the operator's folder: not ours to change
    warned = [r for r in caplog.records if r.levelname == "WARNING" and "0600" in r.message]
    assert sorted(getattr(r, "file", "") for r in warned) == sorted(tightened)


async def test_opening_an_existing_database_makes_nothing_when_there_is_none(
    tmp_path: Path, path: Path, url: str
) -> None:
    with pytest.raises(StoreNotPrepared, match=r"does not exist.*intake migrate"):
        await open_sqlite_store(url, create=False)

    assert _modes(tmp_path) == {}


async def test_opening_an_existing_database_refuses_one_never_migrated(
    path: Path, url: str
) -> None:
    _empty_database(path)

    with pytest.raises(StoreNotPrepared, match=r"not migrated.*intake migrate"):
        await open_sqlite_store(url, create=False)

    assert _query(path, "SELECT name FROM sqlite_master") == []


async def test_opening_an_existing_migrated_database_serves_it(
    store: SqliteStore, url: str
) -> None:
    await seed(store)

    again = await open_sqlite_store(url, create=False)
    try:
        assert await again.workspaces.list() == [workspace()]
        assert await again.migrate() == []
    finally:
        await again.close()
