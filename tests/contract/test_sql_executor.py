"""The executor the `sql` repositories are written over (adapters/sql/executor.py): the
same statements, rowcounts, rows and transactions on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters import sql_statements as sql
from intake.adapters.postgres import PostgresStore
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.sql.executor import Executor, Statements, Transaction
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

    async def steps(tx: Transaction) -> int:
        gone = "DELETE FROM workspaces WHERE workspace_id = ?"
        assert await tx.execute_many(gone, [("ws_a",), ("ws_missing",)]) == 1
        tx.discard()
        return await _count(tx)

    assert await executor.transaction(steps) == 0
    assert await _count(executor) == 1


async def test_a_transaction_commits_all_its_statements_and_answers_its_steps(
    executor: Executor,
) -> None:
    async def steps(tx: Transaction, workspace_id: str, *, name: str) -> str:
        await _add(tx, workspace_id)
        assert await tx.execute(_RENAME_ALL, {"name": name}) == 1
        row = await tx.fetch_one(sql.GET_WORKSPACE, (workspace_id,))
        assert row is not None
        return str(row["name"])

    assert await executor.transaction(steps, "ws_a", name="Renamed") == "Renamed"

    row = await executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
    assert row is not None
    assert executor.rows.workspace_from_row(row) == evolve(workspace("ws_a"), name="Renamed")


async def test_an_error_rolls_the_whole_transaction_back(executor: Executor) -> None:
    await _add(executor, "ws_a")

    async def failing(tx: Transaction) -> None:
        await _add(tx, "ws_b")
        await tx.execute(_RENAME_ALL, {"name": "Renamed"})
        raise LookupError

    with pytest.raises(LookupError):
        await executor.transaction(failing)

    assert await _count(executor) == 1
    row = await executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
    assert row is not None
    assert row["name"] == workspace("ws_a").name


async def test_a_discarded_transaction_rolls_back_without_an_error(executor: Executor) -> None:
    async def steps(tx: Transaction) -> None:
        await _add(tx, "ws_a")
        tx.discard()

    await executor.transaction(steps)

    assert await _count(executor) == 0


async def test_statements_sent_beside_a_transaction_are_not_part_of_it(
    executor: Executor,
) -> None:
    async def steps(tx: Transaction) -> None:
        await _add(tx, "ws_a")
        tx.discard()

    # Another caller's read, meanwhile: it waits for the transaction (SQLite's one
    # connection) or does not see it (another PostgreSQL connection).
    _, beside = await asyncio.gather(
        executor.transaction(steps), executor.fetch_one(sql.GET_WORKSPACE, ("ws_a",))
    )

    assert beside is None


async def test_transactions_take_turns(executor: Executor) -> None:
    """Two read-then-write transactions at once: neither loses the other's write, with
    the row lock PostgreSQL needs and SQLite's write lock."""
    await _add(executor, "ws_a")
    lock = " FOR UPDATE" if executor.locks_rows else ""
    read = f"SELECT monthly_limit FROM workspaces WHERE workspace_id = 'ws_a'{lock}"

    async def add_one(tx: Transaction) -> None:
        row = await tx.fetch_one(read)
        assert row is not None
        await tx.execute("UPDATE workspaces SET monthly_limit = ?", (row["monthly_limit"] + 1,))

    await asyncio.gather(*(executor.transaction(add_one) for _ in range(5)))

    (found,) = await _workspaces(executor)
    assert found.monthly_limit == (workspace("ws_a").monthly_limit or 0) + 5


async def _workspaces(ex: Executor) -> list[Workspace]:
    return [ex.rows.workspace_from_row(row) for row in await ex.fetch_all(sql.LIST_WORKSPACES)]


@pytest.mark.services
async def test_a_cancelled_transaction_rolls_back_on_postgresql(postgres_url: str) -> None:
    """PostgreSQL's steps run on the event loop: cancelled between two statements, the
    transaction is rolled back, and the executor goes on."""
    store = await PostgresBackend(postgres_url).open_postgres()
    assert isinstance(store, PostgresStore)
    executor = PostgresExecutor(store._db)
    started = asyncio.Event()

    async def waiting(tx: Transaction) -> None:
        await _add(tx, "ws_a")
        started.set()
        await asyncio.Event().wait()  # until cancelled

    try:
        task = asyncio.create_task(executor.transaction(waiting))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        assert await _count(executor) == 0
        await _add(executor, "ws_b")
        assert [w.workspace_id for w in await _workspaces(executor)] == ["ws_b"]
    finally:
        await store.close()


async def _sqlite_executor(tmp_path: Path) -> tuple[SqliteStore, SqliteExecutor]:
    store = await open_sqlite_store(f"sqlite:///{tmp_path / 'intake.db'}")
    assert isinstance(store, SqliteStore)
    return store, SqliteExecutor(store._worker)


async def test_a_transaction_cancelled_before_its_turn_never_runs_on_sqlite(
    tmp_path: Path,
) -> None:
    """SQLite's steps run on the worker thread, in one hop: a caller cancelled while they
    wait for the thread stops waiting, and they never run (steps begun run to their end,
    as any function on the thread)."""
    store, executor = await _sqlite_executor(tmp_path)
    gate = threading.Event()

    async def two(tx: Transaction) -> None:
        await _add(tx, "ws_a", "ws_b")

    try:
        held = asyncio.create_task(store._worker.run(lambda _conn: gate.wait(10)))
        task = asyncio.create_task(executor.transaction(two))
        await asyncio.sleep(0)  # both on the thread's queue, the transaction second
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.set()
        assert await held

        assert await _count(executor) == 0
        await _add(executor, "ws_c")
        assert await _count(executor) == 1
    finally:
        await store.close()


async def test_steps_that_await_anything_but_statements_are_refused_on_sqlite(
    tmp_path: Path,
) -> None:
    """They run on the worker thread, where nothing else can be waited for: refused, and
    what they sent is rolled back."""
    store, executor = await _sqlite_executor(tmp_path)

    async def waiting(tx: Transaction) -> None:
        await _add(tx, "ws_a")
        await asyncio.sleep(0)

    try:
        with pytest.raises(RuntimeError):
            await executor.transaction(waiting)
        assert await _count(executor) == 0
    finally:
        await store.close()
