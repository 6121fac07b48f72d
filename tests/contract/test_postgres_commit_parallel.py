"""PostgreSQL commits beside each other: the month's count spread over shards, exact all
the same across the ceiling, and the relay woken after commits rather than by them."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator

import psycopg
import pytest

from intake.adapters.postgres import PostgresStore, open_postgres_store
from intake.ports.submissions import CommitResult, Committed, QuotaReached
from tests.contract.builders import PERIOD, WORKSPACE_ID, form, plan, quota, seed, submission
from tests.contract.conftest import PostgresBackend
from tests.contract.old_schemas import postgres_before, postgres_from_on, postgres_workspace
from tests.contract.test_postgres import empty_url, query  # noqa: F401 - the fixture

pytestmark = [pytest.mark.anyio, pytest.mark.services]

# The rows a month's count is spread over: c_shards in repeatable/intake_commit.sql.
QUOTA_SHARDS = 32

SHARDS_MIGRATION = "0004_commit_in_parallel"  # counts made before it are kept


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def stores(backend: PostgresBackend) -> AsyncIterator[list[PostgresStore]]:
    """Two stores, as two workers of `intake serve`, each with its pool."""
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        await seed(one)
        yield [one, two]
    finally:
        await one.close()
        await two.close()


async def _commit_all(stores: list[PostgresStore], count: int, ceiling: int) -> Counter[str]:
    async def one(n: int) -> CommitResult:
        return await stores[n % len(stores)].submissions.commit(
            plan(submission(n), charge=quota(ceiling))
        )

    results = await asyncio.gather(*(one(n) for n in range(1, count + 1)))
    return Counter(type(result).__name__ for result in results)


@pytest.mark.parametrize("ceiling", [QUOTA_SHARDS * 3, QUOTA_SHARDS // 2])
async def test_concurrent_commits_across_the_ceiling_commit_exactly_the_ceiling(
    stores: list[PostgresStore], postgres_url: str, ceiling: int
) -> None:
    # Far from the ceiling the commits count beside each other on the shards; within a
    # shard count of it they count one at a time. Either way: exactly the ceiling.
    outcomes = await _commit_all(stores, ceiling + 40, ceiling)

    assert outcomes == {Committed.__name__: ceiling, QuotaReached.__name__: 40}
    assert await stores[0].workspaces.usage(WORKSPACE_ID, PERIOD) == ceiling
    rows = await query(postgres_url, "SELECT count FROM monthly_usage")
    assert rows == [{"count": ceiling}]
    stored = await query(postgres_url, "SELECT count(*) AS n FROM submissions")
    assert stored == [{"n": ceiling}]


async def test_counts_far_from_the_ceiling_spread_over_the_shards(
    stores: list[PostgresStore], postgres_url: str
) -> None:
    outcomes = await _commit_all(stores, 60, 1_000_000)

    assert outcomes == {Committed.__name__: 60}
    shards = await query(
        postgres_url,
        "SELECT shard, count FROM monthly_usage_shards WHERE workspace_id = %s",
        WORKSPACE_ID,
    )
    assert len(shards) == QUOTA_SHARDS  # made by the month's first commit
    assert sum(row["count"] for row in shards) == 60
    assert await stores[1].workspaces.usage(WORKSPACE_ID, PERIOD) == 60


async def test_a_burst_of_commits_wakes_the_relay_after_its_last_commit(
    stores: list[PostgresStore], postgres_url: str
) -> None:
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as relay:
        await relay.execute("LISTEN intake_outbox")
        store = stores[0]
        for n in range(1, 21):
            await store.submissions.commit(plan(submission(n)))
        last_commit = time.monotonic()

        arrivals = []
        async for _ in relay.notifies(timeout=1.0):
            arrivals.append(time.monotonic())

    assert 1 <= len(arrivals) <= 20
    assert arrivals[-1] >= last_commit


async def test_counts_made_before_the_shards_are_kept(empty_url: str) -> None:  # noqa: F811
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, SHARDS_MIGRATION)
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(
            "INSERT INTO monthly_usage (workspace_id, period, count) VALUES (%s, %s, 7)",
            (WORKSPACE_ID, PERIOD),
        )
    store = await open_postgres_store(empty_url)
    try:
        assert await store.migrate() == postgres_from_on(SHARDS_MIGRATION)
        assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 7
        await store.forms.add(form())

        assert await store.submissions.commit(plan(submission(1), charge=quota(8))) == Committed()
        assert await store.submissions.commit(plan(submission(2), charge=quota(8))) == (
            QuotaReached()
        )
        assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 8
    finally:
        await store.close()
