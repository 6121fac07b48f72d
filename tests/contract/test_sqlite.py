"""What only the SQLite store has: a file, URLs, migrations, locks, and other processes."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite import repositories as sql
from intake.adapters.sqlite.migrations import MIGRATIONS
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import RETENTION
from intake.ports.forms import FormContext
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


# Each hot query seeks with an index; listing the outbox walks its primary key in order.
HOT_QUERIES = {
    "resolve_public_key": (sql._RESOLVE_PUBLIC_KEY, ("pk",), "SEARCH"),
    "resolve_id": (sql._RESOLVE_ID, (FORM_ID,), "SEARCH"),
    "find_by_hash": (sql._FIND_API_KEY, (b"h",), "SEARCH"),
    "find_idempotency": (sql._FIND_IDEMPOTENCY, ("s", "k", "2026"), "SEARCH"),
    "usage": (sql._USAGE, (WORKSPACE_ID, PERIOD), "SEARCH"),
    "iterate": (sql._PAGE, (FORM_ID, "", 500), "SEARCH"),
    "iterate_by_status": (sql._PAGE_WITH_STATUS, (FORM_ID, "spam", "", 500), "SEARCH"),
    "outbox": (sql._OUTBOX, (100,), "SCAN outbox USING INDEX"),
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
