"""The executor the `sql` repositories are written over (adapters/sql/executor.py): the
same statements, rowcounts, rows and transactions on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters import sql_statements as sql
from intake.adapters.postgres import PostgresStore
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.sql.executor import Executor, Statements
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite.executor import SqliteExecutor
from intake.domain.model import Workspace
from intake.ports.store import Store
from tests.contract.builders import workspace
from tests.contract.conftest import PostgresBackend

pytestmark = pytest.mark.anyio

_COUNT = "SELECT count(*) AS n FROM workspaces"
_RENAME_ALL = "UPDATE workspaces SET name = :name"


async def _sqlite(request: pytest.FixtureRequest) -> tuple[Store, Executor]:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    store = await open_sqlite_store(f"sqlite:///{tmp_path / 'intake.db'}")
    assert isinstance(store, SqliteStore)
    return store, SqliteExecutor(store._worker)


async def _postgres(request: pytest.FixtureRequest) -> tuple[Store, Executor]:
    store = await PostgresBackend(request.getfixturevalue("postgres_url")).open_postgres()
    assert isinstance(store, PostgresStore)
    return store, PostgresExecutor(store._db)


@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)],
)
async def executor(request: pytest.FixtureRequest) -> AsyncIterator[Executor]:
    store, opened = await (_sqlite if request.param == "sqlite" else _postgres)(request)
    try:
        yield opened
    finally:
        await store.close()


async def _add(ex: Statements, *names: str) -> None:
    for name in names:
        await ex.execute(sql.INSERT_WORKSPACE, ex.rows.workspace_params(workspace(name)))


async def _count(ex: Statements) -> int:
    row = await ex.fetch_one(_COUNT)
    assert row is not None
    return int(row["n"])


async def test_a_row_goes_in_and_comes_back_as_the_same_object(executor: Executor) -> None:
    await _add(executor, "ws_1")

    row = await executor.fetch_one(sql.GET_WORKSPACE, ("ws_1",))

    assert row is not None
    assert executor.rows.workspace_from_row(row) == workspace("ws_1")


async def test_no_row_is_none_and_no_rows_are_empty(executor: Executor) -> None:
    assert await executor.fetch_one(sql.GET_WORKSPACE, ("ws_missing",)) is None
    assert list(await executor.fetch_all(sql.LIST_WORKSPACES)) == []


async def test_every_row_comes_in_the_statements_order(executor: Executor) -> None:
    await _add(executor, "ws_c", "ws_a", "ws_b")

    rows = await executor.fetch_all(sql.LIST_WORKSPACES)

    assert [row["workspace_id"] for row in rows] == ["ws_a", "ws_b", "ws_c"]


async def test_execute_answers_how_many_rows_it_changed(executor: Executor) -> None:
    await _add(executor, "ws_a", "ws_b")

    assert await executor.execute(_RENAME_ALL, {"name": "Renamed"}) == 2
    gone = "DELETE FROM workspaces WHERE workspace_id = ?"
    assert await executor.execute(gone, ("ws_missing",)) == 0
    assert await executor.execute(gone, ("ws_a",)) == 1


async def test_execute_many_runs_the_statement_once_per_set_and_sums_the_rows(
    executor: Executor,
) -> None:
    await _add(executor, "ws_a", "ws_b", "ws_c")
    rename = "UPDATE workspaces SET name = :name WHERE workspace_id = :id"
    batch = ({"id": f"ws_{x}", "name": f"Renamed {x}"} for x in "abz")  # a generator

    assert await executor.execute_many(rename, batch) == 2
    assert await executor.execute_many(rename, []) == 0
    names = {w.workspace_id: w.name for w in await _workspaces(executor)}
    assert names == {"ws_a": "Renamed a", "ws_b": "Renamed b", "ws_c": workspace("ws_c").name}


async def test_execute_many_in_a_transaction_is_part_of_it(executor: Executor) -> None:
    await _add(executor, "ws_a")
    async with executor.transaction() as tx:
        gone = "DELETE FROM workspaces WHERE workspace_id = ?"
        assert await tx.execute_many(gone, [("ws_a",), ("ws_missing",)]) == 1
        assert await _count(tx) == 0
        tx.discard()

    assert await _count(executor) == 1


async def test_a_transaction_commits_all_its_statements_at_its_end(executor: Executor) -> None:
    async with executor.transaction() as tx:
        await _add(tx, "ws_a")
        assert await tx.execute(_RENAME_ALL, {"name": "Renamed"}) == 1
        row = await tx.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
        assert row is not None
        assert row["name"] == "Renamed"

    row = await executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
    assert row is not None
    assert executor.rows.workspace_from_row(row) == evolve(workspace("ws_a"), name="Renamed")


async def test_an_error_rolls_the_whole_transaction_back(executor: Executor) -> None:
    await _add(executor, "ws_a")

    async def failing() -> None:
        async with executor.transaction() as tx:
            await _add(tx, "ws_b")
            await tx.execute(_RENAME_ALL, {"name": "Renamed"})
            raise LookupError

    with pytest.raises(LookupError):
        await failing()

    assert await _count(executor) == 1
    row = await executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
    assert row is not None
    assert row["name"] == workspace("ws_a").name


async def test_a_discarded_transaction_rolls_back_without_an_error(executor: Executor) -> None:
    async with executor.transaction() as tx:
        await _add(tx, "ws_a")
        tx.discard()

    assert await _count(executor) == 0


async def test_statements_sent_beside_a_transaction_are_not_part_of_it(
    executor: Executor,
) -> None:
    async with executor.transaction() as tx:
        await _add(tx, "ws_a")
        # Another caller's read, meanwhile: it waits for the transaction (SQLite's one
        # connection) or does not see it (another PostgreSQL connection).
        beside = asyncio.create_task(executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",)))
        await asyncio.sleep(0.05)
        tx.discard()

    assert await beside is None


async def test_a_cancelled_transaction_rolls_back_and_the_executor_goes_on(
    executor: Executor,
) -> None:
    started = asyncio.Event()

    async def body() -> None:
        async with executor.transaction() as tx:
            await _add(tx, "ws_a")
            started.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(body())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await _count(executor) == 0
    await _add(executor, "ws_b")
    assert [w.workspace_id for w in await _workspaces(executor)] == ["ws_b"]


async def test_transactions_take_turns(executor: Executor) -> None:
    """Two read-then-write transactions at once: neither loses the other's write, with
    the row lock PostgreSQL needs and SQLite's write lock."""
    await _add(executor, "ws_a")
    lock = " FOR UPDATE" if executor.locks_rows else ""
    read = f"SELECT monthly_limit FROM workspaces WHERE workspace_id = 'ws_a'{lock}"

    async def add_one() -> None:
        async with executor.transaction() as tx:
            row = await tx.fetch_one(read)
            assert row is not None
            await asyncio.sleep(0.01)
            await tx.execute("UPDATE workspaces SET monthly_limit = ?", (row["monthly_limit"] + 1,))

    await asyncio.gather(*(add_one() for _ in range(5)))

    (found,) = await _workspaces(executor)
    assert found.monthly_limit == (workspace("ws_a").monthly_limit or 0) + 5


async def _workspaces(ex: Executor) -> list[Workspace]:
    return [ex.rows.workspace_from_row(row) for row in await ex.fetch_all(sql.LIST_WORKSPACES)]


async def test_a_statement_sent_beside_its_own_transaction_is_refused(tmp_path: Path) -> None:
    """On SQLite it would wait for the transaction it is part of to end, for ever."""
    store = await open_sqlite_store(f"sqlite:///{tmp_path / 'intake.db'}")
    assert isinstance(store, SqliteStore)
    executor = SqliteExecutor(store._worker)
    try:
        async with executor.transaction() as tx:
            await _add(tx, "ws_a")
            with pytest.raises(RuntimeError):
                await executor.fetch_one(_COUNT)
        assert await _count(executor) == 1
    finally:
        await store.close()
