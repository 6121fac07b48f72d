"""PostgreSQL triage under real concurrency: releases of one submission on several
connections at once queue exactly one event and charge the month once; releases beside
commits near the ceiling keep the commits exact; an erasure beside releases leaves no
event with data."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from intake.adapters.postgres import PostgresStore
from intake.domain.model import EventType, SubmissionStatus
from intake.domain.triage import deletion_event, release_event
from intake.ports.submissions import Committed
from intake.ports.triage import Erasure, Release
from tests.contract.builders import WORKSPACE_ID, plan, quota, seed, submission
from tests.contract.conftest import PostgresBackend
from tests.contract.test_triage import RELEASE_PERIOD, RELEASED_AT

pytestmark = [pytest.mark.anyio, pytest.mark.services]

ROUNDS = 25
AT_ONCE = 8


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def stores(backend: PostgresBackend) -> AsyncIterator[list[PostgresStore]]:
    """Two stores, as two processes, each with a pool of AT_ONCE connections."""
    one = await backend.open_postgres(min_size=AT_ONCE, max_size=AT_ONCE)
    two = await backend.open_postgres(min_size=AT_ONCE, max_size=AT_ONCE)
    try:
        await seed(one)
        yield [one, two]
    finally:
        await one.close()
        await two.close()


def _release(n: int, attempt: int) -> Release:
    sub = submission(n, status=SubmissionStatus.SPAM)
    event = release_event(f"evt_{n}_{attempt}", sub, None, RELEASED_AT)
    return Release(sub.submission_id, event, RELEASE_PERIOD)


async def test_concurrent_releases_of_one_submission_queue_one_event(
    stores: list[PostgresStore],
) -> None:
    for n in range(1, ROUNDS + 1):
        sub = submission(n, status=SubmissionStatus.SPAM)
        assert isinstance(await stores[0].submissions.commit(plan(sub)), Committed)

        results = await asyncio.gather(
            *(stores[i % 2].submissions.release(_release(n, i)) for i in range(AT_ONCE))
        )

        assert sum(1 for r in results if r is not None and r.changed) == 1, n
        assert all(
            r is not None and r.submission.status is SubmissionStatus.ACCEPTED for r in results
        )
        assert await stores[0].workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == n
    created = [
        row.event
        for row in await stores[0].submissions.outbox(10_000)
        if row.event.event_type is EventType.CREATED
    ]
    assert len(created) == ROUNDS


async def test_releases_beside_commits_leave_the_commits_exact_at_the_ceiling(
    stores: list[PostgresStore],
) -> None:
    # Releases count past the ceiling (the owner decided); commits beside them still
    # stop exactly where the ceiling is, counting the releases made before them.
    spam = [submission(1000 + n, status=SubmissionStatus.SPAM) for n in range(AT_ONCE)]
    for sub in spam:
        assert isinstance(await stores[0].submissions.commit(plan(sub)), Committed)
    ceiling = 40

    async def commit(n: int) -> bool:
        charge = quota(ceiling, period=RELEASE_PERIOD)
        result = await stores[n % 2].submissions.commit(plan(submission(n), charge=charge))
        return isinstance(result, Committed)

    async def release(i: int) -> bool:
        result = await stores[i % 2].submissions.release(_release(1000 + i, 0))
        return result is not None and result.changed

    outcomes = await asyncio.gather(
        *(commit(n) for n in range(1, 61)), *(release(i) for i in range(AT_ONCE))
    )

    commits, releases = outcomes[:60], outcomes[60:]
    assert all(releases)
    used = await stores[0].workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD)
    assert used == sum(commits) + AT_ONCE
    # No commit passed the ceiling: each saw at most ceiling - 1 before its own count.
    assert sum(commits) <= ceiling
    assert sum(commits) >= ceiling - AT_ONCE


async def test_an_erasure_beside_releases_leaves_no_event_with_data(
    stores: list[PostgresStore],
) -> None:
    for n in range(1, ROUNDS + 1):
        sub = submission(n, status=SubmissionStatus.SPAM)
        assert isinstance(await stores[0].submissions.commit(plan(sub)), Committed)
        erasure = Erasure(sub.submission_id, deletion_event(f"evt_del_{n}", sub, RELEASED_AT))

        results = await asyncio.gather(
            stores[1].submissions.erase(erasure),
            *(stores[i % 2].submissions.release(_release(n, i)) for i in range(AT_ONCE - 1)),
        )

        assert results[0] is not None
        assert await stores[0].submissions.get(sub.submission_id) is None
        for row in await stores[0].submissions.outbox(10_000):
            if row.event.submission_id == sub.submission_id:
                assert row.event.payload.get("data", {}) == {}, row.event.event_type
