"""PostgreSQL's group commit (adapters/postgres/commit_batch.py): commits made together
go in one statement; two workers' batches lock in one order and never wait on each
other in a circle; the quota stays exact with batches of several commits of a month."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Sequence

import pytest
from psycopg.rows import DictRow

from intake.adapters.postgres import PostgresStore, commit_batch, mapping
from intake.adapters.postgres.database import Database
from intake.adapters.sql_rows import Params
from intake.ports.submissions import CommitResult, Committed
from tests.contract.builders import PERIOD, form, plan, quota, seed, submission
from tests.contract.conftest import PostgresBackend
from tests.contract.test_postgres import query

pytestmark = [pytest.mark.anyio, pytest.mark.services]

WORKSPACES = ("ws_1", "ws_2", "ws_3")


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def stores(backend: PostgresBackend) -> AsyncIterator[list[PostgresStore]]:
    """Two stores, as two workers of `intake serve`, each with its pool."""
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        await seed(one, *(form(f"frm_{w}", w, f"pk0{w}") for w in WORKSPACES))
        yield [one, two]
    finally:
        await one.close()
        await two.close()


def _database(store: PostgresStore) -> Database:
    return store._db


async def test_commits_made_together_go_in_one_statement(
    stores: list[PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    subs = [submission(n, form_id="frm_ws_1", workspace_id="ws_1") for n in range(1, 7)]
    statements: list[int] = []
    send = commit_batch.send

    async def counting(db: Database, items: Sequence[Params]) -> list[DictRow]:
        statements.append(len(items))
        return await send(db, items)

    monkeypatch.setattr(commit_batch, "send", counting)
    results = await asyncio.gather(
        *(stores[0].submissions.commit(plan(sub, charge=quota(1000, "ws_1"))) for sub in subs)
    )

    assert results == [Committed()] * 6
    assert statements == [6]


async def test_two_workers_batches_over_several_workspaces_do_not_deadlock(
    stores: list[PostgresStore],
) -> None:
    # Near the ceiling each workspace is counted exactly: a batch holds every quota row
    # of it until its end. Sent in opposite orders, the two batches would each hold a
    # workspace the other waits for, were they not put in one order.
    def params(n: int, workspace_id: str) -> Params:
        sub = submission(n, form_id=f"frm_{workspace_id}", workspace_id=workspace_id)
        return mapping.commit_params(plan(sub, charge=quota(100, workspace_id)))

    for round_ in range(5):
        base = round_ * 100
        forward = [params(base + i, w) for i, w in enumerate(WORKSPACES)]
        backward = [params(base + 50 + i, w) for i, w in enumerate(reversed(WORKSPACES))]

        async def send(db: Database, batch: list[Params]) -> list[str]:
            (chunk,) = commit_batch.chunks(batch)
            items = commit_batch.counted(batch[i] for i in chunk)
            assert all(item["quota_exact"] for item in items)
            return [row["outcome"] for row in await commit_batch.send(db, items)]

        answers = await asyncio.gather(
            send(_database(stores[0]), forward), send(_database(stores[1]), backward)
        )
        # Sent as they are, without the retry one by one that follows a deadlock.
        assert list(answers) == [["committed"] * 3] * 2


async def test_batches_of_two_workers_across_the_ceiling_commit_exactly_the_ceiling(
    stores: list[PostgresStore], postgres_url: str
) -> None:
    # Far enough from the ceiling to start counting beside each other with batches of
    # up to PER_WORKSPACE, then exactly: 2 workers, far more commits than the ceiling.
    ceiling = commit_batch.RESERVE + commit_batch.SHARDS * 3

    async def one(n: int) -> CommitResult:
        sub = submission(n, form_id="frm_ws_1", workspace_id="ws_1")
        return await stores[n % 2].submissions.commit(plan(sub, charge=quota(ceiling, "ws_1")))

    results = await asyncio.gather(*(one(n) for n in range(1, ceiling + 61)))

    outcomes = Counter(type(result).__name__ for result in results)
    assert outcomes == {"Committed": ceiling, "QuotaReached": 60}
    assert await stores[0].workspaces.usage("ws_1", PERIOD) == ceiling
    stored = await query(postgres_url, "SELECT count(*) AS n FROM submissions")
    assert stored == [{"n": ceiling}]
